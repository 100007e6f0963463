"""Independent, reproducible random streams for each comparison of a report.

Each bootstrap in a report gets its own generator, derived from the campaign seed and the
comparison's name with :class:`numpy.random.SeedSequence`, so adding a metric never shifts the
random numbers another metric sees (STATISTICS.md section 3, "Seeding").
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["stream"]


def stream(seed: int, name: str) -> np.random.Generator:
    """A generator for the comparison ``name`` under the campaign ``seed``.

    Args:
        seed: The campaign seed.
        name: A stable name of the comparison (e.g. ``"uplift"``, ``"quality:rubric"``).

    Returns:
        A fresh :class:`numpy.random.Generator`; the same arguments give the same stream.
    """
    return np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, zlib.crc32(name.encode())]))
