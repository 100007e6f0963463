"""Run untrusted Python code and its unit tests in separate, confined, resource-limited processes.

This is the only place where code produced by an agent is executed. :func:`run_python_tests`
starts two processes:

* the **test process** (:mod:`ablation.evaluate.sandbox_harness`), ``sys.executable -I -S -B`` in
  a new session with a minimal environment (no installed packages, this framework included). It
  dies with its parent (``PR_SET_PDEATHSIG``), runs under its own address-space limit and ends
  the run itself at the wall-time limit. It receives code, tests and a random nonce through a
  pipe, becomes a child subreaper, starts the code process confined as the chosen
  :mod:`~ablation.evaluate.sandbox_confinement` says (bubblewrap by default), checks the
  confinement's self-check, runs the tests and writes one result line carrying the nonce to a
  stdout the code process cannot reach;
* the **code process** (:mod:`ablation.evaluate.sandbox_runner`), started by the test process
  with the code only (never the tests or the nonce), under ``RLIMIT_AS``, ``RLIMIT_CPU``,
  ``RLIMIT_FSIZE``, ``RLIMIT_NPROC`` and ``RLIMIT_CORE``. Before it reads the code it verifies
  what confines it and reports that (:attr:`SandboxResult.isolation`); the tests reach its
  functions through proxies; values cross as plain data in tagged JSON
  (:mod:`ablation.evaluate.sandbox_wire`).

So the verdict cannot be forged from the code: walking frames finds no harness, an always-equal
object reaches the tests as a handle that refuses comparison, a printed fake result lacks the
nonce, and the tests call the real builtins (a name of the code that shadows one is not given
to them). A run that could not judge the code (the sandbox is unavailable, did not start, or
its self-check failed; the test process died without a result) has one of the
:data:`ERROR_KINDS`: :class:`~ablation.evaluate.code_tests.CodeTestsVerifier` makes it the
trial's error, never a verdict. The parent also enforces the wall-time limit and counts the
run's processes every 50 ms (a fork bomb is killed above ``max_processes``, also for root,
whom ``RLIMIT_NPROC`` does not bind). What holds where is in ``docs/SECURITY.md``. Linux only
(the process checks read ``/proc``).
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO

from ablation.evaluate.sandbox_confinement import CONFINEMENTS, Launch, current_confinement
from ablation.evaluate.sandbox_harness import HARNESS
from ablation.evaluate.sandbox_process import (
    KILL_GRACE_S,
    descendants,
    feed,
    kill_all,
    live_processes,
    supervise,
)
from ablation.evaluate.sandbox_runner import RUNNER

__all__ = ["ERROR_KINDS", "SandboxLimits", "SandboxResult", "run_python_tests"]

#: Outcomes that mean the code could not be judged (an error of the check, never a verdict).
ERROR_KINDS = frozenset({"unavailable", "sandbox_start", "sandbox_check", "harness_error"})
#: The test process's address space beyond the code's limit (its interpreter and the replies).
_HARNESS_HEADROOM_MB = 512
#: The test process ends the run itself this long after the wall-time limit, if the parent did not.
_INNER_GRACE_S = 1.0

_TAIL_CHARS = 2000
_MIB = 1024 * 1024
#: Scratch directories of the ``process`` confinement: ``ablation-sandbox-<owner pid>-<random>``.
_SCRATCH_PREFIX = "ablation-sandbox-"
_SCRATCH_NAME = re.compile(rf"{_SCRATCH_PREFIX}(\d+)-")


def _remove_tree(path: str) -> None:
    """Delete ``path`` and everything in it, however deep (``rm -rf``, never Python recursion)."""
    rm = shutil.which("rm") or shutil.which("rm", path=os.defpath) or "rm"
    subprocess.run(
        [rm, "-rf", "--one-file-system", "--", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_scratch(folder: str | None = None) -> list[str]:
    """Delete scratch directories whose owning process is gone (a killed campaign's).

    Args:
        folder: Where to look; the temporary directory when ``None``.

    Returns:
        The paths removed.
    """
    folder = folder or tempfile.gettempdir()
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        match = _SCRATCH_NAME.match(entry)
        if match and not _alive(int(match.group(1))):
            path = os.path.join(folder, entry)
            _remove_tree(path)
            removed.append(path)
    return removed


def make_scratch() -> str:
    """A fresh scratch directory for one ``process``-confined run (stale ones swept first)."""
    remove_stale_scratch()
    return tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-")


def remove_scratch(path: str) -> None:
    """Delete a run's scratch directory, however deep the tree the code left in it."""
    _remove_tree(path)


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandbox run.

    Attributes:
        time_limit_s: Wall-clock limit; the process group is killed when it is reached.
        memory_mb: Address-space limit (``RLIMIT_AS``) in MiB; a larger allocation raises
            ``MemoryError`` in the child.
        cpu_s: CPU-time limit (``RLIMIT_CPU``) in whole seconds; ``None`` means
            ``ceil(time_limit_s) + 1``.
        max_output_mb: Largest file the code may write (``RLIMIT_FSIZE``), stdout and stderr
            included, and largest value it may send to the tests, in MiB.
        max_disk_mb: Total size of the code's scratch directory in MiB (the bubblewrap
            confinement's ``tmpfs``; the ``process`` confinement writes to the host's disk and
            has only the per-file limit).
        max_processes: Most processes the child's process group may hold; the parent counts
            them every 50 ms and kills the group above it (this works for root too). Also the
            ``RLIMIT_NPROC`` headroom (threads count) over what the user already runs, which the
            kernel enforces for users other than root.
    """

    time_limit_s: float = 10.0
    memory_mb: int = 512
    cpu_s: int | None = None
    max_output_mb: int = 16
    max_processes: int = 32
    max_disk_mb: int = 64

    def __post_init__(self) -> None:
        if not self.time_limit_s > 0:
            raise ValueError(f"time_limit_s must be > 0, got {self.time_limit_s!r}")
        for field in ("memory_mb", "max_output_mb", "max_processes", "max_disk_mb"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field} must be >= 1, got {getattr(self, field)!r}")
        if self.cpu_s is not None and self.cpu_s < 1:
            raise ValueError(f"cpu_s must be >= 1 or None, got {self.cpu_s!r}")

    @property
    def effective_cpu_s(self) -> int:
        """The CPU limit actually applied, in seconds."""
        return self.cpu_s if self.cpu_s is not None else math.ceil(self.time_limit_s) + 1


@dataclass(frozen=True)
class SandboxResult:
    """What happened in one sandbox run.

    Attributes:
        passed: True only when the harness reported, with the run's nonce, that every test ran
            and passed, exited normally and left no process behind.
        kind: Machine-readable outcome. Verdicts on the code: ``"passed"``, ``"failed"``,
            ``"syntax_error"``, ``"crash"``, ``"exit"``, ``"memory"``, ``"timeout"``,
            ``"cpu_limit"``, ``"output_limit"``, ``"process_limit"``, ``"no_result"``,
            ``"forged"``, ``"leaked_processes"``, ``"no_tests"`` or ``"bad_output"``. The code
            could not be judged (:data:`ERROR_KINDS`, :attr:`error`): ``"unavailable"`` (the
            confinement cannot run here), ``"sandbox_start"``, ``"sandbox_check"`` (a
            protection the confinement requires did not hold) or ``"harness_error"`` (the test
            process ended without a result).
        reason: One human-readable sentence explaining ``kind``.
        stdout_tail: Last characters of the child's stdout (result line removed).
        stderr_tail: Last characters of the child's stderr.
        duration_s: Wall time from start to the harness's exit (or the kill).
        tests_run: Tests started (the module-level code counts as one test; when it fails, the
            ``test_*`` functions are not run).
        tests_passed: Tests that passed.
        returncode: The code process's exit status when it ended before the tests completed,
            else the test process's (negative: killed by that signal); ``None`` if no process
            was started.
        process_group: Id of the test process's group (equal to its pid), for audits.
        isolation: The protections the code process verified about itself before the code
            ran (:data:`~ablation.evaluate.sandbox_confinement.SELF_CHECKS`), plus
            ``subreaper`` when the test process is one (see ``docs/SECURITY.md``).
        confinement: The confinement that ran the code (``"bubblewrap"`` or ``"process"``).
    """

    passed: bool
    kind: str
    reason: str
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0
    tests_run: int = 0
    tests_passed: int = 0
    returncode: int | None = None
    process_group: int | None = None
    isolation: tuple[str, ...] = ()
    confinement: str = ""

    @property
    def error(self) -> bool:
        """True when the code could not be judged (``kind`` in :data:`ERROR_KINDS`)."""
        return self.kind in ERROR_KINDS


def _tail(text: str) -> str:
    return text[-_TAIL_CHARS:]


def _read(fh: IO[bytes]) -> str:
    fh.seek(0)
    return fh.read().decode("utf-8", errors="replace")


def run_python_tests(
    code: str, tests: str, limits: SandboxLimits | None = None, *, confinement: str | None = None
) -> SandboxResult:
    """Run ``code`` and then ``tests`` in a fresh sandbox.

    The test format: ``tests`` is Python source run as its own module, which sees the code's
    public names (``from solution import *``, as it were), except a name that would shadow a
    builtin or one the tests bind themselves; every name is also an attribute of ``solution``.
    Its module-level ``assert`` statements count as one test; every function named ``test_*``
    that it defines (sync or ``async``) is then called with no arguments and counts as one test.
    The code runs with ``__name__ == "solution"``, so an ``if __name__ == "__main__":`` block in
    it does not run. A run with no test at all fails.

    Args:
        code: Python source produced by an agent (untrusted).
        tests: Python source of the unit tests (trusted task data).
        limits: Resource limits; the defaults of :class:`SandboxLimits` when ``None``.
        confinement: A name in :data:`~ablation.evaluate.sandbox_confinement.CONFINEMENTS`;
            ``None``: the campaign's choice, else ``"bubblewrap"``.

    Returns:
        The :class:`SandboxResult`; every outcome is reported there, never raised, including
        the ones where the code could not be judged (:attr:`SandboxResult.error`).

    Raises:
        ValueError: if ``tests`` does not compile (a defect of the task, not of the code), or
            ``confinement`` is not a known name.
    """
    limits = limits or SandboxLimits()
    _check_can_run(tests)
    name = confinement or current_confinement()
    chosen = CONFINEMENTS.get(name)
    if chosen is None:
        raise ValueError(f"unknown confinement {name!r}; choose one of {sorted(CONFINEMENTS)}")
    problem = chosen.unavailable()
    if problem is not None:
        return SandboxResult(False, "unavailable", problem, confinement=name)
    try:
        launch = chosen.launch(limits.max_disk_mb * _MIB)
        workdir = None if launch.scratch else make_scratch()
    except OSError as exc:
        reason = f"could not prepare the sandbox: {type(exc).__name__}: {exc}"
        return SandboxResult(False, "sandbox_start", reason, confinement=name)
    nonce = secrets.token_hex(16)
    message = {"nonce": nonce, "code": code, "tests": tests, "runner": RUNNER}
    payload = json.dumps(message).encode("utf-8", "surrogatepass")
    try:
        finished = _run_harness(payload, workdir, limits, launch)
    finally:
        if workdir is not None:
            remove_scratch(workdir)
    return _result(finished, nonce, limits, name)


@dataclass(frozen=True)
class _Finished:
    """What the parent observed of one finished child, before its stdout is interpreted."""

    state: str  # what supervise() returned: "exited", "timeout" or "process_limit"
    returncode: int
    process_group: int
    duration_s: float
    leaked: int  # processes still alive after a normal exit
    verdict: str  # the test process's own stdout: where the result line is
    stdout: str  # the code process's stdout
    stderr: str
    output_full: bool  # stdout or stderr reached the file size limit


def _check_can_run(tests: str) -> None:
    """Raise before anything starts when the tests do not compile or there is no interpreter."""
    try:
        compile(tests, "tests.py", "exec", dont_inherit=True)  # compiled only, never executed here
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"the tests do not compile: {type(exc).__name__}: {exc}") from None
    if not sys.executable:
        raise OSError("cannot locate the Python interpreter (sys.executable is empty)")


def _harness_config(
    read_fd: int, code_out: int, limits: SandboxLimits, launch: Launch, marker: tuple[str, str]
) -> dict[str, object]:
    """The test process's settings: its pipe, the code's stdout, the limits and the launch."""
    return {
        "fd": read_fd,
        "code_out": code_out,
        "parent": os.getpid(),
        "marker": list(marker),
        "memory_bytes": limits.memory_mb * _MIB,
        "harness_memory_bytes": (limits.memory_mb + _HARNESS_HEADROOM_MB) * _MIB,
        "cpu_s": limits.effective_cpu_s,
        "fsize_bytes": limits.max_output_mb * _MIB,
        "reply_bytes": limits.max_output_mb * _MIB,
        "disk_bytes": limits.max_disk_mb * _MIB,
        "max_processes": limits.max_processes,
        "wall_s": limits.time_limit_s + _INNER_GRACE_S,
        "launch": {
            "name": launch.name,
            "prefix": list(launch.prefix),
            "seccomp": None if launch.seccomp is None else launch.seccomp.hex(),
            "scratch": launch.scratch,
            "hidden": list(launch.hidden),
            "required": sorted(launch.required),
            "pid_namespace": launch.pid_namespace,
        },
    }


def _spawn(
    argv: list[str],
    out: IO[bytes],
    err: IO[bytes],
    workdir: str | None,
    fds: tuple[int, int],
    marker: tuple[str, str],
) -> subprocess.Popen[bytes]:
    """Start the harness in its own session with a minimal environment; close our ``fds[0]``."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "HOME": workdir or "/",
        marker[0]: marker[1],
    }
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=workdir or "/",
            env=env,
            pass_fds=fds,
            start_new_session=True,
        )
    finally:
        os.close(fds[0])


