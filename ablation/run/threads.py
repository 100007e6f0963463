"""Daemon worker threads for sync agents, verifiers and scorers.

Why not :class:`concurrent.futures.ThreadPoolExecutor`: its workers are joined at interpreter exit
(``concurrent.futures.thread._python_exit``) and ``asyncio.run`` joins the loop's default executor,
so one sync call that never returns (``time.sleep(10**9)``, a socket that trickles one byte every
few seconds) keeps the process alive forever after the report was printed. Python threads cannot
be killed; what can be done is to not wait for them. :class:`DaemonExecutor` runs every call in a
daemon thread, so a timed-out call is abandoned (its result discarded) and never holds the exit.

Assumption: the abandoned call does no harm by running on; use ``isolation="process"`` (see
:mod:`ablation.run.isolation`) when it might (memory, files, ``os._exit``).

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
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

from ablation.forks import leave_if_forked

__all__ = [
    "DaemonExecutor", "LoopCaller", "RefusingStop", "await_future", "call_refusing_stop", "run_in_daemon_thread",
]

#: What a worker runs: ``runner(target, fn, args)`` calls ``fn(*args)`` and hands the outcome to
#: ``target`` (a concurrent future, or a loop future with its :class:`LoopCaller`).
_Job = tuple[Callable[[Any, Callable[..., Any], tuple[Any, ...]], None], Any, Callable[..., Any], tuple[Any, ...]]


def _run(future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args)
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)


class DaemonExecutor(Executor):
    """An executor whose worker threads are daemons (never joined at exit) and reused.

    A call goes to an idle worker when there is one, else to a new daemon thread, so a call
    that overran (and was abandoned by a timeout) only keeps its own thread busy: it never
    delays another call. Reusing threads matters at scale: starting a thread per call costs
    most of a no-op trial's time and lets the process's memory creep with every thread's
    allocator arena. A worker idle for ``idle_s`` seconds ends.

    Concurrency is bounded by the caller (the engine runs at most ``concurrency`` trials), so
    the pool holds at most that many threads plus the ones still running abandoned calls.

    Args:
        name: Prefix of the threads' names (visible in ``py-spy`` and tracebacks).
        idle_s: How long an idle worker waits for a call before it ends.
    """

    def __init__(self, name: str = "ablation-agent", idle_s: float = 5.0) -> None:
        self.name = name
        self.idle_s = idle_s
        self._count = 0
        self._lock = threading.Lock()
        # Invariant: _idle == workers waiting on the queue - calls queued and not yet taken.
        self._idle = 0
        self._queue: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` in an idle daemon worker (or a new one); return its future."""
        future: Future[Any] = Future()
        call = (lambda *a: fn(*a, **kwargs)) if kwargs else fn
        self._dispatch((_run, future, call, args))
        return future

    def _dispatch(self, job: _Job) -> None:
        """Queue ``job`` for an idle worker, or start a new worker when none is idle."""
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._count += 1
                label = f"{self.name}-{self._count}"
            else:
                self._idle -= 1
        self._queue.put(job)
        if spawn:
            threading.Thread(target=self._work, name=label, daemon=True).start()

    def _work(self) -> None:
        get = self._queue.get
        while True:
            try:
                runner, target, call, args = get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # more waiting workers than queued calls: this one ends
                        self._idle -= 1
                        return
                continue
            runner(target, call, args)
            del runner, target, call, args  # hold no result while idle
            with self._lock:
                self._idle += 1


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
