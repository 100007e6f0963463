"""How the sandbox's code process is confined: the registry of confinements.

A confinement turns "run this interpreter command" into the command that runs it confined, says
whether it can run on this machine (and, if not, how to fix that), and names the protections its
code process must verify about itself before any agent-written code runs
(:attr:`Confinement.required`). The test process (:mod:`ablation.evaluate.sandbox_harness`)
starts the command the confinement built; the code process's self-check
(:mod:`ablation.evaluate.sandbox_runner`) reports what held, and a run whose required protections
did not all hold is an error, never a verdict.

Two confinements are registered in :data:`CONFINEMENTS`:

* ``"bubblewrap"`` (the default): `bubblewrap <https://github.com/containers/bubblewrap>`_
  (``bwrap``, the sandbox of Flatpak), found on ``PATH``. New user, PID, network, IPC, UTS, mount
  and cgroup namespaces; an unprivileged uid (65534) with no capabilities and ``no_new_privs``;
  a new session; death with its parent; a root holding only read-only binds of ``/usr``, the
  ``/bin``, ``/sbin`` and ``/lib*`` links or directories, and the interpreter's prefixes (resolved
  here, in the parent, from ``sys.executable``'s symlink chain, ``sys.prefix``,
  ``sys.base_prefix`` and the exec prefixes, so a virtualenv anywhere works); a fresh ``/proc``
  (read-only, with the usual sensitive entries masked, because ``bwrap`` started by root maps the
  sandbox's uid to host uid 0, for which ``/proc/sys`` would otherwise be writable); a minimal
  read-only ``/dev``; a size-capped ``tmpfs`` at ``/tmp`` as the only writable place (the disk
  cap, gone with the namespace); and the seccomp filter of :mod:`ablation.evaluate.seccomp`.
* ``"process"`` (opt-in, weaker): the code process runs directly, in a scratch directory on the
  host, with only resource limits, a subreaper and the plain-data wire. It has the user's file
  access and network. A report names it in its provenance and in every trial's note.

A new backend (a container runtime, say) is one class with the three members of
:class:`Confinement` and one line in :data:`CONFINEMENTS`.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from ablation.evaluate.sandbox_outcome import START_LIMIT_S
from ablation.evaluate.seccomp import SeccompUnavailable, sandbox_filter

__all__ = [
    "CONFINEMENTS",
    "DEFAULT_CONFINEMENT",
    "SELF_CHECKS",
    "Bubblewrap",
    "Confinement",
    "Launch",
    "ProcessOnly",
    "current_confinement",
    "hidden_paths",
    "interpreter_paths",
    "use_confinement",
]

#: The protections the code process can verify about itself (see the runner's self-check).
SELF_CHECKS = (
    "user_namespace", "pid_namespace", "network_namespace", "unprivileged_uid",
    "no_capabilities", "no_new_privs", "seccomp", "read_only_fs", "private_root",
    "scratch_capped",
)  # fmt: skip

#: Where the code's writable scratch directory is, inside a bubblewrap sandbox.
SANDBOX_SCRATCH = "/tmp"
#: The uid and gid the code runs as inside a bubblewrap sandbox ("nobody").
SANDBOX_UID = 65534

#: Files of a fresh procfs hidden behind ``/dev/null`` and directories behind an empty read-only
#: tmpfs (the masked paths of the OCI runtime specification's defaults).
_MASKED_PROC_FILES = (
    "kcore", "keys", "key-users", "kallsyms", "latency_stats", "timer_list", "timer_stats",
    "sched_debug", "sysrq-trigger", "kpagecount", "kpageflags", "kpagecgroup", "kmsg",
)  # fmt: skip
_MASKED_PROC_DIRS = ("acpi", "scsi", "irq", "bus", "fs", "driver")


@dataclass(frozen=True)
class Launch:
    """How the test process starts the code process.

    Attributes:
        prefix: Words put before the interpreter command (empty: run it directly).
        seccomp: A BPF program to hand over on a file descriptor; the word ``{seccomp_fd}`` in
            ``prefix`` is replaced by that descriptor's number.
        scratch: The code's working directory and ``HOME`` as the code sees it; ``None``: a
            fresh host directory made for the run (the ``process`` confinement).
        hidden: Host paths the code must not see (checked by the self-check).
        required: Self-check names that must all hold before the code runs.
        pid_namespace: The code process is pid 1 of its own PID namespace (its worker, pid 2,
            answers the tests).
        name: The confinement's registry name.
    """

    name: str
    pid_namespace: bool = False
    prefix: tuple[str, ...] = ()
    seccomp: bytes | None = None
    scratch: str | None = None
    hidden: tuple[str, ...] = ()
    required: frozenset[str] = field(default_factory=frozenset)


class Confinement(Protocol):
    """One way to confine the code process (see the module docstring)."""

    name: str
    required: frozenset[str]

    def unavailable(self) -> str | None:
        """Why it cannot run here, with the fix, or ``None`` when it can."""

    def launch(self, disk_bytes: int) -> Launch:
        """The :class:`Launch` for one run whose scratch may hold ``disk_bytes`` bytes."""


def _chain(path: str) -> list[str]:
    """``path`` and every path its symlinks lead through, to the real file."""
    seen = [os.path.abspath(path)]
    current = seen[0]
    for _ in range(40):
        if not os.path.islink(current):
            break
        current = os.path.normpath(os.path.join(os.path.dirname(current), os.readlink(current)))
        seen.append(current)
    return seen


def interpreter_paths() -> tuple[str, ...]:
    """The host directories the interpreter needs, outside ``/usr``, outermost only.

    From ``sys.executable``'s symlink chain (each link's directory), ``sys.prefix``,
    ``sys.base_prefix``, ``sys.exec_prefix`` and ``sys.base_exec_prefix``, each as given and as
    its real path. The root directory itself is never returned.
    """
    wanted: set[str] = set()
    for link in _chain(sys.executable):
        wanted.add(os.path.dirname(link))
        wanted.add(os.path.dirname(os.path.realpath(link)))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        wanted.update((os.path.abspath(prefix), os.path.realpath(prefix)))
    usr = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
    kept = sorted(
        p for p in wanted
        if p != "/" and os.path.isdir(p) and not any(p == u or p.startswith(u + "/") for u in usr)
    )  # fmt: skip
    outer: list[str] = []
    for path in kept:
        if not any(path.startswith(o + "/") for o in outer):
            outer.append(path)
    return tuple(outer)


def _system_dirs() -> list[str]:
    words: list[str] = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            words += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            words += ["--ro-bind", path, path]
    return words


def _proc() -> list[str]:
    words = ["--proc", "/proc"]
    for name in _MASKED_PROC_FILES:
        if os.path.exists(f"/proc/{name}"):  # the sandbox's procfs has the host kernel's entries
            words += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in _MASKED_PROC_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            words += ["--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return [*words, "--remount-ro", "/proc"]


class Bubblewrap:
    """The ``bwrap`` confinement (the default; see the module docstring)."""

    name = "bubblewrap"
    required = frozenset(SELF_CHECKS)

    def unavailable(self) -> str | None:
        return _bubblewrap_problem(shutil.which("bwrap"))

    def launch(self, disk_bytes: int) -> Launch:
        bwrap = shutil.which("bwrap") or "bwrap"
        paths = interpreter_paths()
        binds = [w for p in paths for w in ("--ro-bind", p, p)]
        prefix = [
            bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID), "--hostname", "sandbox", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--as-pid-1", "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
            "--setenv", "PYTHONHASHSEED", "0", "--setenv", "HOME", SANDBOX_SCRATCH,
            *_system_dirs(), "--dev", "/dev", *_proc(),
            "--size", str(disk_bytes), "--perms", "0700", "--tmpfs", SANDBOX_SCRATCH,
            *binds, "--remount-ro", "/dev", "--remount-ro", "/",
            "--chdir", SANDBOX_SCRATCH, "--seccomp", "{seccomp_fd}", "--",
        ]  # fmt: skip
        return Launch(
            name=self.name,
            pid_namespace=True,
            prefix=tuple(prefix),
            seccomp=sandbox_filter(),
            scratch=SANDBOX_SCRATCH,
            hidden=hidden_paths(paths),
            required=self.required,
        )


#: Where the bubblewrap sandbox itself puts something (besides the interpreter's prefixes).
_SANDBOX_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/dev", "/proc",
                  SANDBOX_SCRATCH)  # fmt: skip


def _within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or below it (every absolute path is below ``/``)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def hidden_paths(bound: tuple[str, ...]) -> tuple[str, ...]:
    """The host paths a bubblewrap sandbox binding ``bound`` must not show its code.

    ``/etc/passwd``, the working directory and the home directory, each as given and resolved,
    when it exists. A path that the sandbox holds itself, or that lies below or above a path it
    holds (``/`` above all of them, ``/tmp`` for its scratch, ``/dev``), is left out: there its
    absence cannot be checked, and checking it would fail every run.
    """
    inside = (*bound, *_SANDBOX_PATHS)
    found: list[str] = []
    for given in ("/etc/passwd", os.getcwd(), os.path.expanduser("~")):
        if not given:
            continue
        for path in (os.path.abspath(given), os.path.realpath(given)):
            if os.path.exists(path) and not any(
                _within(path, q) or _within(q, path) for q in inside
            ):
                found.append(path)
    return tuple(dict.fromkeys(found))


#: How long the availability probe may take: a sandbox's own start-up limit by default.
PROBE_LIMIT_S = START_LIMIT_S
#: One availability probe at a time: trials that start together wait for the first one's
#: answer (cached per path) instead of each launching a probe of its own.
_PROBING = threading.Lock()


def _bubblewrap_problem(bwrap: str | None) -> str | None:
    """Why bubblewrap at ``bwrap`` cannot confine code here (probed once per path), or ``None``."""
    with _PROBING:
        return _probe_bubblewrap(bwrap)


@functools.cache
def _probe_bubblewrap(bwrap: str | None) -> str | None:
    """:func:`_bubblewrap_problem` without the lock: one run of ``bwrap`` that must exit 0 within
    the sandbox's start-up limit (:data:`PROBE_LIMIT_S`)."""
    fix = (
        "install bubblewrap (apt-get/dnf install bubblewrap) where user namespaces are allowed, "
        "or use the weaker --sandbox process"
    )
    if bwrap is None:
        return f"bubblewrap (bwrap) is not on PATH: {fix}"
    try:
        sandbox_filter()
    except SeccompUnavailable as exc:
        return str(exc)
    probe = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID),
             "--gid", str(SANDBOX_UID), "--die-with-parent", "--as-pid-1", *_system_dirs(),
             "--proc", "/proc", "--", "/bin/sh", "-c", "exit 0"]  # fmt: skip
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_LIMIT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({bwrap}) could not start: {type(exc).__name__}: {exc}; {fix}"
    if done.returncode != 0:
        said = " ".join(done.stderr.decode("utf-8", "replace").split())[:300]
        if not said:  # nothing on stderr: say how it ended
            code = done.returncode
            said = f"killed by {_signal_name(-code)}" if code < 0 else f"exit status {code}, nothing on stderr"
        return f"bubblewrap ({bwrap}) cannot create its namespaces here ({said}); {fix}"
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class ProcessOnly:
    """The ``process`` confinement: resource limits and a subreaper only (opt-in, weaker)."""

    name = "process"
    required: frozenset[str] = frozenset()

    def unavailable(self) -> str | None:
        return None

    def launch(self, disk_bytes: int) -> Launch:
        return Launch(name=self.name, hidden=("/etc/passwd",))