def _run_harness(
    payload: bytes, workdir: str | None, limits: SandboxLimits, launch: Launch
) -> _Finished:
    """Run the harness on ``payload`` under ``limits`` and ``launch``; leave no process behind."""
    marker = ("ABLATION_SANDBOX_RUN", secrets.token_hex(8))
    env_marker = f"{marker[0]}={marker[1]}".encode()
    read_fd, write_fd = os.pipe()
    proc: subprocess.Popen[bytes] | None = None
    feeder: threading.Thread | None = None
    try:
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as code_out,
            tempfile.TemporaryFile() as err,
        ):
            cfg = _harness_config(read_fd, code_out.fileno(), limits, launch, marker)
            argv = [sys.executable, "-I", "-S", "-B", "-c", HARNESS, json.dumps(cfg)]
            start = time.monotonic()
            fds = (read_fd, code_out.fileno())
            proc = _spawn(argv, out, err, workdir, fds, marker)
            feeder = threading.Thread(target=feed, args=(write_fd, payload), daemon=True)
            feeder.start()
            state = supervise(proc, start + limits.time_limit_s, limits.max_processes)
            duration = time.monotonic() - start
            leaked = len(_leftovers(proc.pid, env_marker)) if state == "exited" else 0
            kill_all(proc.pid, env_marker)
            proc.wait()
            feeder.join(timeout=KILL_GRACE_S)
            full = max(code_out.seek(0, 2), err.seek(0, 2)) >= limits.max_output_mb * _MIB
            texts = _read(out), _read(code_out), _read(err)
        return _Finished(state, proc.returncode, proc.pid, duration, leaked, *texts, full)
    finally:
        if feeder is None:
            os.close(write_fd)
        if proc is not None and proc.returncode is None:  # pragma: no cover - defensive
            kill_all(proc.pid, env_marker)
            proc.wait()


