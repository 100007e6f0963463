"""The code process of the sandbox: it runs the agent's code and answers calls as plain data.

:data:`RUNNER` is the source the code process executes (``python -s -S -B -P -c RUNNER CFG``). It
is started by the test harness (:data:`ablation.evaluate.sandbox_harness.HARNESS`), never by the
framework itself, and it never sees the tests, the nonce or the harness's output file:

1. It lowers its own resource limits (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE``,
   ``RLIMIT_NPROC``, ``RLIMIT_CORE``, and ``RLIMIT_NOFILE`` to 1024, hard limit included: each
   descriptor can hold kernel memory, a socket's buffers, outside the address space). When it
   is the first process of a new PID namespace (pid 1), it mounts a fresh ``/proc`` in a mount
   namespace of its own (so the host's processes are not even visible) and forks: pid 1 only
   reaps and reports how the worker ended; the worker (pid 2) does the rest, so
   kernel-generated signals such as ``SIGXCPU`` reach it normally.
2. It reads the code from its request pipe, executes it as module ``solution`` and sends one
   ``ready`` message describing the module's names (none starting with ``__``): plain data by
   value, functions, classes and other objects as numbered handles, exception classes with
   their MRO names. A value larger than 1/16 of the reply limit (or once the values sent reach
   1/4 of it), and a dict or set keyed by anything but plain data, is a handle too.
3. It serves requests until its pipe closes: call a handle, read an attribute, ``len``,
   ``iter`` (as a list), ``in`` and ``[]``. Every value that crosses is plain data (``None``,
   ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``, ``set``,
   ``frozenset`` of exactly those types, tagged JSON) or a handle; an exception crosses as its MRO
   names and message.

Nothing this process says can make a test pass that would fail on honest values: the tests and
their verdict live in the harness process, and an object of the code (an always-equal ``__eq__``,
an ``int`` subclass) reaches the tests only as a handle, which refuses comparison. Each message
carries the sender's pid, so a forked copy of the worker cannot answer in its place. The whole
runner runs inside one function, so what it calls is bound before the code runs: replacing
attributes of ``__main__`` changes nothing (the test process does not rely even on that).
"""

from __future__ import annotations

__all__ = ["RUNNER"]

