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
"""

from __future__ import annotations

import contextlib
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

__all__ = ["SandboxLimits", "SandboxResult", "run_python_tests"]

_TAIL_CHARS = 2000
_KILL_GRACE_S = 3.0
_COUNT_EVERY_S = 0.05

# The harness runs inside the child. It must only use the standard library.
_HARNESS = r"""
import ast, json, os, sys

def _fmt(exc):
    try:
        text = str(exc)
    except BaseException:
        text = '<unprintable>'
    return (type(exc).__name__ + (': ' + text if text else ''))[:500]

def _where(exc, lines):
    tb, found = exc.__traceback__, ''
    while tb is not None:
        n = tb.tb_lineno
        if tb.tb_frame.f_code.co_filename == 'tests.py' and 0 < n <= len(lines):
            found = ' at tests.py:%d: %s' % (n, lines[n - 1].strip())
        tb = tb.tb_next
    return found[:300]

def _user_tasks(uid):
    total = 0
    for pid in (e for e in os.listdir('/proc') if e.isdigit()):
        try:
            with open('/proc/%s/status' % pid) as fh:
                info = dict(line.split(':', 1) for line in fh if ':' in line)
            if int(info['Uid'].split()[0]) == uid:
                total += int(info.get('Threads', '1'))
        except (OSError, KeyError, ValueError):
            pass
    return total

def _limits(cfg):
    import resource
    nproc = cfg['max_processes']
    if os.getuid() != 0 and os.path.isdir('/proc'):
        nproc += _user_tasks(os.getuid())
    for name, value in [('RLIMIT_AS', cfg['memory_bytes']), ('RLIMIT_CPU', cfg['cpu_s']),
                        ('RLIMIT_FSIZE', cfg['fsize_bytes']), ('RLIMIT_NPROC', nproc),
                        ('RLIMIT_CORE', 0)]:
        which = getattr(resource, name, None)
        if which is None:
            continue
        # CPU: SIGXCPU at the soft limit (reported), SIGKILL one second later if it is ignored.
        top = value + 1 if name == 'RLIMIT_CPU' else value
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value, top = min(value, hard), min(top, hard)
        resource.setrlimit(which, (value, top))

