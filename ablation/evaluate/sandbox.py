"""Run untrusted Python code and its unit tests in separate, confined, resource-limited processes.

This is the only place where code produced by an agent is executed. :func:`run_python_tests`
creates a fresh scratch directory (deleted afterwards whatever happens) and starts two processes:

* the **test process** (:mod:`ablation.evaluate.sandbox_harness`), ``sys.executable -s -S -B -P``
  in a new session with only ``PATH``, ``LANG``, ``PYTHONHASHSEED`` and ``HOME=<scratch>`` in its
  environment and ``-S`` (no installed packages, this framework included). It receives code,
  tests and a random nonce through a pipe, becomes a child subreaper, enters new PID, network and
  mount namespaces where the platform allows, builds a private root for the code
  (:mod:`ablation.evaluate.sandbox_jail`), starts the code process, runs the tests and writes one result line carrying the
  nonce to a stdout the code process cannot reach;
* the **code process** (:mod:`ablation.evaluate.sandbox_runner`), started by the test process
  with the code only (never the tests or the nonce), under ``RLIMIT_AS``, ``RLIMIT_CPU``,
  ``RLIMIT_FSIZE``, ``RLIMIT_NPROC`` and ``RLIMIT_CORE``. The tests reach its functions through
  proxies; values cross as plain data in tagged JSON (:mod:`ablation.evaluate.sandbox_wire`).

So the verdict cannot be forged from the code: walking frames finds no harness, an always-equal
object reaches the tests as a handle that refuses comparison, a printed fake result lacks the
nonce. The code cannot signal the framework (other PID namespace; without one, its parent is the
test process), cannot leave processes behind (the subreaper sweeps every descendant, ``setsid``
and double forks included; the parent then sweeps what carries the run's marker), has no network
and cannot read or write outside its private root where the namespaces held
(:attr:`SandboxResult.isolation` says which did). The parent enforces the wall-time limit and
counts the run's processes every 50 ms (a fork bomb is killed above ``max_processes``, also for
root, whom ``RLIMIT_NPROC`` does not bind). What does not hold where is in ``docs/SECURITY.md``.
POSIX only; the process checks read Linux's ``/proc``.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO

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

__all__ = ["SandboxLimits", "SandboxResult", "run_python_tests"]

_TAIL_CHARS = 2000


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandbox run.

    Attributes:
        time_limit_s: Wall-clock limit; the process group is killed when it is reached.
        memory_mb: Address-space limit (``RLIMIT_AS``) in MiB; a larger allocation raises
            ``MemoryError`` in the child.
        cpu_s: CPU-time limit (``RLIMIT_CPU``) in whole seconds; ``None`` means
            ``ceil(time_limit_s) + 1``.
        max_output_mb: Largest file the child may write (``RLIMIT_FSIZE``), stdout and stderr
            included, in MiB.
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

    def __post_init__(self) -> None:
        if not self.time_limit_s > 0:
            raise ValueError(f"time_limit_s must be > 0, got {self.time_limit_s!r}")
        for field in ("memory_mb", "max_output_mb", "max_processes"):
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
        kind: Machine-readable outcome: ``"passed"``, ``"failed"``, ``"syntax_error"``,
            ``"crash"``, ``"exit"``, ``"memory"``, ``"timeout"``, ``"cpu_limit"``,
            ``"output_limit"``, ``"process_limit"``, ``"no_result"``, ``"forged"``,
            ``"leaked_processes"``, ``"no_tests"`` or ``"bad_output"``.
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
        isolation: The protections that held for the code process on this platform, among
            ``subreaper``, ``pid_namespace``, ``network_namespace``, ``user_namespace`` and
            ``read_only_fs`` (see ``docs/SECURITY.md``).
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


def _tail(text: str) -> str:
    return text[-_TAIL_CHARS:]


def _read(fh: IO[bytes]) -> str:
    fh.seek(0)
    return fh.read().decode("utf-8", errors="replace")


def run_python_tests(code: str, tests: str, limits: SandboxLimits | None = None) -> SandboxResult:
    """Run ``code`` and then ``tests`` in a fresh sandboxed Python process.

    The test format: ``tests`` is Python source executed in the namespace of the code (so it sees
    the code's functions and classes by name). Its module-level ``assert`` statements count as one
    test; every function named ``test_*`` that it defines (sync or ``async``) is then called with
    no arguments and counts as one test. The code runs with ``__name__ == "solution"``, so an
    ``if __name__ == "__main__":`` block in it does not run. A run with no test at all fails.

    Args:
        code: Python source produced by an agent (untrusted).
        tests: Python source of the unit tests (trusted task data).
        limits: Resource limits; the defaults of :class:`SandboxLimits` when ``None``.

    Returns:
        The :class:`SandboxResult`; every failure kind is reported there, never raised.

    Raises:
        ValueError: if ``tests`` does not compile (a defect of the task, not of the code).
        OSError: only when the sandbox itself cannot be set up (no temporary directory, no
            interpreter).
    """
    limits = limits or SandboxLimits()
    _check_can_run(tests)
    nonce = secrets.token_hex(16)
    message = {"nonce": nonce, "code": code, "tests": tests, "runner": RUNNER}
    payload = json.dumps(message).encode("utf-8", "surrogatepass")
    workdir = tempfile.mkdtemp(prefix="ablation-sandbox-")
    try:
        finished = _run_harness(payload, workdir, limits)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return _result(finished, nonce, limits)


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


def _harness_config(read_fd: int, code_out: int, limits: SandboxLimits) -> dict[str, int]:
    """The harness's settings: its input pipe, the code's stdout and the code process's limits."""
    return {
        "fd": read_fd,
        "code_out": code_out,
        "memory_bytes": limits.memory_mb * 1024 * 1024,
        "cpu_s": limits.effective_cpu_s,
        "fsize_bytes": limits.max_output_mb * 1024 * 1024,
        "max_processes": limits.max_processes,
    }


def _spawn(
    argv: list[str], out: IO[bytes], err: IO[bytes], workdir: str, fds: tuple[int, int]
) -> subprocess.Popen[bytes]:
    """Start the harness in its own session with a minimal environment; close our ``fds[0]``."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": workdir}
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=workdir,
            env=env,
            pass_fds=fds,
            start_new_session=True,
        )
    finally:
        os.close(fds[0])


def _run_harness(payload: bytes, workdir: str, limits: SandboxLimits) -> _Finished:
    """Run the harness on ``payload`` in ``workdir`` under ``limits``; leave no process behind."""
    home_marker = f"HOME={workdir}".encode()
    read_fd, write_fd = os.pipe()
    proc: subprocess.Popen[bytes] | None = None
    feeder: threading.Thread | None = None
    try:
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as code_out,
            tempfile.TemporaryFile() as err,
        ):
            cfg = _harness_config(read_fd, code_out.fileno(), limits)
            argv = [sys.executable, "-s", "-S", "-B", "-P", "-c", HARNESS, json.dumps(cfg)]
            start = time.monotonic()
            proc = _spawn(argv, out, err, workdir, (read_fd, code_out.fileno()))
            feeder = threading.Thread(target=feed, args=(write_fd, payload), daemon=True)
            feeder.start()
            state = supervise(proc, start + limits.time_limit_s, limits.max_processes)
            duration = time.monotonic() - start
            leaked = len(_leftovers(proc.pid, home_marker)) if state == "exited" else 0
            kill_all(proc.pid, home_marker)
            proc.wait()
            feeder.join(timeout=KILL_GRACE_S)
            full = max(code_out.seek(0, 2), err.seek(0, 2)) >= cfg["fsize_bytes"]
            texts = _read(out), _read(code_out), _read(err)
        return _Finished(state, proc.returncode, proc.pid, duration, leaked, *texts, full)
    finally:
        if feeder is None:
            os.close(write_fd)
        if proc is not None and proc.returncode is None:  # pragma: no cover - defensive
            kill_all(proc.pid, home_marker)
            proc.wait()


def _leftovers(root: int, home_marker: bytes) -> set[int]:
    """Processes of the run still alive after the test process exited (it should have swept)."""
    return set(descendants(root)) | set(live_processes(root, home_marker))


def _result(finished: _Finished, nonce: str, limits: SandboxLimits) -> SandboxResult:
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
    if not reports:  # the test process itself died without a result
        if output_full:
            kind = "output_limit"
            reason = f"the output reached the {limits.max_output_mb} MiB file size limit"
        elif returncode < 0:
            kind = "crash"
            reason = f"the test process was killed by signal {-returncode} without a result"
        else:
            kind = "no_result"
            reason = f"the test process exited with status {returncode} without a result"
        return False, kind, reason, 0, 0
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
