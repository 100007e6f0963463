"""Run untrusted Python code and its unit tests in separate, confined, resource-limited processes.

This is the only place where code produced by an agent is executed. :func:`run_python_tests`
starts two processes:

* the **test process** (:mod:`ablation.evaluate.sandbox_harness`), ``sys.executable -I -S -B`` in
  a new session with a minimal environment (no installed packages, this framework included). It
  dies with its parent (``PR_SET_PDEATHSIG``), runs under its own address-space limit and ends
  the run itself at the start-up and wall-time limits. It receives code, tests and a random nonce through a
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
nonce, and the tests call the real builtins (a name of the code that shadows one, or any name
starting with ``__`` such as ``__builtins__``, is not given to them). A run that could not judge the code (the sandbox is unavailable, did not start, or
its self-check failed; the test process died without a result) has one of the
:data:`ERROR_KINDS`: :class:`~ablation.evaluate.code_tests.CodeTestsVerifier` makes it the
trial's error, never a verdict. The code's wall-time limit counts from the moment its
self-check arrived; the start-up before it has its own limit
(:attr:`SandboxLimits.start_limit_s`), and a start-up that overruns it is a ``sandbox_start``
error. The parent enforces both limits and counts the run's processes every 50 ms (a fork
bomb is killed above ``max_processes``, also for root, whom ``RLIMIT_NPROC`` does not bind),
and their threads (killed above ``max_processes`` plus the threads the user already runs,
``RLIMIT_NPROC``'s own headroom for other users), and the files in a ``tmpfs`` scratch (killed
above :attr:`SandboxLimits.max_files`: a ``tmpfs`` counts bytes, not inodes).
What holds where is in ``docs/SECURITY.md``. Linux only (the process checks read ``/proc``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO

from ablation.evaluate.sandbox_confinement import CONFINEMENTS, Launch, current_confinement
from ablation.evaluate.sandbox_harness import HARNESS
from ablation.evaluate.sandbox_outcome import (
    ERROR_KINDS,
    Finished,
    SandboxLimits,
    SandboxResult,
    interpret,
)
from ablation.evaluate.sandbox_process import (
    KILL_GRACE_S,
    descendants,
    feed,
    kill_all,
    live_processes,
    make_scratch,
    remove_scratch,
    supervise,
    user_tasks,
)
from ablation.evaluate.sandbox_runner import RUNNER

__all__ = ["ERROR_KINDS", "SandboxLimits", "SandboxResult", "run_python_tests"]

#: The test process's address space beyond the code's limit (its interpreter and the replies).
_HARNESS_HEADROOM_MB = 512
#: The test process ends the run itself this long after the wall-time limit, if the parent did not.
_INNER_GRACE_S = 1.0

_MIB = 1024 * 1024
#: How much of the end of each output file of a run the parent reads.
_READ_BYTES = _MIB


def _read(fh: IO[bytes]) -> str:
    """The last :data:`_READ_BYTES` of a file the run wrote, decoded.

    Only the end is used (the result line, written last, and the tails), and a file's size is
    no bound: the code can move the offset it shares with the test process's stderr far past
    its own file size limit, where the test process then writes.
    """
    fh.seek(max(0, fh.seek(0, 2) - _READ_BYTES))
    return fh.read(_READ_BYTES).decode("utf-8", errors="replace")


def run_python_tests(
    code: str, tests: str, limits: SandboxLimits | None = None, *, confinement: str | None = None
) -> SandboxResult:
    """Run ``code`` and then ``tests`` in a fresh sandbox.

    The test format: ``tests`` is Python source run as its own module, which sees the code's
    public names (``from solution import *``, as it were), except a name that would shadow a
    builtin or one the tests bind themselves; every name is also an attribute of ``solution``.
    A module-level value larger than a sixteenth of the reply limit reaches them as a handle.
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
    left: str | None = None
    try:
        finished = _run_harness(payload, workdir, limits, launch)
    finally:
        if workdir is not None:
            left = remove_scratch(workdir)
    result = interpret(finished, nonce, limits, name)
    if left is not None:  # the verdict stands; the leftover is said (and logged as a warning)
        note = f"; the scratch directory {workdir} could not be removed: {left}"
        result = dataclasses.replace(result, reason=result.reason + note)
    return result


