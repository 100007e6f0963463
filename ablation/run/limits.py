"""Per-arm rate limiting of agent calls."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["Clock", "RateLimiter"]

Clock = Callable[[], float]


class RateLimiter:
    """Spaces calls so that at most ``rate`` start per second, shared by every worker.

    Args:
        rate: Calls per second (``None`` or ``<= 0``: no limit).
        clock: Monotonic clock in seconds.
    """

    def __init__(self, rate: float | None, *, clock: Clock = time.monotonic) -> None:
        self._interval = 1.0 / rate if rate and rate > 0 else 0.0
        self._next = 0.0
        self._clock = clock

    @property
    def active(self) -> bool:
        """False when there is no limit (callers may then skip :meth:`acquire`)."""
        return self._interval > 0

    async def acquire(self) -> None:
        """Wait for the next free slot."""
        if not self._interval:
            return
        now = self._clock()
        slot = max(now, self._next)
        self._next = slot + self._interval
        if slot > now:
            await asyncio.sleep(slot - now)