def _main():
    cfg = json.loads(sys.argv[1])
    chunks = []
    while True:
        chunk = os.read(cfg['fd'], 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(cfg['fd'])
    payload = json.loads(b''.join(chunks).decode('utf-8'))
    del chunks
    # Everything used after the agent's code runs is bound now: the code may monkeypatch
    # modules and builtins (json, os, exec, callable...) but cannot rebind these locals.
    out, marker, write, exit_ = os.dup(1), payload.pop('nonce'), os.write, os._exit
    exec_, callable_, getattr_, hasattr_, list_ = exec, callable, getattr, hasattr, list
    import builtins
    saved_builtins, builtins_dict = dict(vars(builtins)), vars(builtins)
    flushes = (sys.stdout.flush, sys.stderr.flush)

    def report(passed, kind, reason, run=0, ok=0):
        for flush in flushes:
            try:
                flush()
            except BaseException:
                pass
        hex_reason = reason.encode('utf-8', 'replace').hex() or '-'
        try:
            write(out, ('\n%s %d %s %d %d %s\n' % (marker, passed, kind, run, ok, hex_reason))
                  .encode())
        finally:
            exit_(0)

    _limits(cfg)
    tests_src = payload.pop('tests')
    lines, tree = tests_src.splitlines(), ast.parse(tests_src, 'tests.py')
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    top = int(any(isinstance(n, ast.Assert) for s in tree.body if not isinstance(s, defs)
                  for n in ast.walk(s)))
    run_async = None
    if any(isinstance(s, ast.AsyncFunctionDef) for s in tree.body):
        import asyncio
        run_async = asyncio.run
    tests_code = compile(tree, 'tests.py', 'exec')
    try:
        code = compile(payload.pop('code'), 'solution.py', 'exec')
    except (SyntaxError, ValueError) as exc:
        report(False, 'syntax_error', 'the code does not compile: ' + _fmt(exc))
    sys.argv = ['solution.py']
    ns = {'__name__': 'solution', '__builtins__': __builtins__}
    try:
        exec_(code, ns)
    except SystemExit as exc:
        report(False, 'exit', 'the code called exit(%r) before the tests ran' % (exc.code,))
    except BaseException as exc:
        kind = 'memory' if isinstance(exc, MemoryError) else 'crash'
        report(False, kind, 'running the code raised ' + _fmt(exc))
    builtins_dict.clear()  # the tests see the real builtins even if the code patched them
    builtins_dict.update(saved_builtins)
    ns['__builtins__'] = builtins
    try:
        exec_(tests_code, ns)
    except BaseException as exc:
        kind = 'memory' if isinstance(exc, MemoryError) else 'failed'
        report(False, kind, 'module-level tests: ' + _fmt(exc) + _where(exc, lines), 1)
    funcs = [(k, v) for k, v in list_(ns.items()) if k.startswith('test_') and callable_(v)
             and getattr_(getattr_(v, '__code__', None), 'co_filename', '') == 'tests.py']
    run, ok, failures = top, top, []
    for name, fn in funcs:
        run += 1
        try:
            result = fn()
            if hasattr_(result, '__await__'):
                if run_async is None:
                    raise TypeError('an awaitable test needs an async def test_* in tests.py')
                run_async(result)
            ok += 1
        except BaseException as exc:
            failures.append(name + ': ' + _fmt(exc) + _where(exc, lines))
    if run == 0:
        report(False, 'no_tests', 'the tests define no assert statement and no test_* function')
    if failures:
        report(False, 'failed', '%d of %d tests failed; %s' % (len(failures), run, failures[0]),
               run, ok)
    report(True, 'passed', 'all %d tests passed' % run, run, ok)

_main()
"""


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


def _live_processes(pgid: int | None, home_marker: bytes | None) -> list[int]:
    """Pids of live (non-zombie) processes in group ``pgid`` or whose environment has the marker."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    me, found = os.getpid(), []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] in (b"Z", b"X"):
                continue
            if pgid is not None and int(fields[2]) == pgid:
                found.append(int(entry))
                continue
            if home_marker is not None:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if home_marker in fh.read().split(b"\0"):
                        found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _kill_all(pgid: int, home_marker: bytes) -> int:
    """SIGKILL the group and any marked straggler; wait until none is alive. Returns survivors."""
    deadline = time.monotonic() + _KILL_GRACE_S
    while True:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        alive = _live_processes(pgid, home_marker)
        if not alive or time.monotonic() > deadline:
            return len(alive)
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _supervise(proc: subprocess.Popen[bytes], deadline: float, max_processes: int) -> str:
    """Wait until the child exits without reaping it (its pid keeps the group id reserved).

    Every ``_COUNT_EVERY_S`` the processes of the child's group are counted, so a fork bomb is
    stopped even where ``RLIMIT_NPROC`` is not enforced (root).

    Returns:
        ``"exited"``, ``"timeout"`` or ``"process_limit"``.
    """
    delay, next_count = 0.001, time.monotonic() + _COUNT_EVERY_S
    while True:
        if hasattr(os, "waitid"):
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if info is not None and info.si_pid == proc.pid:
                return "exited"
        elif proc.poll() is not None:  # pragma: no cover - no waitid (macOS): tiny pid-reuse race
            return "exited"
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if now >= next_count:
            next_count = now + _COUNT_EVERY_S
            if len(_live_processes(proc.pid, None)) > max_processes:
                return "process_limit"
        time.sleep(min(delay, deadline - now))
        delay = min(delay * 2, 0.02)


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


def _feed(fd: int, data: bytes) -> None:
    try:
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the child died before reading its input; its outcome says why


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
    try:
        compile(tests, "tests.py", "exec", dont_inherit=True)  # compiled only, never executed here
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"the tests do not compile: {type(exc).__name__}: {exc}") from None
    if not sys.executable:
        raise OSError("cannot locate the Python interpreter (sys.executable is empty)")
    nonce = secrets.token_hex(16)
    workdir = tempfile.mkdtemp(prefix="ablation-sandbox-")
    home_marker = f"HOME={workdir}".encode()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": workdir}
    read_fd, write_fd = os.pipe()
    cfg = {
        "fd": read_fd,
        "memory_bytes": limits.memory_mb * 1024 * 1024,
        "cpu_s": limits.effective_cpu_s,
        "fsize_bytes": limits.max_output_mb * 1024 * 1024,
        "max_processes": limits.max_processes,
    }
    payload = json.dumps({"nonce": nonce, "code": code, "tests": tests}).encode()
    argv = [sys.executable, "-s", "-S", "-B", "-P", "-c", _HARNESS, json.dumps(cfg)]
    proc: subprocess.Popen[bytes] | None = None
    feeder: threading.Thread | None = None
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.monotonic()
            try:
                proc = subprocess.Popen(
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
            feeder = threading.Thread(target=_feed, args=(write_fd, payload), daemon=True)
            feeder.start()
            state = _supervise(proc, start + limits.time_limit_s, limits.max_processes)
            duration = time.monotonic() - start
            leaked = len(_live_processes(proc.pid, home_marker)) if state == "exited" else 0
            _kill_all(proc.pid, home_marker)
            proc.wait()
            feeder.join(timeout=_KILL_GRACE_S)
            stdout, stderr = _read(out), _read(err)
            full = max(out.tell(), err.tell()) >= cfg["fsize_bytes"]
        reports, rest = _parse_reports(stdout, nonce)
        passed, kind, reason, run, ok = _verdict(
            state, proc.returncode, leaked, full, reports, stderr, limits
        )
        return SandboxResult(
            passed,
            kind,
            reason,
            stdout_tail=_tail(rest),
            stderr_tail=_tail(stderr),
            duration_s=duration,
            tests_run=run,
            tests_passed=ok,
            returncode=proc.returncode,
            process_group=proc.pid,
        )
    finally:
        if feeder is None:
            os.close(write_fd)
        if proc is not None and proc.returncode is None:  # pragma: no cover - defensive
            _kill_all(proc.pid, home_marker)
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


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
