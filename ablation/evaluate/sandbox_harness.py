"""The test process of the sandbox: it confines and starts the code process, then runs the tests.

:data:`HARNESS` is the source the test process executes (``python -s -S -B -P -c HARNESS CFG``),
started by :func:`ablation.evaluate.sandbox.run_python_tests` in a new session. It:

1. reads code, tests and the run's nonce from a pipe (nothing of them on disk, in ``argv`` or in
   the environment);
2. makes itself not dumpable (``PR_SET_DUMPABLE`` 0: code of the same user cannot ptrace it or
   open its ``/proc/<pid>/mem``, ``environ`` or ``fd/``, where the nonce and the result file are),
   becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every process the code starts stays
   its descendant even after ``setsid`` and a double fork, and confines what it starts where the
   platform allows: new PID, network and mount namespaces (a user namespace too when not root),
   the whole file system re-mounted read-only except the scratch directory. What held is reported
   (:attr:`ablation.evaluate.sandbox.SandboxResult.isolation`);
3. starts the code process (:data:`ablation.evaluate.sandbox_runner.RUNNER`), waits for its
   self-check (the start-up, under its own limit: a start-up that overruns it is a
   ``sandbox_start`` error), tells the parent the code starts (a byte on a pipe; the code's
   wall-time limit counts from there), sends the code only, and runs the tests in its own
   interpreter: each public name of the code is a value (plain data) or a proxy whose calls
   cross a pipe as tagged JSON. An object that is not plain data is a handle that refuses
   ``==``, ``<``, ``bool`` and ``hash``, so an always-equal object cannot satisfy an
   assertion, and no frame of this process exists in the code's process to walk;
4. counts the processes the code left running, kills every descendant, and writes one result line
   carrying the nonce (and a reason of at most 2,000 characters) to its own stdout, which the
   code process cannot reach.
"""

from __future__ import annotations

from ablation.evaluate.sandbox_wire import WIRE

__all__ = ["HARNESS"]

# The harness executes inside the test process. It must only use the standard library.
HARNESS = r"""
import ast, json, os, subprocess, sys

# The longest reason a result line carries (the parent keeps it as the trial's note).
_REASON_CHARS = 2000

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

def _procs():
    table = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry, 'rb') as fh:
                stat = fh.read()
            fields = stat[stat.rfind(b')') + 2:].split()
            table[int(entry)] = (int(fields[1]), fields[0])
        except (OSError, IndexError, ValueError):
            pass
    return table

def _descendants(root):
    table, found, todo = _procs(), [], [root]
    children = {}
    for pid, (ppid, state) in table.items():
        children.setdefault(ppid, []).append(pid)
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append((pid, table[pid][1]))
            todo.append(pid)
    return found

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

def _guard(cfg):
    # Die with the parent (checked after the call: it may already be gone), stay within the
    # memory limit, and end the run at the wall-time limit even if nobody else does.
    import ctypes, resource, signal
    held = []
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no ptrace, /proc/<pid>/mem or fd/ for the user
    if os.getppid() != cfg['parent']:
        os._exit(1)
    if libc.prctl(36, 1, 0, 0, 0) == 0:  # PR_SET_CHILD_SUBREAPER
        held.append('subreaper')
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cfg['harness_memory_bytes'],) * 2)
    except (ValueError, OSError):
        pass
    return held

def _limits_cfg(cfg):
    nproc = cfg['max_processes']
    if os.getuid() != 0 and os.path.isdir('/proc'):
        nproc += _user_tasks(os.getuid())
    return {'memory_bytes': cfg['memory_bytes'], 'cpu_s': cfg['cpu_s'],
            'fsize_bytes': cfg['fsize_bytes'], 'nproc': nproc}

"""