def _leftovers(root: int, marker: bytes) -> set[int]:
    """Processes of the run still alive after the test process exited (it should have swept)."""
    return set(descendants(root)) | set(live_processes(root, marker))


def _result(
    finished: _Finished, nonce: str, limits: SandboxLimits, confinement: str
) -> SandboxResult:
    """Interpret the child's output and exit into the :class:`SandboxResult` of the run."""
    reports, rest = _parse_reports(finished.verdict, nonce)
    rest = "\n".join(part for part in (rest.strip("\n"), finished.stdout) if part)
    passed, kind, reason, run, ok = _verdict(
        finished.state,
        finished.returncode,
        finished.leaked,
        finished.output_full,
        reports,
        limits,
    )
    if kind in ("sandbox_start", "harness_error") and finished.stderr.strip():
        reason += "; it said: " + " ".join(finished.stderr.split())[-500:]
    item = reports[0] if len(reports) == 1 else {}
    held = item.get("isolation", ())
    isolation = tuple(str(x) for x in held) if isinstance(held, tuple) else ()
    code_status = item.get("code_status")
    returncode = code_status if type(code_status) is int else finished.returncode
    return SandboxResult(
        passed,
        kind,
        reason,
        stdout_tail=_tail(rest),
        stderr_tail=_tail(finished.stderr),
        duration_s=finished.duration_s,
        tests_run=run,
        tests_passed=ok,
        returncode=returncode,
        process_group=finished.process_group,
        isolation=isolation,
        confinement=confinement,
    )


