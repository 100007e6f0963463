"""A pool of daemon worker threads: an executor whose calls never hold the process's exit.

Why not :class:`concurrent.futures.ThreadPoolExecutor`: its workers are joined at interpreter exit
(``concurrent.futures.thread._python_exit``), and ``asyncio.run`` (or, on Python 3.11,
``loop.shutdown_default_executor``, whose join has no time limit) joins the loop's default
executor, so one call that never returns (``time.sleep(10**9)``, a socket that trickles one byte
every few seconds) keeps the process alive forever after the report was printed, a stopping
signal included. Python threads cannot be killed; what can be done is to not wait for them.
:class:`DaemonExecutor` runs every call in a daemon thread, so a timed-out call is abandoned (its
result discarded) and never holds the exit. It runs the engine's sync agents, verifiers and
scorers (:mod:`ablation.run.threads`) and is the default executor of every event loop ablation
starts (:func:`ablation.eventloop.run_coroutine`: an async agent's ``loop.run_in_executor(None,
fn)``).

Assumption: the abandoned call does no harm by running on; use ``isolation="process"`` (see
:mod:`ablation.run.isolation`) when it might (memory, files, ``os._exit``).
"""

from __future__ import annotations

import collections
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

__all__ = ["DaemonExecutor", "LoopExecutor"]

#: What a worker runs: ``runner(target, fn, args)`` calls ``fn(*args)`` and hands the outcome to
#: ``target`` (a concurrent future, or a loop future with its :class:`~ablation.run.threads.LoopCaller`).
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


class LoopExecutor(ThreadPoolExecutor):
    """A loop's default executor whose calls run in a :class:`DaemonExecutor`, at most
    ``max_workers`` at a time.

    ``loop.set_default_executor`` takes only a :class:`~concurrent.futures.ThreadPoolExecutor`
    (Python 3.11+), so this derives from it and uses none of it: its own threads are never
    started, every call goes to ``pool``, and :meth:`shutdown` waits for nothing (the daemon
    workers are never joined). Like asyncio's own default executor it runs at most
    ``max_workers`` calls at once (by default ``min(32, cpu count + 4)``, the
    :class:`~concurrent.futures.ThreadPoolExecutor` default) and queues the others in order, so
    ``asyncio.gather`` of ten thousand ``asyncio.to_thread`` calls starts a few threads, not ten
    thousand. A call that never returns keeps its place, as it keeps its thread in asyncio's
    executor; a queued call cancelled before it started never runs. One per loop
    (:func:`ablation.eventloop.run_coroutine`), so a call that runs a loop of its own never
    waits for a place its caller holds.

    Args:
        pool: The daemon pool that runs the calls.
        max_workers: Calls running at once.
    """

    def __init__(self, pool: DaemonExecutor, max_workers: int | None = None) -> None:
        super().__init__(max_workers=1, thread_name_prefix=pool.name)
        self.pool = pool
        self.limit = max_workers or min(32, (os.cpu_count() or 1) + 4)
        self._running = 0
        self._waiting: collections.deque[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = collections.deque()
        self._places = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` in ``pool`` when a place is free; return its future."""
        future: Future[Any] = Future()
        call = (lambda *a: fn(*a, **kwargs)) if kwargs else fn
        with self._places:
            start = self._running < self.limit
            if start:
                self._running += 1
            else:
                self._waiting.append((future, call, args))
        if start:
            self.pool._dispatch((self._run_then_next, future, call, args))
        return future

    def _run_then_next(self, future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """Run one call, then the first queued call not cancelled meanwhile (or free the place)."""
        job: tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None = (future, fn, args)
        while job is not None:
            _run(*job)
            job = None
            with self._places:
                while self._waiting:
                    queued = self._waiting.popleft()
                    if not queued[0].cancelled():
                        job = queued
                        break
                if job is None:
                    self._running -= 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: calls still running are abandoned to their daemons; with
        ``cancel_futures``, the queued calls are cancelled."""
        if cancel_futures:
            with self._places:
                waiting, self._waiting = list(self._waiting), collections.deque()
            for future, _, _ in waiting:
                future.cancel()