HARNESS += WIRE + r"""
def _start(cfg, runner):
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    launch = cfg['launch']
    child_cfg = dict(_limits_cfg(cfg), req=req_r, rep=rep_w, hidden=launch['hidden'],
                     scratch=launch['scratch'] or os.getcwd(), disk_bytes=cfg['disk_bytes'],
                     reply_bytes=cfg['reply_bytes'])
    fds, prefix = [req_r, rep_w], list(launch['prefix'])
    if launch['seccomp'] is not None:
        bpf = os.memfd_create('ablation-seccomp', 0)
        os.write(bpf, bytes.fromhex(launch['seccomp']))
        os.lseek(bpf, 0, 0)
        fds.append(bpf)
        prefix = [str(bpf) if word == '{seccomp_fd}' else word for word in prefix]
    env = {'PATH': '/usr/bin:/bin', 'LANG': 'C.UTF-8', 'PYTHONHASHSEED': '0',
           'HOME': os.getcwd(), cfg['marker'][0]: cfg['marker'][1]}
    argv = prefix + [sys.executable, '-I', '-S', '-B', '-c', runner, json.dumps(child_cfg)]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=cfg['code_out'], env=env,
                                pass_fds=fds, start_new_session=True)
    finally:
        for fd in fds[:1] + fds[1:] + [cfg['code_out']]:
            os.close(fd)
    # In a PID namespace the code process is pid 1 and its worker (the only answerer) pid 2.
    return _Channel(proc, req_w, rep_r, 2 if launch['pid_namespace'] else proc.pid,
                    cfg['reply_bytes'])

def _sweep(me):
    import signal, time
    deadline = time.monotonic() + 3
    while True:
        alive = _descendants(me)
        for pid, _ in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not alive:
                return
        if time.monotonic() > deadline:
            return
        time.sleep(0.005)

def _ended(channel):
    # How the code process (or, in a PID namespace, its worker) ended.
    import subprocess
    try:
        status = channel.proc.wait(timeout=1)
    except subprocess.TimeoutExpired:  # it closed its pipe and lives on
        channel.proc.kill()
        status = channel.proc.wait()
    if channel.ended is not None:
        code, sig = channel.ended
        status = -sig if sig else code
    channel.status = status
    return status

def _leaked(me, channel):
    # Left running by the code: every live process below this one but the code process itself
    # (in a PID namespace, also its pid 1 and worker). Orphans of a double fork re-parent to
    # this process (a subreaper), not to the code process, so they are counted here too. Two
    # scans: one can list /proc before a grandchild exists and read its parent once it exited.
    counts = []
    for _ in range(2):
        live = [pid for pid, state in _descendants(me)
                if state not in (b'Z', b'X') and pid != channel.proc.pid]
        counts.append(max(0, len(live) - (2 if channel.pid == 2 else 0)))
    return max(counts)
"""

