"""The worker side of process isolation: one agent call at a time, pickle frames over pipes.

Started by :class:`ablation.run.isolation.ProcessIsolation` as ``python -c "...; main()"`` in a
session of its own (so its process group can be killed as a whole). Protocol: every frame is an
8-byte big-endian length followed by a pickle. The parent sends
``(files, sys_path, fn_blob, input_blob)`` and the worker answers with one tuple:

- ``("ready",)``: ``input_blob`` was ``None``, a request to load the agent only (the parent's
  warm-up before a trial's clock runs), and it loaded (one that failed is answered as raised);
- ``("ok", result_blob)``: the call returned (the result pickled);
- ``("raised", exc_blob, traceback_text)``: the call raised (``BaseException`` included: an agent's
  ``SystemExit`` or ``KeyboardInterrupt`` is that trial's error, never the worker's exit);
- ``("raised_text", type_name, message, traceback_text, lineage)``: the same, for an exception that
  cannot be pickled (or rebuilt from its pickle), with ``lineage`` the ``(module, qualname)`` of
  each class of its type's MRO, so the parent can rebuild it as that class or its nearest base;
- ``("unsendable", message)``: the result cannot be pickled.

An output larger than the campaign's ``max_output_bytes`` (a string or bytes by its length, else
its pickle) is answered as ``("raised_text", "OutputTooLarge", ...)`` instead of being sent, and
an exception whose message is longer than 64 Ki characters is sent as its type, its cut message
and its frames, so neither crosses the pipe whole (:mod:`ablation.run.output_caps` says why).

``files`` maps the module names the parent gave to files it loaded by path (``_ablation_file_*``,
see :func:`ablation.sources.modules.exec_file`) to their paths: when a pickle names such a module,
the worker loads the same file under the same name (:func:`file_attr`). The protocol's pipes are moved off fds 0 and 1
before any agent runs: an agent reading stdin reads ``/dev/null`` and its prints go to stderr, so
nothing it does can corrupt a frame.

The worker dies with its parent: ``PR_SET_PDEATHSIG`` (Linux) plus a thread that watches the
parent's pid, so a parent killed with ``SIGKILL`` leaves no worker behind.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from typing import Any, BinaryIO

from ablation.eventloop import call_to_completion
from ablation.forks import leave_if_forked

__all__ = ["WORKER_MARKER", "file_attr", "main", "read_frame", "write_frame"]

#: Command-line marker of a worker process (visible in ``/proc/PID/cmdline`` and ``ps``).
WORKER_MARKER = "ablation-isolation-worker"

_HEADER = 8
_TEXT_LIMIT = 64 * 1024  # as ablation.run.output_caps.ERROR_TEXT_LIMIT (not imported: a light worker)
_max_output = 0  # the campaign's max_output_bytes (0: no cap), from the command line


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    """Write one length-prefixed frame and flush."""
    stream.write(len(payload).to_bytes(_HEADER, "big") + payload)
    stream.flush()


def read_frame(stream: BinaryIO) -> bytes | None:
    """Read one frame; ``None`` at a clean end of stream (the other side closed its end)."""
    header = _read_exactly(stream, _HEADER)
    if header is None:
        return None
    body = _read_exactly(stream, int.from_bytes(header, "big"))
    if body is None:
        raise EOFError("the stream ended inside a frame")
    return body


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


#: Module names of the files the parent loaded by path -> their paths (sent with every request).
_FILES: dict[str, str] = {}


def file_attr(module: str, qualname: str) -> Any:
    """``module.qualname`` for a module the parent loaded by path, loading the file here if needed.

    The parent pickles functions and classes of such modules as a call of this function (see
    :class:`ablation.run.isolation.FilePickler`): by name, since the file may have been loaded
    twice there (one module object per load), and the worker loads it once.
    """
    if module not in sys.modules and module in _FILES:
        from pathlib import Path

        from ablation.errors import AgentSpecError
        from ablation.sources.modules import exec_file

        exec_file(Path(_FILES[module]), _FILES[module], AgentSpecError)
    obj: Any = sys.modules[module] if module in sys.modules else importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _loads(blob: bytes) -> Any:
    return pickle.Unpickler(io.BytesIO(blob)).load()


def _answer(fn: Any, input_data: Any) -> tuple[Any, ...]:
    try:
        result = call_to_completion(fn, input_data)
    except BaseException as exc:  # the agent's error, whatever it is, is the trial's
        return _raised(exc)
    too_large = f"the agent's output is larger than max_output_bytes={_max_output}"
    if _max_output and isinstance(result, str | bytes | bytearray) and len(result) > _max_output:
        return ("raised_text", "OutputTooLarge", too_large, "")
    try:
        blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        if _max_output and len(blob) > _max_output:
            return ("raised_text", "OutputTooLarge", f"{too_large} (its pickle is {len(blob)} bytes)", "")
        return ("ok", blob)
    except BaseException as exc:
        kind = type(result).__name__
        return ("unsendable", f"the output ({kind}) cannot be pickled: {type(exc).__name__}: {exc}")


def _raised(exc: BaseException) -> tuple[Any, ...]:
    try:
        long = len(str(exc)) > _TEXT_LIMIT
    except BaseException:
        long = False
    if long:  # never format (or pickle) the whole message
        message = str(exc)
        cut = f"{message[:_TEXT_LIMIT]}... [{len(message) - _TEXT_LIMIT} more characters cut]"
        frames = "".join(traceback.format_tb(exc.__traceback__))
        text = f"Traceback (most recent call last):\n{frames}{type(exc).__qualname__}: {cut}\n"
        return ("raised_text", type(exc).__name__, cut, text, _lineage(exc))
    try:  # traceback tests the exception's truth and reads attributes user code may make raise
        text = "".join(traceback.format_exception(exc))
    except BaseException as failed:
        text = f"<the traceback could not be formatted: {type(failed).__name__}>"
    exc.__traceback__ = None
    exc.__context__ = exc.__cause__ = None
    try:
        blob = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(blob)  # some exceptions pickle but cannot be rebuilt (custom __init__)
    except BaseException:
        try:
            message = str(exc)
        except BaseException:
            message = "<str() of the exception raised>"
        return ("raised_text", type(exc).__name__, message, text, _lineage(exc))
    return ("raised", blob, text)


def _lineage(exc: BaseException) -> list[tuple[str, str]]:
    """``(module, qualname)`` of every class in the MRO of ``exc``'s type (empty if unreadable)."""
    try:
        return [(str(c.__module__), str(c.__qualname__)) for c in type(exc).__mro__]
    except BaseException:
        return []


