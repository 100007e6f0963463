"""``median`` and ``linear_quantiles``: the report's medians and quantiles, by numpy.

Public names of :mod:`ablation.stats` kept as plain calls of ``numpy.median`` and
``numpy.quantile`` (method ``"linear"``). numpy imports ``numpy.ma`` on their first use (a
one-off cost per process, measured in benchmarks/README.md); no own copy of numpy's internals
is kept to avoid it.

Assumptions: ``values`` is a non-empty 1-D float array (NaN makes every quantile NaN);
``probs`` a 1-D float array in ``[0, 1]``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["linear_quantiles", "median"]


def linear_quantiles(values: NDArray[np.float64], probs: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.quantile(values, probs)`` (method ``"linear"``) as a float array."""
    return np.asarray(np.quantile(np.asarray(values, dtype=np.float64), probs), dtype=np.float64)


def median(values: NDArray[np.float64], *, overwrite: bool = False) -> float:
    """``np.median(values)`` as a float; ``overwrite``: ``values`` may be partitioned in place."""
    return float(np.median(values, overwrite_input=overwrite))
