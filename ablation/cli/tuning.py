"""How the ``ablation`` command tunes its own process around million-row work.

Installed by :func:`ablation.cli.main.main` for one command through
:func:`ablation.process_hooks.installed`; library calls never run any of this
(:mod:`ablation.process_hooks`).

**The cyclic collector** (:func:`collector_paused`).
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

**The C heap** (glibc: :func:`release_freed_memory`, :func:`reuse_freed_memory`).
:func:`release_freed_memory` gives the run's freed heap back to the operating system before the
report builds its arrays (and ``compare``'s, once its reports are built from the result files'
columns, before it serialises them); :func:`reuse_freed_memory` has later large arrays reuse
freed memory.

A million-trial campaign frees most of what its suite scan and its trials allocated, but the C
allocator keeps freed pages mapped, so the report's arrays would stack on top of them: at 10⁶
tasks the process peaked ~150 MB higher. glibc's ``malloc_trim(0)`` returns the free pages at
the top and in the middle of the heap. Elsewhere (macOS, musl) this is a no-op: nothing is
freed there, and nothing goes wrong.

**pyarrow's pool** (:func:`release_arrow_pool`). pyarrow allocates from its own pool (mimalloc
by default), which keeps the parsing blocks of a read it freed: after reading a 1e6-row JSON-lines
file into columns the process held ~110 MiB more than it used, and the second file's read
stacked on top of it. ``MemoryPool.release_unused()`` hands them back after each large read, so
the peak of ``compare`` at 1e6 realistic rows is one file's parse above the columns, not two
(figures in benchmarks/README.md). Reference: the pyarrow ``MemoryPool`` documentation.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
from collections.abc import Iterator
from typing import Any

__all__ = [
    "CommandTuning", "collector_paused", "release_arrow_pool", "release_freed_memory",
    "reuse_freed_memory",
]


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


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none."""
    import ctypes  # loaded when a trim runs: ctypes.util alone imports subprocess
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


def release_freed_memory() -> bool:
    """Collect garbage cycles and return freed heap pages to the OS; whether a trim ran."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


#: Bytes of the block :func:`reuse_freed_memory` allocates and frees: glibc's largest dynamic
#: mmap threshold is 32 MiB (a larger block would not raise it).
_BLOCK = 32_000_000


def reuse_freed_memory() -> None:
    """Have the C allocator keep freed blocks of up to 32 MB for reuse (glibc; elsewhere a no-op).

    glibc serves a block above its mmap threshold (128 KiB at start) with a fresh mapping and
    unmaps it when freed, so each million-row temporary is new memory, faulted in page by page
    (on a VM with free-page reporting, a host fault per page). The first time glibc frees such
    a block it raises the threshold to that block's size (at most 32 MiB), and from then on
    serves blocks up to that size from its heap, where freed memory is used again. Allocating
    and freeing one untouched block of that size makes this happen now instead of by chance
    (two system calls, no page touched). Reference: glibc ``mallopt(3)``, M_MMAP_THRESHOLD.
    """
    import numpy as np  # imported by the work that needs this anyway; not at command start-up

    block = np.empty(_BLOCK, dtype=np.uint8)
    del block


def release_arrow_pool() -> bool:
    """Hand the memory pyarrow's default pool holds unused back to the OS; whether pyarrow was
    loaded (it is never imported here: a process that did not read with it has nothing to give)."""
    arrow = sys.modules.get("pyarrow")
    if arrow is None:
        return False
    arrow.default_memory_pool().release_unused()
    return True


class CommandTuning:
    """The command's :class:`~ablation.process_hooks.ProcessHooks`: large work runs with the
    collector paused and freed arrays reused; freed memory (a finished run, ``compare``'s inputs
    once its reports are built) goes back to the OS, and so does a large read's pyarrow pool."""

    @contextlib.contextmanager
    def large_work(self) -> Iterator[None]:
        with collector_paused():
            reuse_freed_memory()
            yield

    def memory_freed(self) -> None:
        release_arrow_pool()
        release_freed_memory()

    def large_read_finished(self) -> None:
        release_arrow_pool()
