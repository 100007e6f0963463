"""Calls on other threads while the caller goes on: a large report's exact MDE.

numpy releases the GIL in its loops (the binomial tails' array arithmetic, sorts,
``searchsorted``), so the exact MDE and the rest of a large report overlap on two cores. Nothing
is shared but read-only inputs, so the numbers are the same as in one thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["in_background"]


@contextlib.contextmanager
def in_background(
    calls: tuple[Callable[[], Any], ...], run: bool
) -> Iterator[tuple[Callable[[], Any], ...]]:
    """Start each of ``calls`` on a thread of its own (when ``run``, else not at all) and yield
    the getters of their results, in order (the ``calls`` themselves when not ``run``).

    Leaving the block waits for the threads, also when the block raised; an exception of a call
    is raised by its getter.
    """
    if not run:
        yield calls
        return
    from concurrent.futures import ThreadPoolExecutor  # a thread pool only when it is used

    with ThreadPoolExecutor(len(calls), thread_name_prefix="ablation-stats") as pool:
        yield tuple(pool.submit(call).result for call in calls)
