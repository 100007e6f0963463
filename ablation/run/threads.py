"""Daemon worker threads for sync agents, verifiers and scorers.

They run in :class:`~ablation.daemon_pool.DaemonExecutor` workers (its docstring says why not
:class:`concurrent.futures.ThreadPoolExecutor`): a timed-out call is abandoned, its result
discarded, and never holds the exit. Assumption: the abandoned call does no harm by running on;
use ``isolation="process"`` (see :mod:`ablation.run.isolation`) when it might (memory, files,
``os._exit``).

:class:`LoopCaller` is the engine's way into the pool from an event loop: a call's outcome goes
straight to an :class:`asyncio.Future`, without the :class:`concurrent.futures.Future` and the
two-way chaining of ``loop.run_in_executor`` (machinery that costs more than a fast trial's own
work), and the outcomes of calls that finish together reach the loop in one wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ablation.daemon_pool import DaemonExecutor
from ablation.forks import leave_if_forked

__all__ = [
    "DaemonExecutor", "LoopCaller", "RefusingStop", "await_future", "call_refusing_stop", "run_in_daemon_thread",
]

class LoopCaller:
    """Awaitable calls into a :class:`DaemonExecutor` from one event loop.

    ``await caller.call(fn, *args)`` returns ``fn(*args)`` or raises what it raised, like
    ``await loop.run_in_executor(pool, fn, *args)``, and like it runs ``fn`` in the worker's own
    context (not a copy of the caller's). Cancelling the await abandons the call: it runs on and
    its outcome is dropped. Outcomes are posted to an inbox; the loop is woken once per batch
    (``call_soon_threadsafe``) and settles every future in it. Assumption: the futures are only
    created, awaited and cancelled on the loop's thread (asyncio futures are not thread-safe).

    Calls run through :func:`call_refusing_stop`, as every threaded call of the engine does, so a
    ``StopIteration`` comes back as the same ``RuntimeError`` on each path.

    Args:
        pool: The executor whose workers run the calls.
        loop: The loop whose coroutines await them.
    """

    def __init__(self, pool: DaemonExecutor, loop: asyncio.AbstractEventLoop) -> None:
        self._pool = pool
        self._loop = loop
        self._lock = threading.Lock()
        self._inbox: list[tuple[asyncio.Future[Any], bool, Any]] = []
        self._woken = False

    async def call(self, fn: Callable[..., Any], /, *args: Any) -> Any:
        """Await ``fn(*args)`` run in a worker thread."""
        future = self._loop.create_future()
        self._pool._dispatch((self._run, future, fn, args))
        ok, value = await future
        if ok:
            return value
        try:
            raise value
        finally:
            del value  # no cycle through this frame's traceback

    def _run(self, future: asyncio.Future[Any], fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """In the worker: call ``fn`` and post ``(ok, result or exception)`` to the inbox."""
        try:
            entry = (future, True, call_refusing_stop(fn, *args))
        except BaseException as exc:
            entry = (future, False, exc)
        with self._lock:
            self._inbox.append(entry)
            if self._woken:
                return
            self._woken = True
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits this call now
            self._loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        """On the loop: resolve every posted future whose await was not cancelled."""
        with self._lock:
            inbox, self._inbox = self._inbox, []
            self._woken = False
        for future, ok, value in inbox:
            if not future.cancelled():
                future.set_result((ok, value))


_DEFAULT = DaemonExecutor("ablation-worker")


def call_refusing_stop(fn: Callable[..., Any], /, *args: Any) -> Any:
    """``fn(*args)``, with a ``StopIteration`` it raises re-raised as a ``RuntimeError`` (its cause).

    For calls made in another thread or process: asyncio refuses to set ``StopIteration`` on a
    future, and a coroutine that lets one out raises a bare ``RuntimeError`` (PEP 479); this
    gives every path the same ``RuntimeError``, naming the call.

    A copy of the process that ``fn`` forked (without ``exec``) ends here instead of returning
    into ablation (:mod:`ablation.forks`).
    """
    pid = os.getpid()
    try:
        return fn(*args)
    except StopIteration as exc:
        raise RuntimeError(f"{getattr(fn, '__name__', 'call')} raised StopIteration") from exc
    finally:
        leave_if_forked(pid)


@dataclass(frozen=True)
class RefusingStop:
    """``fn`` as a callable that calls it through :func:`call_refusing_stop`.

    Equal (and hashing equal) for equal ``fn``, so an executor that caches what it ships per
    callable (:mod:`ablation.run.scaleout`) ships each agent once; pickles with ``fn``.
    """

    fn: Callable[..., Any]

    def __call__(self, *args: Any) -> Any:
        return call_refusing_stop(self.fn, *args)


async def run_in_daemon_thread(fn: Callable[..., Any], /, *args: Any) -> Any:
    """``asyncio.to_thread`` without the join at exit: await ``fn(*args)`` run in a daemon thread.

    Like ``asyncio.to_thread``, the call sees a copy of the caller's context variables.
    """
    context = contextvars.copy_context()
    return await await_future(_DEFAULT.submit(context.run, call_refusing_stop, fn, *args))


async def await_future(future: Future[Any]) -> Any:
    """Await a :class:`concurrent.futures.Future`: its result, or its exception raised in this frame.

    Unlike ``asyncio.wrap_future`` the exception never becomes an asyncio future's exception,
    which the awaiting task would ``throw()`` into the coroutine chain: a thrown ``GeneratorExit``
    closes that chain ("coroutine ignored GeneratorExit") instead of reaching the ``except`` that
    records it as the trial's error. Cancelling the await cancels ``future`` (a call not yet
    started does not start; one running is abandoned).
    """
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def settle(_: Any) -> None:  # on the loop
        if not done.done():
            done.set_result(None)

    def notify(_: Future[Any]) -> None:  # in the thread that finished ``future``
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits this call now
            loop.call_soon_threadsafe(settle, None)

    future.add_done_callback(notify)
    try:
        await done
    except asyncio.CancelledError:
        future.cancel()
        raise
    error = future.exception()  # not ``result()``: it tests the exception's truth (``__bool__``)
    if error is not None:
        raise error
    return future.result()