HARNESS += r"""
def _main():
    cfg = json.loads(sys.argv[1])
    chunks = []
    while True:
        chunk = os.read(cfg['fd'], 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(cfg['fd'])
    payload = json.loads(b''.join(chunks).decode('utf-8', 'surrogatepass'))
    del chunks
    out, marker, me, workdir = os.dup(1), payload.pop('nonce'), os.getpid(), os.getcwd()
    state = {'held': [], 'channel': None}

    def report(passed, kind, reason, run=0, ok=0, leaked=0):
        channel = state['channel']
        if channel is not None:
            try:
                os.close(channel.req)
            except OSError:
                pass
        _sweep(me)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        if passed and leaked:
            passed, kind = False, 'leaked_processes'
            reason = '%d process(es) were still running after the tests; killed' % leaked
        if len(reason) > _REASON_CHARS:  # it may quote the code's names and messages
            reason = reason[:_REASON_CHARS] + '...'
        held = ','.join(state['held']) or '-'
        status = '-' if channel is None or channel.status is None else '%d' % channel.status
        hex_reason = reason.encode('utf-8', 'replace').hex() or '-'
        os.write(out, ('\n%s %d %s %d %d %s %s %s\n' % (marker, passed, kind, run, ok,
                                                       hex_reason, held, status)).encode())
        os._exit(0)

    state['held'] = _guard(cfg)
    import signal
    signal.signal(signal.SIGALRM, lambda *_: report(
        False, 'sandbox_start', 'the sandbox did not reach its self-check within %g s inside '
        'the sandbox (the code never ran)' % cfg['start_s']))
    signal.setitimer(signal.ITIMER_REAL, cfg['start_s'])
    tests_src = payload.pop('tests')
    lines, tree = tests_src.splitlines(), ast.parse(tests_src, 'tests.py')
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    top = int(any(isinstance(n, ast.Assert) for s in tree.body if not isinstance(s, defs)
                  for n in ast.walk(s)))
    tests_code = compile(tree, 'tests.py', 'exec')
    try:
        channel = state['channel'] = _start(cfg, payload.pop('runner'))
    except (OSError, subprocess.SubprocessError) as exc:
        report(False, 'sandbox_start', 'could not start the sandbox: ' + _fmt(exc))
    try:
        checked = channel.receive()
    except _Fail as exc:
        _ended(channel)
        report(False, 'sandbox_start', 'the sandbox ended before its self-check (%s)' % exc)
    # The self-check arrived and the code is sent next: its time starts now, here and in the
    # parent (told through its pipe, which no process started from here inherits).
    signal.signal(signal.SIGALRM, lambda *_: report(
        False, 'timeout', 'wall-time limit of %g s reached inside the sandbox' % cfg['wall_s']))
    signal.setitimer(signal.ITIMER_REAL, cfg['wall_s'])
    try:
        os.write(cfg['started'], b'1')
        os.close(cfg['started'])
    except OSError:
        pass
    held = checked.get('isolation') if type(checked.get('isolation')) is list else []
    state['held'] += [str(name) for name in held]
    missing = [name for name in cfg['launch']['required'] if name not in held]
    if missing:
        report(False, 'sandbox_check', 'the %s sandbox does not hold %s (self-check inside the '
               'sandbox); the code was not run' % (cfg['launch']['name'], ', '.join(missing)))
    codec = _Codec()
    codec.remote = _proxy_class(channel, codec)
    try:
        first = channel.ask({'code': payload.pop('code')})
        if 'ready' not in first:
            report(False, *_import_failure(first))
        ns = _namespace(codec, first['ready'], _bound_by(tests_src))
    except _Fail as exc:
        report(False, *_early_end(exc, channel))
    sys.argv = ['tests.py']
    try:
        exec(tests_code, ns)
    except _Fail as exc:
        report(False, *_early_end(exc, channel), run=1)
    except BaseException as exc:
        kind = 'memory' if isinstance(exc, MemoryError) else 'failed'
        report(False, kind, 'module-level tests: ' + _fmt(exc) + _where(exc, lines), 1)
    funcs = [(k, v) for k, v in list(ns.items()) if k.startswith('test_') and callable(v)
             and getattr(getattr(v, '__code__', None), 'co_filename', '') == 'tests.py']
    run, ok, failures = top, top, []
    for name, fn in funcs:
        run += 1
        try:
            result = fn()
            if hasattr(result, '__await__'):
                import asyncio
                asyncio.run(result)
            ok += 1
        except _Fail as exc:
            report(False, *_early_end(exc, channel), run=run, ok=ok)
        except BaseException as exc:
            failures.append(name + ': ' + _fmt(exc) + _where(exc, lines))
    if run == 0:
        report(False, 'no_tests', 'the tests define no assert statement and no test_* function')
    if failures:
        report(False, 'failed', '%d of %d tests failed; %s' % (len(failures), run, failures[0]),
               run, ok)
    report(True, 'passed', 'all %d tests passed' % run, run, ok, leaked=_leaked(me, channel))

def _bound_by(tests_src):
    # Names the tests bind at module level (assigned, imported, defined): theirs, not the code's.
    import symtable
    table = symtable.symtable(tests_src, 'tests.py', 'exec')
    return {sym.get_name() for sym in table.get_symbols()
            if sym.is_assigned() or sym.is_imported() or sym.is_namespace()}

def _namespace(codec, described, bound):
    # The tests see the code's names, except those that would shadow a builtin (the tests call
    # the real len, sorted, isinstance, ...) or a name the tests bind themselves. Every name is
    # also reachable as an attribute of `solution`. The runner never sends a name that starts
    # with '__' (`__builtins__`, `__name__`, `__spec__`, ... steer how the tests run): one that
    # does is a forgery. `__name__` and the real builtins are set last, whatever was sent.
    import builtins, types
    if type(described) is not dict:
        raise _Fail('the code process sent a malformed ready message')
    for key, item in described.items():
        if type(key) is not str or type(item) is not dict:
            raise _Fail('the code process sent a malformed ready message')
        if key.startswith('__'):
            raise _Fail('forged: the code process offered the tests the name %r, which the '
                        'runner never sends (an attempt to replace what the tests run on)'
                        % key[:100])
    try:
        codec.exception_classes(described)
        names = {key: codec.errors[key] if 'exception' in item else codec.dec(item.get('value'))
                 for key, item in described.items()}
    except _Fail:
        raise
    except Exception as exc:
        raise _Fail('the code process sent a ready message that cannot be read: ' + _fmt(exc))
    ns = {k: v for k, v in names.items() if k not in bound and not hasattr(builtins, k)}
    if 'solution' not in bound:
        ns['solution'] = types.SimpleNamespace(**names)
    ns['__name__'] = 'tests'
    ns['__builtins__'] = builtins
    return ns

def _import_failure(msg):
    names = msg.get('raise') if type(msg.get('raise')) is list else []
    text = str(msg.get('msg', ''))
    first = str(names[0]) if names else 'Exception'
    if msg.get('stage') == 'compile':
        return 'syntax_error', 'the code does not compile: %s: %s' % (first, text)
    if 'SystemExit' in names:
        return 'exit', 'the code called exit(%s) before the tests ran' % (text or 'None')
    if 'MemoryError' in names:
        return 'memory', 'running the code raised MemoryError: %s' % text
    if _fork_refused(msg):
        return 'process_limit', 'the process limit refused a new process: %s' % text
    return 'crash', 'running the code raised %s%s' % (first, ': ' + text if text else '')

def _early_end(exc, channel):
    # The code process stopped answering: say how it ended.
    if str(exc) == 'forged':
        return 'forged', 'a process other than the code process answered (a forked copy)'
    if str(exc).startswith('forged: '):
        return 'forged', str(exc)[len('forged: '):]
    if str(exc) == 'fork_limit':
        return 'process_limit', 'a forked copy of the code was refused a new process by the process limit'
    if str(exc).startswith('reply_limit'):
        return 'output_limit', str(exc).partition(': ')[2]
    if str(exc) != 'ended':
        return 'bad_output', str(exc)
    status = _ended(channel)
    if status < 0:
        return _signal_kind(-status)
    if status == 0:
        return 'no_result', 'the code process exited with status 0 before the tests completed'
    return 'crash', 'the code process exited with status %d before the tests completed' % status

def _signal_kind(sig):
    import signal
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = 'signal %d' % sig
    if sig == getattr(signal, 'SIGXCPU', None):
        return 'cpu_limit', 'killed by %s: the CPU-time limit was reached' % name
    if sig == getattr(signal, 'SIGXFSZ', None):
        return 'output_limit', 'killed by %s: the output/file size limit was reached' % name
    if sig == signal.SIGKILL:
        return 'crash', 'killed by %s (hard CPU limit or out-of-memory killer)' % name
    return 'crash', 'the code process was killed by %s before the tests completed' % name

_main()
"""