#: Every confinement by name; ``code_tests(confinement=...)`` and ``--sandbox`` take these names.
CONFINEMENTS: dict[str, Confinement] = {c.name: c for c in (Bubblewrap(), ProcessOnly())}
#: The confinement used when neither the verifier nor the campaign chooses one.
DEFAULT_CONFINEMENT = "bubblewrap"

_CAMPAIGN_CONFINEMENT: ContextVar[str | None] = ContextVar("ablation_confinement", default=None)


def use_confinement(name: str | None) -> None:
    """Make ``name`` the confinement of ``code_tests`` verifiers that do not choose one.

    The engine calls this in each trial's context from ``CampaignConfig.sandbox`` (``ablation
    run --sandbox``); it holds for that context and the worker threads it starts.

    Raises:
        ValueError: ``name`` is not in :data:`CONFINEMENTS`.
    """
    if name is not None and name not in CONFINEMENTS:
        raise ValueError(f"unknown confinement {name!r}; choose one of {sorted(CONFINEMENTS)}")
    _CAMPAIGN_CONFINEMENT.set(name)


def current_confinement() -> str:
    """The campaign's confinement in this context, else :data:`DEFAULT_CONFINEMENT`."""
    return _CAMPAIGN_CONFINEMENT.get() or DEFAULT_CONFINEMENT
