"""The cyclic garbage collector paused while a report is read, paired and built.

A million-task report holds lists of a million ids, categories and families, and makes them
anew (``tolist``, ``compress``, the report's id lists); every young-generation collection that
runs while such a list is young walks all of its elements, and the first full collection walks
everything. At 1e6 tasks that was 0.1-0.35 s of a ~1.5 s report, for nothing: the work makes no
reference cycles (arrays, lists of strings, frozen models). So the collector is paused for the
duration and restored after, whatever happens; reference counting still frees everything as usual.

Switching it back on is not the end of it: the young generation then holds everything made during
the pause, and the first allocation after it walks all of that (57-89 ms after a 1e6-task
``compare_results``, mostly the report's lists of a million ids). So the objects made meanwhile
(and the caller's young objects) join the oldest generation unexamined, with ``gc.freeze()`` then
``gc.unfreeze()``, as if they had survived the young collections; a cycle among them is collected
at the next full collection. Where the caller keeps objects frozen (a ``gc.freeze()`` of its own,
e.g. before forking workers), the young generation is left as it is, so none of them is unfrozen.
Reference: the :mod:`gc` documentation of ``freeze``, ``unfreeze`` and ``get_freeze_count``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; re-enable it after only if it was enabled
    (so nested pauses, and a caller who disabled it, are left as they were), with the objects
    made meanwhile moved to the oldest generation (module docstring)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