def _parse_reports(stdout: str, nonce: str) -> tuple[list[dict[str, object]], str]:
    """Result lines carrying the nonce.

    Each is ``passed kind tests_run tests_passed reason-hex isolation code-status`` where
    ``isolation`` is the comma-separated protections that held (``-`` for none) and
    ``code-status`` how the code process ended when it ended before the tests completed.
    """
    reports: list[dict[str, object]] = []
    kept: list[str] = []
    for line in stdout.splitlines():
        at = line.find(nonce)
        if at < 0:
            kept.append(line)
            continue
        item: dict[str, object] = {}
        fields = line[at + len(nonce) :].split()
        try:
            if len(fields) == 7:
                reason = "" if fields[4] == "-" else bytes.fromhex(fields[4]).decode()
                item = {
                    "isolation": tuple(x for x in fields[5].split(",") if x != "-"),
                    "code_status": None if fields[6] == "-" else int(fields[6]),
                    "passed": fields[0] == "1",
                    "kind": fields[1],
                    "tests_run": int(fields[2]),
                    "tests_passed": int(fields[3]),
                    "reason": reason,
                }
        except ValueError:
            item = {}
        reports.append(item)
    return reports, "\n".join(kept)


def _verdict(
    state: str,
    returncode: int,
    leaked: int,
    output_full: bool,
    reports: list[dict[str, object]],
    limits: SandboxLimits,
) -> tuple[bool, str, str, int, int]:
    """``(passed, kind, reason, tests_run, tests_passed)`` of a finished run."""
    if state == "timeout":
        reason = f"wall-time limit of {limits.time_limit_s:g} s reached; process group killed"
        return False, "timeout", reason, 0, 0
    if state == "process_limit":
        reason = f"more than {limits.max_processes} processes (fork bomb?); process group killed"
        return False, "process_limit", reason, 0, 0
    if len(reports) > 1:
        reason = f"{len(reports)} result lines carry the run's nonce (a forked copy reported)"
        return False, "forged", reason, 0, 0
    if not reports or not reports[0]:  # the test process died without a (well-formed) result
        how = f"signal {-returncode}" if returncode < 0 else f"status {returncode}"
        said = "a malformed result line" if reports else "no result"
        return False, "harness_error", f"the test process ended ({how}) with {said}", 0, 0
    item = reports[0]
    run, ok = item.get("tests_run"), item.get("tests_passed")
    run = run if type(run) is int else 0
    ok = ok if type(ok) is int else 0
    kind, reason = str(item.get("kind", "no_result")), str(item.get("reason", ""))
    passed = item.get("passed") is True and kind == "passed" and run > 0 and ok == run
    if passed and returncode != 0:
        passed, kind = False, "crash"
        reason = f"the harness exited with status {returncode} after reporting"
    if not passed and output_full and kind not in ("timeout", "process_limit"):
        kind, reason = "output_limit", f"the output reached the {limits.max_output_mb} MiB file size limit"
    if passed and leaked:
        passed, kind = False, "leaked_processes"
        reason = f"{leaked} process(es) were still running after the tests; killed"
    return passed, kind, reason, run, ok
