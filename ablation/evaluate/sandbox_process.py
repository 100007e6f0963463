"""The child side of the sandbox and the parent's control of the child's processes.

Owns what :func:`ablation.evaluate.sandbox.run_python_tests` needs to run one child: the
:data:`HARNESS` the child executes, :func:`feed` (the pipe that carries code, tests and nonce),
:func:`supervise` (waiting with the wall-time and process-count limits), and the ``/proc`` sweep
that finds (:func:`live_processes`) and kills (:func:`kill_all`) what the run left behind.

The harness binds everything it uses after the agent's code before that code runs, writes its
result without library code and restores ``builtins`` before the tests, so monkeypatching
``json``, ``os``, ``exec`` or ``callable`` cannot turn a failure into a pass. It lowers its own
resource limits before compiling the code (not in ``preexec_fn``, which is unsafe when the parent
has threads). POSIX only; the process checks read Linux's ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

__all__ = [
    "COUNT_EVERY_S",
    "HARNESS",
    "KILL_GRACE_S",
    "feed",
    "kill_all",
    "live_processes",
    "supervise",
]

#: Longest wait, in seconds, for killed processes to disappear (and for the feeder thread).
KILL_GRACE_S = 3.0
#: How often, in seconds, :func:`supervise` counts the child's processes.
COUNT_EVERY_S = 0.05

# The harness runs inside the child. It must only use the standard library.
HARNESS = r"""
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


def live_processes(pgid: int | None, home_marker: bytes | None) -> list[int]:
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


def kill_all(pgid: int, home_marker: bytes) -> int:
    """SIGKILL the group and any marked straggler; wait until none is alive. Returns survivors."""
    deadline = time.monotonic() + KILL_GRACE_S
    while True:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        alive = live_processes(pgid, home_marker)
        if not alive or time.monotonic() > deadline:
            return len(alive)
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def supervise(proc: subprocess.Popen[bytes], deadline: float, max_processes: int) -> str:
    """Wait until the child exits without reaping it (its pid keeps the group id reserved).

    Every ``COUNT_EVERY_S`` the processes of the child's group are counted, so a fork bomb is
    stopped even where ``RLIMIT_NPROC`` is not enforced (root).

    Returns:
        ``"exited"``, ``"timeout"`` or ``"process_limit"``.
    """
    delay, next_count = 0.001, time.monotonic() + COUNT_EVERY_S
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
            next_count = now + COUNT_EVERY_S
            if len(live_processes(proc.pid, None)) > max_processes:
                return "process_limit"
        time.sleep(min(delay, deadline - now))
        delay = min(delay * 2, 0.02)


def feed(fd: int, data: bytes) -> None:
    """Write ``data`` to the pipe ``fd`` and close it; a child that died first is not an error."""
    try:
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the child died before reading its input; its outcome says why
