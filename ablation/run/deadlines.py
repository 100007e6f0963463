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

A trial's clock can be stopped while it waits for something that is not its own doing (a slot of
the rate limit, :meth:`Deadlines.paused`): the time waited is added to its deadline.

Assumptions: every trial has the same limit, so a new trial's deadline is never earlier than one
already registered and the timer only moves earlier for a paused trial resumed with little time
left; calls come from the loop's thread.
Runs that share one :class:`Deadlines` on one loop share its timer; a run on a new loop (the
engine's ``run`` called again) starts afresh. When a run ends, its every scope has been
discarded: the timer then fires once at most, finds nothing due and is not set again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterator
from contextlib import AbstractContextManager

__all__ = ["Deadlines", "bounded", "paused"]


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
        self._set(scope, loop.time() + self.limit_s)

    @contextlib.contextmanager
    def paused(self, scope: asyncio.Timeout) -> Iterator[None]:
        """Stop ``scope``'s clock for the block: it cannot expire inside it, and afterwards it has
        the time it had left before it (a scope already due, or not registered, is left as is).

        Assumption: the block's await is not the trial's own work (a rate-limit slot), so the
        time spent in it is no part of the trial's ``timeout_s``.
        """
        loop, deadline = self._loop, self._open.pop(scope, None)
        if loop is None or deadline is None:
            yield
            return
        left = deadline - loop.time()
        try:
            yield
        finally:
            if loop is self._loop:
                self._set(scope, loop.time() + left)

    def _set(self, scope: asyncio.Timeout, deadline: float) -> None:
        """Register ``scope``'s ``deadline``; set the timer, or move it to ``deadline`` when it would
        fire later (a paused scope resumed with less time left than the others have)."""
        assert self._loop is not None
        self._open[scope] = deadline
        if self._timer is not None and self._timer.when() > deadline:
            self._timer.cancel()
            self._timer = None
        if self._timer is None:
            self._timer = self._loop.call_at(deadline, self._fire, self._loop)

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


def paused(deadlines: Deadlines | None, scope: asyncio.Timeout) -> AbstractContextManager[None]:
    """:meth:`Deadlines.paused` of ``scope``, or nothing to stop when there is no timeout."""
    return contextlib.nullcontext() if deadlines is None else deadlines.paused(scope)


async def bounded(deadlines: Deadlines | None, call: Awaitable[float]) -> float | None:
    """Await one scorer or tear-down call under a deadline of ``timeout_s`` (none without one).

    The deadline comes from the trials' shared timer, as a trial's does (same limit, so the
    timer's assumption holds). Expiry cancels the await: an async scorer is cancelled, a sync
    one in its daemon thread is abandoned and runs on. Assumption: the scorer does not hold
    the event loop itself (``inline``, or async and never awaiting); the deadline fires only
    when the loop turns, so such a call is stopped by nothing here.

    Returns:
        The call's value, or ``None`` when it outlived its deadline, returned or not (a thread
        holding the GIL can keep the loop from running the expiry until after the call ended).

    Raises:
        BaseException: whatever the call raised, unchanged (a ``TimeoutError`` of its own too).
    """
    if deadlines is None:
        return await call
    scope = asyncio.timeout(None)  # its deadline is set by ``deadlines``
    try:
        async with scope:
            deadlines.add(scope)
            try:
                value = await call
                overran = deadlines.overdue(scope)
            finally:
                deadlines.discard(scope)
    except TimeoutError:
        if scope.expired():
            return None
        raise
    return None if overran or scope.expired() else value
