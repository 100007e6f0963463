"""Run untrusted Python code and its unit tests in a separate, resource-limited process.

This is the only place where code produced by an agent is executed. :func:`run_python_tests`:

* creates a fresh temporary working directory, deleted afterwards whatever happens;
* starts ``sys.executable -s -S -B -P -c HARNESS`` in a new session and process group, stdin on
  ``/dev/null``, with only ``PATH=/usr/bin:/bin``, ``LANG=C.UTF-8``, ``PYTHONHASHSEED=0`` and
  ``HOME=<tmpdir>`` in its environment (nothing of the parent's is inherited). ``-S`` skips
  ``site``: installed packages, this framework included, cannot be imported, only the stdlib;
* passes code, tests and a random nonce through a pipe that the harness reads to its end and
  closes before compiling the code: nothing of them is on disk, in ``argv`` or in the environment;
* has the harness lower its own limits (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE``,
  ``RLIMIT_NPROC``, ``RLIMIT_CORE``) before the code is compiled. This is done in the child, not
  in ``preexec_fn``, which is unsafe when the parent has threads (the engine runs sync verifiers
  in worker threads);
* reads the verdict from exactly one stdout line carrying the nonce. None (``os._exit``, a kill,
  an interpreter crash) or several (a forked copy also reported) is a failure, never a pass;
* enforces the wall-time limit, counts the group's processes every 50 ms (a fork bomb is killed
  above ``max_processes``, also as root, for whom the kernel ignores ``RLIMIT_NPROC``), then
  SIGKILLs the group and sweeps ``/proc`` for survivors carrying the run's ``HOME`` marker (a
  child that called ``setsid``). A process still alive after the tests fails the run.

The harness binds everything it uses after the agent's code before that code runs, writes its
result without library code and restores ``builtins`` before the tests, so monkeypatching
``json``, ``os``, ``exec`` or ``callable`` cannot turn a failure into a pass. Limits, stated
plainly: code and tests share one interpreter, so code that digs into the harness's frames or
memory, installs a trace function or returns always-equal objects can still fool the tests
(tests should check types); a fast exponential fork bomb may overshoot ``max_processes`` for
up to 50 ms; there is no network or filesystem isolation beyond the working directory and the
user's permissions. For hostile code, run the framework as an unprivileged user in a container.
POSIX only; the process checks read Linux's ``/proc``.

This module owns the public face (:class:`SandboxLimits`, :class:`SandboxResult`,
:func:`run_python_tests`), the steps of one run and the verdict read from the child's output. The
harness the child executes, the process supervision and the ``/proc`` sweep live in
:mod:`ablation.evaluate.sandbox_process`.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO

from ablation.evaluate.sandbox_process import (
    HARNESS,
    KILL_GRACE_S,
    feed,
    kill_all,
    live_processes,
    supervise,
)

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
        returncode: The child's exit status (negative: killed by that signal); ``None`` if no
            process was started.
        process_group: Id of the child's process group (equal to its pid), for audits.
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


def _tail(text: str) -> str:
    return text[-_TAIL_CHARS:]


def _signal_outcome(returncode: int) -> tuple[str, str]:
    sig = -returncode
    try:
        sig_name = signal.Signals(sig).name
    except ValueError:
        sig_name = f"signal {sig}"
    if sig == getattr(signal, "SIGXCPU", None):
        return "cpu_limit", f"killed by {sig_name}: the CPU-time limit was reached"
    if sig == getattr(signal, "SIGXFSZ", None):
        return "output_limit", f"killed by {sig_name}: the output/file size limit was reached"
    if sig == signal.SIGKILL:
        return "crash", f"killed by {sig_name} (hard CPU limit or out-of-memory killer)"
    return "crash", f"the interpreter was killed by {sig_name} before the tests completed"


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
    payload = json.dumps({"nonce": nonce, "code": code, "tests": tests}).encode()
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
    stdout: str
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


def _harness_config(read_fd: int, limits: SandboxLimits) -> dict[str, int]:
    """The harness's command-line settings: its input pipe and the limits it applies to itself."""
    return {
        "fd": read_fd,
        "memory_bytes": limits.memory_mb * 1024 * 1024,
        "cpu_s": limits.effective_cpu_s,
        "fsize_bytes": limits.max_output_mb * 1024 * 1024,
        "max_processes": limits.max_processes,
    }


