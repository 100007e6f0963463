"""Trial deadlines on one shared timer instead of one timer per trial.

``asyncio.timeout(timeout_s)`` per trial schedules a timer and cancels it again for every trial,
and with deadlines far in the future the cancelled timers pile up in the loop's heap, a cost that
grows with the number of fast trials. A trial still
runs inside its own :class:`asyncio.Timeout` (entered with no deadline), so expiry, the
``TimeoutError`` it raises and its cancellation bookkeeping are asyncio's own; :class:`Deadlines`
only decides *when* each scope expires. It keeps the deadline of every trial in flight and one
timer set at the earliest of them; when that timer fires, every scope whose deadline has passed
is rescheduled to that deadline (so asyncio expires it on the next turn of the loop) and the timer
moves to the next deadline.

Assumptions: every trial has the same limit, so a new trial's deadline is never earlier than one
already registered and the timer never has to move earlier; calls come from the loop's thread.
Runs that share one :class:`Deadlines` on one loop share its timer; a run on a new loop (the
engine's ``run`` called again) starts afresh. When a run ends, its every scope has been
discarded: the timer then fires once at most, finds nothing due and is not set again.
"""

from __future__ import annotations

import asyncio

__all__ = ["Deadlines"]


class Deadlines:
    """Expires registered :class:`asyncio.Timeout` scopes ``limit_s`` seconds after registration.

    Args:
        limit_s: Seconds a scope may stay open (the trial's ``timeout_s``).
    """

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self._open: dict[asyncio.Timeout, float] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def add(self, scope: asyncio.Timeout) -> None:
        """Give ``scope`` (entered, with no deadline of its own) the deadline now + ``limit_s``."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # the first call, or a new run on a new loop
            self._loop, self._timer = loop, None
            self._open.clear()
        deadline = loop.time() + self.limit_s
        self._open[scope] = deadline
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._fire, loop)

    def overdue(self, scope: asyncio.Timeout) -> bool:
        """Whether ``scope``'s deadline has passed, expired by the timer yet or not (a thread
        holding the GIL can keep the loop from running the expiry until after its trial ended)."""
        if scope.when() is not None:  # rescheduled by :meth:`_fire`: due
            return True
        deadline = self._open.get(scope)
        return deadline is not None and self._loop is not None and self._loop.time() >= deadline

    def discard(self, scope: asyncio.Timeout) -> None:
        """Forget ``scope`` (its trial ended, in time or not)."""
        self._open.pop(scope, None)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        """Expire the scopes whose deadline has passed; set the timer to the next deadline."""
        if loop is not self._loop or self._timer is None:  # a timer of an earlier run's loop
            return
        now = max(self._timer.when(), loop.time())
        self._timer = None
        due = [(scope, when) for scope, when in self._open.items() if when <= now]
        for scope, when in due:
            del self._open[scope]
            scope.reschedule(when)  # in the past: asyncio expires the scope on the next turn
        if self._open:
            self._timer = loop.call_at(min(self._open.values()), self._fire, loop)
