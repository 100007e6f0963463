"""One call on a second thread while the caller goes on: a large report's exact MDE.

numpy releases the GIL in its loops (the binomial tails' array arithmetic, sorts,
``searchsorted``), so the exact MDE and the rest of a large report overlap on two cores. Nothing
is shared but read-only inputs, so the numbers are the same as in one thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TypeVar

__all__ = ["in_background"]

T = TypeVar("T")


@contextlib.contextmanager
def in_background(call: Callable[[], T], run: bool) -> Iterator[Callable[[], T]]:
    """Start ``call`` on a second thread (when ``run``, else not at all) and yield the getter of
    its result (``call`` itself when not ``run``).

    Leaving the block waits for the thread, also when the block raised; an exception of
    ``call`` is raised by the getter.
    """
    if not run:
        yield call
        return
    from concurrent.futures import ThreadPoolExecutor  # a thread pool only when it is used

    with ThreadPoolExecutor(1, thread_name_prefix="ablation-stats") as pool:
        yield pool.submit(call).result
