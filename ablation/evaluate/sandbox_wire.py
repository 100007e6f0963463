"""The test process's side of the wire to the code process: the channel, the codec, the proxies.

:data:`WIRE` is part of the test process's source (:data:`ablation.evaluate.sandbox_harness.HARNESS`
includes it). It defines:

* ``_Channel``: newline-delimited JSON over two pipes, read with ``select`` so a code process that
  died (or whose forked children keep the pipe open) is noticed, in time linear in the bytes
  received; every answer must carry the worker's pid, so a forked copy cannot answer
  (``forged``; ``process_limit`` when the copy reports that a fork was refused with
  ``BlockingIOError``, as ``RLIMIT_NPROC`` refuses one for a user that is not root); a message over the reply limit, or one the test process cannot hold in memory, fails the
  run (``output_limit``), one that is not JSON or malformed fails it too (``bad_output``); the
  code can write on the pipe itself, so even the code process's pid 1's report of how its
  worker ended is taken only in its own shape (two integers).
* ``_Codec``: the tagged JSON of plain data (``$t`` tuple, ``$s`` set, ``$f`` frozenset, ``$d``
  dict of pairs, ``$b`` bytes hex, ``$h`` handle), checked by exact type both ways and to a depth
  of 200; exceptions of the code become the builtin exception of the same name, or a local
  class of the code's exception classes built on the nearest builtin ancestor (so
  ``except ValueError`` and ``except TheirError`` both work); ``SystemExit``,
  ``KeyboardInterrupt``, ``GeneratorExit``, ``StopIteration`` and ``StopAsyncIteration`` (and
  the code's subclasses of the last two) become ``RuntimeError``, so a call of the code cannot
  end the tests' ``map`` or ``next`` early as if it were exhausted.
* ``Remote``: the proxy of a handle. Calls, attributes, ``len``, ``iter``, ``in`` and ``[]``
  cross the pipe; ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``bool``, ``hash`` and setting
  attributes raise ``TypeError`` ("plain data only"), so an object of the code can never satisfy
  an assertion by itself.
"""

from __future__ import annotations

__all__ = ["WIRE"]

