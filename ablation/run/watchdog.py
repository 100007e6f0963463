"""Detect an event loop that stopped turning (an async agent that never awaits).

An async agent doing ``while True: pass`` (or a blocking call without ``await``) holds the event
loop: ``asyncio.timeout`` cannot fire, no other trial progresses and the campaign hangs forever.
:class:`LoopWatchdog` schedules a heartbeat on the loop and a daemon thread checks it; when the loop
has not turned for longer than ``limit_s``, the thread raises :class:`LoopStalled` in the loop's
thread (``PyThreadState_SetAsyncExc``). The trial in progress turns it into
:class:`~ablation.errors.EventLoopBlocked` naming its agent and task, and the campaign stops.

Limits (stated, not hidden): the asynchronous exception is delivered when the blocked thread next
runs Python bytecode; an agent blocked inside one C call (``time.sleep`` in a coroutine) is only
stopped when that call returns. CPython only.
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
import time

__all__ = ["LoopStalled", "LoopWatchdog"]

_BEAT_S = 0.05


class LoopStalled(BaseException):
    """Raised in the loop's thread by the watchdog; never an agent's own error."""


class LoopWatchdog:
    """Heartbeat on the running loop plus a checker thread.

    Args:
        limit_s: How long the loop may stay busy before the campaign is stopped (the trial timeout).
    """

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self.fired = False

    def _beat(self) -> None:
        self._last = time.monotonic()
        if self._loop is not None and not self._stop.is_set():
            self._handle = self._loop.call_later(_BEAT_S, self._beat)

    def start(self) -> None:
        """Start beating on the running loop and watching from a daemon thread."""
        self._loop = asyncio.get_running_loop()
        target = threading.get_ident()
        self._beat()
        threading.Thread(
            target=self._watch, args=(target,), daemon=True, name="ablation-watchdog"
        ).start()

    def stop(self) -> None:
        """Stop watching (idempotent)."""
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()

    def _watch(self, target: int) -> None:
        while not self._stop.wait(min(0.2, self.limit_s / 4)):
            if time.monotonic() - self._last > self.limit_s and not self.fired:
                self.fired = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(target), ctypes.py_object(LoopStalled)
                )
                return