def _spawn(
    argv: list[str], out: IO[bytes], err: IO[bytes], workdir: str, read_fd: int
) -> subprocess.Popen[bytes]:
    """Start the harness in its own session with a minimal environment; close our ``read_fd``."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": workdir}
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=workdir,
            env=env,
            pass_fds=(read_fd,),
            start_new_session=True,
        )
    finally:
        os.close(read_fd)


def _run_harness(payload: bytes, workdir: str, limits: SandboxLimits) -> _Finished:
    """Run the harness on ``payload`` in ``workdir`` under ``limits``; leave no process behind."""
    home_marker = f"HOME={workdir}".encode()
    read_fd, write_fd = os.pipe()
    cfg = _harness_config(read_fd, limits)
    argv = [sys.executable, "-s", "-S", "-B", "-P", "-c", HARNESS, json.dumps(cfg)]
    proc: subprocess.Popen[bytes] | None = None
    feeder: threading.Thread | None = None
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.monotonic()
            proc = _spawn(argv, out, err, workdir, read_fd)
            feeder = threading.Thread(target=feed, args=(write_fd, payload), daemon=True)
            feeder.start()
            state = supervise(proc, start + limits.time_limit_s, limits.max_processes)
            duration = time.monotonic() - start
            leaked = len(live_processes(proc.pid, home_marker)) if state == "exited" else 0
            kill_all(proc.pid, home_marker)
            proc.wait()
            feeder.join(timeout=KILL_GRACE_S)
            stdout, stderr = _read(out), _read(err)
            full = max(out.tell(), err.tell()) >= cfg["fsize_bytes"]
        return _Finished(state, proc.returncode, proc.pid, duration, leaked, stdout, stderr, full)
    finally:
        if feeder is None:
            os.close(write_fd)
        if proc is not None and proc.returncode is None:  # pragma: no cover - defensive
            kill_all(proc.pid, home_marker)
            proc.wait()


def _result(finished: _Finished, nonce: str, limits: SandboxLimits) -> SandboxResult:
    """Interpret the child's output and exit into the :class:`SandboxResult` of the run."""
    reports, rest = _parse_reports(finished.stdout, nonce)
    passed, kind, reason, run, ok = _verdict(
        finished.state,
        finished.returncode,
        finished.leaked,
        finished.output_full,
        reports,
        finished.stderr,
        limits,
    )
    return SandboxResult(
        passed,
        kind,
        reason,
        stdout_tail=_tail(rest),
        stderr_tail=_tail(finished.stderr),
        duration_s=finished.duration_s,
        tests_run=run,
        tests_passed=ok,
        returncode=finished.returncode,
        process_group=finished.process_group,
    )


def _parse_reports(stdout: str, nonce: str) -> tuple[list[dict[str, object]], str]:
    """Result lines carrying the nonce (``passed kind tests_run tests_passed reason-hex``)."""
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
            if len(fields) == 5:
                reason = "" if fields[4] == "-" else bytes.fromhex(fields[4]).decode()
                item = {
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
    stderr: str,
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
    if not reports:
        if output_full:
            kind = "output_limit"
            reason = f"the output reached the {limits.max_output_mb} MiB file size limit"
        elif returncode < 0:
            kind, reason = _signal_outcome(returncode)
        elif "MemoryError" in stderr:
            kind, reason = "memory", "MemoryError before the tests completed (memory limit)"
        elif returncode == 0:
            kind, reason = "no_result", "the process exited before the tests completed"
        else:
            kind = "crash"
            reason = f"the process exited with status {returncode} before the tests completed"
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
    if passed and leaked:
        passed, kind = False, "leaked_processes"
        reason = f"{leaked} process(es) were still running after the tests; killed"
    return passed, kind, reason, run, ok