# The runner executes inside the code process. It must only use the standard library. Its body
# runs inside one function, so what it calls is bound in that function's scope before the code
# is imported: the code can replace any attribute of ``__main__`` without changing what runs.
_BODY = r"""
import json, os, sys

def _limits(cfg):
    import resource
    for name, value in [('RLIMIT_AS', cfg['memory_bytes']), ('RLIMIT_CPU', cfg['cpu_s']),
                        ('RLIMIT_FSIZE', cfg['fsize_bytes']), ('RLIMIT_NPROC', cfg['nproc']),
                        ('RLIMIT_CORE', 0), ('RLIMIT_NOFILE', 1024)]:
        which = getattr(resource, name, None)
        if which is None:
            continue
        # CPU: SIGXCPU at the soft limit (reported), SIGKILL one second later if it is ignored.
        top = value + 1 if name == 'RLIMIT_CPU' else value
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value, top = min(value, hard), min(top, hard)
        try:
            resource.setrlimit(which, (value, top))
        except (ValueError, OSError):
            pass

# Bound before the code runs: the code may patch modules and builtins; the runner keeps working.
_encode = json.JSONEncoder(check_circular=False).encode
_decode = json.JSONDecoder().decode
_write, _getpid = os.write, os.getpid

def _send(fd, obj):
    # What the code printed is on disk before the test process hears from us (it may kill us next).
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    obj['pid'] = _getpid()
    data = (_encode(obj) + '\n').encode('utf-8', 'surrogatepass')
    while data:
        data = data[_write(fd, data):]

def _selfcheck(cfg):
    # What confines this process, verified from inside before any code runs. Each name is
    # claimed only when the check itself held; the test process decides what is required.
    import socket
    held = []
    status = {}
    try:
        with open('/proc/self/status') as fh:
            status = dict(line.rstrip('\n').split(':\t', 1) for line in fh if ':\t' in line)
    except OSError:
        pass
    try:
        with open('/proc/self/uid_map') as fh:
            if fh.read().split() != ['0', '0', '4294967295']:
                held.append('user_namespace')
    except OSError:
        pass
    # The worker of our own pid 1, and no other process in sight.
    if os.getppid() == 1 and len([e for e in os.listdir('/proc') if e.isdigit()]) <= 3:
        held.append('pid_namespace')
    try:
        if [name for _, name in socket.if_nameindex()] in ([], ['lo']):
            held.append('network_namespace')
    except OSError:
        pass
    if os.getuid() != 0 and os.geteuid() != 0:
        held.append('unprivileged_uid')
    if all(status.get(k, '').strip('0') == '' and k in status
           for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')):
        held.append('no_capabilities')
    if status.get('NoNewPrivs', '').strip() == '1':
        held.append('no_new_privs')
    if status.get('Seccomp', '').strip() == '2' and _denied_in_child():
        held.append('seccomp')
    if _read_only(cfg):
        held.append('read_only_fs')
    if cfg.get('hidden') and not any(os.path.exists(p) for p in cfg['hidden']):
        held.append('private_root')
    try:
        disk = os.statvfs(cfg['scratch'])
        if disk.f_blocks * disk.f_frsize <= cfg['disk_bytes']:
            held.append('scratch_capped')
    except (OSError, KeyError, TypeError):
        pass
    return held

def _denied_in_child():
    # unshare(CLONE_NEWUSER) and ptrace(PTRACE_TRACEME) must both fail with EPERM; tried in a
    # child, so a call that succeeds changes nothing here.
    import ctypes
    pid = os.fork()
    if pid == 0:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            ok = libc.unshare(0x10000000) != 0 and ctypes.get_errno() == 1
            ok = ok and libc.ptrace(0, 0, None, None) != 0 and ctypes.get_errno() == 1
            os._exit(0 if ok else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

def _mounts_read_only(scratch):
    # Every mount is read-only but the scratch (and what is below it), devpts and device nodes
    # bound one by one (/dev/null): a writable mount anywhere else means the code can write there.
    import re, stat
    scratch = os.fsencode(os.path.realpath(scratch)).rstrip(b'/') or None if scratch else None
    try:
        with open('/proc/self/mountinfo', 'rb') as fh:
            lines = fh.read().splitlines()
    except OSError:
        return False
    for line in lines:
        head, sep, tail = line.partition(b' - ')
        fields = head.split()
        if not sep or len(fields) < 6 or not tail.split():
            return False
        if b'ro' in fields[5].split(b',') or tail.split()[0] == b'devpts':
            continue
        point = re.sub(rb'\\([0-7]{3})', lambda m: bytes([int(m.group(1), 8) & 255]), fields[4])
        if scratch is not None and (point == scratch or point.startswith(scratch + b'/')):
            continue
        try:
            mode = os.stat(point, follow_symlinks=False).st_mode
        except OSError:
            return False
        if not (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
            return False
    return bool(lines)

def _read_only(cfg):
    # Opening for writing is the whole probe: nothing is written, a created file is removed.
    if not _mounts_read_only(cfg.get('scratch')):
        return False
    name = '.ablation-probe-%d' % os.getpid()
    for path in ('/proc/sys/kernel/domainname', '/proc/sys/kernel/hostname'):
        try:
            os.close(os.open(path, os.O_WRONLY))
            return False
        except OSError:
            pass
    for folder in ('/', sys.prefix, '/usr'):
        path = os.path.join(folder, name)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError:
            continue
        os.unlink(path)
        return False
    return True

def _init(rep):
    # pid 1 of the namespace: reap everything, report how the worker ended, then exit (which
    # makes the kernel kill whatever is left in the namespace).
    worker = os.fork()
    if worker == 0:
        return
    status = None
    while status is None:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == worker:
            status = st
    if status is not None:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
        try:
            _send(rep, {'ended': [code, sig]})
        except OSError:
            pass
    os._exit(0)

class _Large(Exception):
    pass

class _Unhashable(Exception):
    pass

class _Codec:
    # Plain data by value; anything else as a handle. A dict or set whose keys are not all
    # plain is a handle as a whole (a handle cannot be hashed in the test process). While
    # `budget` is a number, a value whose JSON would exceed it raises _Large.
    PLAIN = (type(None), bool, int, float, str)

    def __init__(self):
        self.objects = []
        self.budget = None

    def handle(self, obj):
        self.objects.append(obj)
        return {'$h': len(self.objects) - 1, 'type': type(obj).__name__}

    def spend(self, units):
        if self.budget is not None:
            self.budget -= units
            if self.budget < 0:
                raise _Large()

    def enc(self, v, depth=0, key=False):
        t = type(v)
        if depth > 200:
            raise ValueError('value nested deeper than 200 levels')
        if t in self.PLAIN:
            if t is int and v.bit_length() > 10000:
                raise ValueError('integer with more than 10000 bits')
            if t is str:
                self.spend(len(v))  # first a bound that needs no encoding, then the exact size
                self.spend(len(_encode(v)) - len(v))
            else:
                self.spend(8 + (v.bit_length() // 3 if t is int else 16))
            return v
        self.spend(8)
        if t is list and not key:
            return [self.enc(x, depth + 1) for x in v]
        if t is tuple or t is set or t is frozenset:
            tag = {tuple: '$t', set: '$s', frozenset: '$f'}[t]
            try:
                return {tag: [self.enc(x, depth + 1, key or t is not tuple) for x in v]}
            except _Unhashable:
                if key:
                    raise
                return self.handle(v)
        if t is dict and not key:
            try:
                return {'$d': [[self.enc(k, depth + 1, True), self.enc(x, depth + 1)]
                               for k, x in v.items()]}
            except _Unhashable:
                return self.handle(v)
        if t is bytes:
            self.spend(2 * len(v))
            return {'$b': v.hex()}
        if key:
            raise _Unhashable()
        return self.handle(v)

    def dec(self, v):
        if type(v) is list:
            return [self.dec(x) for x in v]
        if type(v) is not dict:
            return v
        (tag, x), = v.items()
        if tag == '$h':
            return self.objects[x]
        if tag == '$b':
            return bytes.fromhex(x)
        if tag == '$d':
            return {self.dec(k): self.dec(y) for k, y in x}
        items = [self.dec(y) for y in x]
        return {'$t': tuple, '$s': set, '$f': frozenset}[tag](items)

def _describe(codec, ns, reply_bytes):
    # Plain values by value up to a size (each at most 1/16 of the reply limit, all together at
    # most 1/4), larger ones and everything else as handles: the tests fetch what they use.
    names, left = {}, reply_bytes // 4
    for key, value in list(ns.items()):
        if key.startswith('__') or type(value) is type(sys):
            continue
        if isinstance(value, type) and issubclass(value, BaseException):
            names[key] = {'exception': [c.__name__ for c in value.__mro__]}
            continue
        codec.budget = start = min(reply_bytes // 16, left)
        try:
            names[key] = {'value': codec.enc(value)}
            left -= start - codec.budget
        except (ValueError, RecursionError, _Large):
            codec.budget = None
            names[key] = {'value': codec.handle(value)}
    codec.budget = None
    return names

def _error(exc):
    try:
        text = str(exc)
    except BaseException:
        text = '<unprintable>'
    return {'raise': [c.__name__ for c in type(exc).__mro__], 'msg': text[:2000]}

def _serve(codec, req, rep, restore):
    special = {'len': len, 'iter': lambda o: list(o), 'contains': lambda o, x: x in o,
               'getitem': lambda o, k: o[k]}
    while True:
        line = req.readline()
        if not line:
            return
        msg = _decode(line.decode('utf-8', 'surrogatepass'))
        try:
            target = codec.dec(msg['target'])
            args = codec.dec(msg.get('args', []))
            op = msg['op']
            if op == 'call':
                value = target(*args, **codec.dec(msg.get('kwargs', {'$d': []})))
            elif op == 'getattr':
                value = getattr(target, args[0])
            else:
                value = special[op](target, *args)
            restore()
            answer = {'ok': codec.enc(value)}
        except BaseException as exc:
            restore()
            answer = _error(exc)
        _send(rep, answer)

def _main():
    cfg = json.loads(sys.argv[1])
    rep = cfg['rep']
    _limits(cfg)
    if os.getpid() == 1:
        _init(rep)
    _send(rep, {'isolation': _selfcheck(cfg)})
    req = os.fdopen(cfg['req'], 'rb')
    line = req.readline()
    if not line:  # the test process did not send the code (its self-check failed): nothing to run
        os._exit(0)
    first = _decode(line.decode('utf-8', 'surrogatepass'))
    codec = _Codec()
    sys.argv = ['solution.py']
    try:
        code = compile(first['code'], 'solution.py', 'exec')
    except (SyntaxError, ValueError) as exc:
        _send(rep, dict(_error(exc), stage='compile'))
        return
    import builtins
    saved, live = dict(vars(builtins)), vars(builtins)

    def restore():
        # What the code did to builtins does not break the runner (its functions see it too).
        if live != saved:
            live.clear()
            live.update(saved)

    ns = {'__name__': 'solution'}
    try:
        exec(code, ns)
    except BaseException as exc:
        restore()
        _send(rep, dict(_error(exc), stage='import'))
        return
    restore()
    _send(rep, {'ready': _describe(codec, ns, cfg['reply_bytes'])})
    _serve(codec, req, rep, restore)
"""

RUNNER = (
    "def _runner():\n"
    + "".join("    " + line if line.strip() else line for line in _BODY.splitlines(True))
    + "    _main()\n\n_runner()\n"
)
