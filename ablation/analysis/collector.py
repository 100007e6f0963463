"""The cyclic garbage collector paused while a report is read, paired and built.

A million-task report holds lists of a million ids, categories and families, and makes them
anew (``tolist``, ``compress``, the report's id lists); every young-generation collection that
runs while such a list is young walks all of its elements, and the first full collection walks
everything. At 1e6 tasks that was 0.1-0.35 s of a ~1.5 s report, for nothing: the work makes no
reference cycles (arrays, lists of strings, frozen models). So the collector is paused for the
duration and restored after, whatever happens; reference counting still frees everything as usual,
and a cycle made meanwhile is collected at the next collection after the pause.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; re-enable it after only if it was enabled
    (so nested pauses, and a caller who disabled it, are left as they were)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
