"""Daemon worker threads for sync agents, verifiers and scorers.

Why not :class:`concurrent.futures.ThreadPoolExecutor`: its workers are joined at interpreter exit
(``concurrent.futures.thread._python_exit``) and ``asyncio.run`` joins the loop's default executor,
so one sync call that never returns (``time.sleep(10**9)``, a socket that trickles one byte every
few seconds) keeps the process alive forever after the report was printed. Python threads cannot
be killed; what can be done is to not wait for them. :class:`DaemonExecutor` runs every call in a
daemon thread, so a timed-out call is abandoned (its result discarded) and never holds the exit.

Assumption: the abandoned call does no harm by running on; use ``isolation="process"`` (see
:mod:`ablation.run.isolation`) when it might (memory, files, ``os._exit``).
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

__all__ = ["DaemonExecutor", "run_in_daemon_thread"]


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
    delays another call. Reusing threads matters at scale (issue 13): starting a thread per
    call cost most of a no-op trial's time and let the process's memory creep with every
    thread's allocator arena. A worker idle for ``idle_s`` seconds ends.

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
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]]
        self._queue = queue.SimpleQueue()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` in an idle daemon worker (or a new one); return its future."""
        future: Future[Any] = Future()
        call = (lambda *a: fn(*a, **kwargs)) if kwargs else fn
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._count += 1
                label = f"{self.name}-{self._count}"
            else:
                self._idle -= 1
        self._queue.put((future, call, args))
        if spawn:
            threading.Thread(target=self._work, name=label, daemon=True).start()
        return future

    def _work(self) -> None:
        get = self._queue.get
        while True:
            try:
                future, call, args = get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # more waiting workers than queued calls: this one ends
                        self._idle -= 1
                        return
                continue
            _run(future, call, args)
            del future, call, args  # hold no result while idle
            with self._lock:
                self._idle += 1


_DEFAULT = DaemonExecutor("ablation-worker")


async def run_in_daemon_thread(fn: Callable[..., Any], /, *args: Any) -> Any:
    """``asyncio.to_thread`` without the join at exit: await ``fn(*args)`` run in a daemon thread.

    Like ``asyncio.to_thread``, the call sees a copy of the caller's context variables.
    """
    context = contextvars.copy_context()
    return await asyncio.wrap_future(_DEFAULT.submit(context.run, fn, *args))