# Part of the harness: executes inside the test process; standard library only.
WIRE = r"""
class _Fail(Exception):
    pass

def _fork_refused(msg):
    # A failure message whose exception is BlockingIOError (EAGAIN, as a fork past RLIMIT_NPROC
    # raises it). It only ever names why a run failed; it can never make one pass.
    names = msg.get('raise')
    return type(names) is list and 'BlockingIOError' in names

class _Channel:
    def __init__(self, proc, req, rep, pid, limit):
        self.proc, self.req, self.rep, self.pid, self.ended = proc, req, rep, pid, None
        self.status, self.limit = None, limit
        self.buffer, self.scanned = bytearray(), 0

    def _line(self):
        # Linear in the bytes received: appends grow the buffer in place, each byte is scanned
        # for the newline once, and a message over the limit ends the run without being kept.
        import select
        while True:
            at = self.buffer.find(b'\n', self.scanned)
            if at >= 0:
                line = bytes(self.buffer[:at])
                del self.buffer[:at + 1]
                self.scanned = 0
                return line
            self.scanned = len(self.buffer)
            if len(self.buffer) > self.limit:
                raise _Fail('reply_limit: the code process sent a value larger than %d bytes'
                            % self.limit)
            ready = select.select([self.rep], [], [], 0.05)[0]
            if not ready and self.proc.poll() is None:
                continue
            # Readable, or the code process is gone: take what is in the pipe without blocking.
            chunk = os.read(self.rep, 1 << 16) if ready else b''
            if not chunk:
                raise _Fail('ended')
            self.buffer += chunk

    def receive(self):
        while True:
            try:
                msg = json.loads(self._line().decode('utf-8', 'surrogatepass'))
            except (ValueError, RecursionError):
                raise _Fail('the code process sent a message that is not JSON')
            except MemoryError:  # within the reply limit, but objects cost more than their JSON
                raise _Fail('reply_limit: the code process sent a message larger than the test '
                            'process can hold in memory')
            if type(msg) is not dict:
                raise _Fail('the code process sent a message that is not an object')
            if 'ended' in msg and msg.get('pid') == 1 and self.pid == 2:
                # The code can write this line too: only [exit code, signal] is taken.
                ended = msg['ended']
                if type(ended) is not list or [type(x) for x in ended] != [int, int]:
                    raise _Fail('the code process sent a malformed message')
                self.ended = ended
                continue
            if msg.get('pid') != self.pid:
                raise _Fail('fork_limit' if _fork_refused(msg) else 'forged')
            return msg

    def ask(self, msg):
        data = (json.dumps(msg) + '\n').encode('utf-8', 'surrogatepass')
        try:
            while data:
                data = data[os.write(self.req, data):]
        except OSError:
            raise _Fail('ended')
        return self.receive()

# Exceptions that steer control flow rather than report an error: raised by a call of the code,
# StopIteration would end the tests' map() or next() as if exhausted (all(map(...)) holds).
_CONTROL = (SystemExit, KeyboardInterrupt, GeneratorExit, StopIteration, StopAsyncIteration)

_REFUSE = ('plain data only: this is a %s object of the code under test; compare what it returns'
           ' (None, bool, int, float, str, bytes, list, tuple, dict, set)')

def _proxy_class(channel, codec):
    class Remote:
        __slots__ = ('_h', '_t')
        def __init__(self, h, t):
            object.__setattr__(self, '_h', h)
            object.__setattr__(self, '_t', t)
        def _ask(self, op, *args, **kwargs):
            msg = {'op': op, 'target': {'$h': self._h}, 'args': codec.enc(list(args))}
            if kwargs:
                msg['kwargs'] = codec.enc(kwargs)
            return codec.answer(channel.ask(msg))
        def __call__(self, *args, **kwargs):
            return self._ask('call', *args, **kwargs)
        def __getattr__(self, name):
            if name.startswith('__'):
                raise AttributeError(name)
            return self._ask('getattr', name)
        def __len__(self):
            return self._ask('len')
        def __iter__(self):
            return iter(self._ask('iter'))
        def __contains__(self, item):
            return self._ask('contains', item)
        def __getitem__(self, key):
            return self._ask('getitem', key)
        def __repr__(self):
            return '<%s object of the code under test>' % self._t
        def _refuse(self, *args):
            raise TypeError(_REFUSE % self._t)
        __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __hash__ = _refuse
        __setattr__ = __delattr__ = _refuse
    return Remote

class _Codec:
    def __init__(self):
        self.remote, self.errors = None, {}

    def enc(self, v, depth=0):
        t = type(v)
        if depth > 200:
            raise ValueError('value nested deeper than 200 levels')
        if v is None or t in (bool, int, float, str):
            return v
        if t is list:
            return [self.enc(x, depth + 1) for x in v]
        if t in (tuple, set, frozenset):
            tag = {tuple: '$t', set: '$s', frozenset: '$f'}[t]
            return {tag: [self.enc(x, depth + 1) for x in v]}
        if t is dict:
            return {'$d': [[self.enc(k, depth + 1), self.enc(x, depth + 1)] for k, x in v.items()]}
        if t is bytes:
            return {'$b': v.hex()}
        if t is self.remote:
            return {'$h': v._h}
        raise TypeError('only plain data can be passed to the code under test, not %s'
                        % t.__name__)

    def dec(self, v, depth=0):
        if depth > 200:
            raise _Fail('the code process sent a value nested deeper than 200 levels')
        t = type(v)
        if v is None or t in (bool, int, float, str):
            return v
        if t is list:
            return [self.dec(x, depth + 1) for x in v]
        if t is not dict or not v:
            raise _Fail('the code process sent a malformed value')
        if '$h' in v and type(v['$h']) is int and type(v.get('type')) is str:
            return self.remote(v['$h'], v['type'])
        if len(v) != 1:
            raise _Fail('the code process sent a malformed value')
        (tag, x), = v.items()
        if type(x) is not (str if tag == '$b' else list):
            raise _Fail('the code process sent a malformed value')
        kind = {'$t': tuple, '$s': set, '$f': frozenset}.get(tag)
        if kind is None and tag not in ('$b', '$d'):
            raise _Fail('the code process sent a malformed value')
        try:
            if tag == '$b':
                return bytes.fromhex(x)
            if tag == '$d':
                return {self.dec(k, depth + 1): self.dec(y, depth + 1) for k, y in x}
            return kind(self.dec(y, depth + 1) for y in x)
        except (TypeError, ValueError) as exc:
            # A handle as a dict key or set element (it refuses hash()), a pair that is not two
            # items, hex that is not hex: what the runner never sends.
            raise _Fail('the code process sent a malformed value (%s)' % _fmt(exc))

    def exception(self, names, msg):
        import builtins
        for name in names if type(names) is list else []:
            name = str(name)
            local = self.errors.get(name)
            if local is not None:
                return local(msg)
            found = getattr(builtins, name, None)
            if isinstance(found, type) and issubclass(found, BaseException):
                if issubclass(found, _CONTROL):
                    return RuntimeError('the code raised %s: %s' % (name, msg))
                return found(msg)
        return RuntimeError(str(msg))

    def answer(self, msg):
        if 'ok' in msg:
            return self.dec(msg['ok'])
        raise self.exception(msg.get('raise'), str(msg.get('msg', '')))

    def exception_classes(self, described):
        import builtins
        pending = {k: v['exception'] for k, v in described.items() if 'exception' in v}
        for key, mro in sorted(pending.items(), key=lambda kv: len(kv[1])):
            base = RuntimeError
            for name in mro[1:]:
                if name in self.errors:
                    base = self.errors[name]
                    break
                found = getattr(builtins, str(name), None)
                if isinstance(found, type) and issubclass(found, Exception):
                    base = RuntimeError if issubclass(found, _CONTROL) else found
                    break
            self.errors[mro[0]] = type(str(mro[0]), (base,), {})
            self.errors[key] = self.errors[mro[0]]
"""
