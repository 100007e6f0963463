"""The C heap around million-row work: give freed pages back, and reuse freed arrays (glibc).

:func:`release_freed_memory` gives the run's freed heap back to the operating system before the
report builds its arrays; :func:`reuse_freed_memory` has later large arrays reuse freed memory.

A million-trial campaign frees most of what its suite scan and its trials allocated, but the C
allocator keeps freed pages mapped, so the report's arrays would stack on top of them: at 10⁶
tasks the process peaked ~150 MB higher. glibc's ``malloc_trim(0)`` returns the free pages at
the top and in the middle of the heap. Elsewhere (macOS, musl) this is a no-op: nothing is
freed there, and nothing goes wrong.
"""

from __future__ import annotations

import functools
import gc
from typing import Any

import numpy as np

__all__ = ["release_freed_memory", "reuse_freed_memory"]


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
    block = np.empty(_BLOCK, dtype=np.uint8)
    del block