def _die_with_parent(parent: int) -> None:
    """Exit when the parent is gone (kernel signal on Linux, plus a polling thread anywhere)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="ablation-parent-watch").start()


def _limit_memory(megabytes: int) -> None:
    import resource

    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    """Serve agent calls until the parent closes the pipe.

    ``sys.argv``: ``["-c", WORKER_MARKER, parent_pid, memory_mb, max_output_bytes]`` (0: no
    limit, no cap).
    """
    global _max_output
    parent, memory_mb = int(sys.argv[2]), int(sys.argv[3])
    _max_output = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    _die_with_parent(parent)
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when a worker stops
    if memory_mb:
        _limit_memory(memory_mb)
    agents: dict[bytes, Any] = {}
    worker = os.getpid()
    while (frame := read_frame(requests)) is not None:
        files, sys_path, fn_blob, input_blob = pickle.loads(frame)
        _FILES.update(files)
        sys.path[:] = sys_path
        try:
            fn = agents.get(fn_blob)
            if fn is None:
                fn = agents[fn_blob] = _loads(fn_blob)
            input_data = None if input_blob is None else _loads(input_blob)
        except BaseException as exc:
            reply = _raised(exc)
        else:
            reply = ("ready",) if input_blob is None else _answer(fn, input_data)
        leave_if_forked(worker)  # a copy the agent forked never answers for the worker
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        write_frame(replies, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