def _check_can_run(tests: str) -> None:
    """Raise before anything starts when the tests do not compile or there is no interpreter."""
    try:
        compile(tests, "tests.py", "exec", dont_inherit=True)  # compiled only, never executed here
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"the tests do not compile: {type(exc).__name__}: {exc}") from None
    if not sys.executable:
        raise OSError("cannot locate the Python interpreter (sys.executable is empty)")


def _harness_config(
    fds: tuple[int, int, int], limits: SandboxLimits, launch: Launch, marker: tuple[str, str]
) -> dict[str, object]:
    """The test process's settings: its pipes, the code's stdout, the limits and the launch.

    ``fds`` are the pipe it reads its input from, the code's stdout and the pipe it writes one
    byte to when the code's self-check arrived (the end of the start-up).
    """
    return {
        "fd": fds[0],
        "code_out": fds[1],
        "started": fds[2],
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
        "start_s": limits.effective_start_limit_s + _INNER_GRACE_S,
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
    fds: tuple[int, ...],
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
) -> Finished:
    """Run the harness on ``payload`` under ``limits`` and ``launch``; leave no process behind."""
    marker = ("ABLATION_SANDBOX_RUN", secrets.token_hex(8))
    env_marker = f"{marker[0]}={marker[1]}".encode()
    # Threads over what the user already runs: RLIMIT_NPROC's headroom, counted here for root too.
    max_tasks = limits.max_processes + user_tasks(os.getuid())
    read_fd, write_fd = os.pipe()
    started_r, started_w = os.pipe()  # the test process writes a byte when the code starts
    os.set_blocking(started_r, False)
    proc: subprocess.Popen[bytes] | None = None
    feeder: threading.Thread | None = None
    try:
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as code_out,
            tempfile.TemporaryFile() as err,
        ):
            fds = (read_fd, code_out.fileno(), started_w)
            cfg = _harness_config(fds, limits, launch, marker)
            argv = [sys.executable, "-I", "-S", "-B", "-c", HARNESS, json.dumps(cfg)]
            start = time.monotonic()
            try:
                proc = _spawn(argv, out, err, workdir, fds, marker)
            finally:
                os.close(started_w)
            feeder = threading.Thread(target=feed, args=(write_fd, payload), daemon=True)
            feeder.start()
            start_by = start + limits.effective_start_limit_s
            files = None if launch.scratch is None else (launch.scratch, limits.max_files)
            state = supervise(
                proc, start_by, limits.time_limit_s, limits.max_processes, started_r, max_tasks, files
            )
            duration = time.monotonic() - start
            leaked = len(_leftovers(proc.pid, env_marker)) if state.endswith("exited") else 0
            kill_all(proc.pid, env_marker)
            proc.wait()
            feeder.join(timeout=KILL_GRACE_S)
            full = max(code_out.seek(0, 2), err.seek(0, 2)) >= limits.max_output_mb * _MIB
            texts = _read(out), _read(code_out), _read(err)
        signalable = not launch.pid_namespace  # the code can signal the test process
        return Finished(state, proc.returncode, proc.pid, duration, leaked, *texts, full, signalable)
    finally:
        os.close(started_r)
        if feeder is None:
            os.close(write_fd)
        if proc is not None and proc.returncode is None:  # pragma: no cover - defensive
            kill_all(proc.pid, env_marker)
            proc.wait()


def _leftovers(root: int, marker: bytes) -> set[int]:
    """Processes of the run still alive after the test process exited (it should have swept)."""
    return set(descendants(root)) | set(live_processes(root, marker))
