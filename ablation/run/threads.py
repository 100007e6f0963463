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
    """An executor that runs each call in a fresh daemon thread (never joined at exit).

    Concurrency is bounded by the caller (the engine runs at most ``concurrency`` trials), so one
    thread per call is enough; a thread whose call overran is simply left behind.

    Args:
        name: Prefix of the threads' names (visible in ``py-spy`` and tracebacks).
    """

    def __init__(self, name: str = "ablation-agent") -> None:
        self.name = name
        self._count = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Start ``fn(*args, **kwargs)`` in a new daemon thread and return its future."""
        future: Future[Any] = Future()
        call = (lambda *a: fn(*a, **kwargs)) if kwargs else fn
        with self._lock:
            self._count += 1
            label = f"{self.name}-{self._count}"
        threading.Thread(target=_run, args=(future, call, args), name=label, daemon=True).start()
        return future


_DEFAULT = DaemonExecutor("ablation-worker")


async def run_in_daemon_thread(fn: Callable[..., Any], /, *args: Any) -> Any:
    """``asyncio.to_thread`` without the join at exit: await ``fn(*args)`` run in a daemon thread.

    Like ``asyncio.to_thread``, the call sees a copy of the caller's context variables.
    """
    context = contextvars.copy_context()
    return await asyncio.wrap_future(_DEFAULT.submit(context.run, fn, *args))
