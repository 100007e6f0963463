"""``numpy.quantile`` (method ``"linear"``) and ``numpy.median`` of a 1-D array, by numpy's own
steps but one.

numpy's ``_quantile`` partitions the data at ``np.unique`` of the interpolation indexes, and
``np.unique`` imports ``numpy.ma`` on first use: ~40M instructions (~12 ms), a tenth of a small
comparison's whole report. Here the partition points are deduplicated in Python; the virtual
index ``(n − 1)·q``, the neighbour rules (clipped to the ends, NaN indexes to the last), the
introselect partition and the interpolation ``a + (b − a)·γ`` (``b − (b − a)·(1 − γ)`` for
``γ ≥ ½``) are numpy's (``_quantile``, ``_get_indexes``, ``_lerp`` in
``numpy/lib/_function_base_impl.py``, numpy 2.x), so the result is the same to the bit, signed
zeros included (tests/stats/test_stats_quantile.py compares them).

``np.median`` checks its result for NaN with ``np.ma.isMaskedArray``, which imports ``numpy.ma``
as well (~20 ms with the signatures it parses): :func:`median` takes numpy's steps (``_median``
in the same file: partition at the middle one or two and the last, the mean of the middle ones,
NaN when the last is NaN) without that check, to the same bits.

Assumptions: ``values`` is a non-empty 1-D float array (NaN makes every quantile NaN, as numpy);
``probs`` a 1-D float array in ``[0, 1]``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["linear_quantiles", "median"]


def linear_quantiles(values: NDArray[np.float64], probs: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.quantile(values, probs)`` for a non-empty 1-D float ``values`` (module docstring)."""
    arr = np.array(values, dtype=np.float64)  # a copy: numpy partitions a copy too
    n = arr.size
    virtual = (n - 1) * np.asarray(probs, dtype=np.float64)
    previous = np.floor(virtual)
    following = previous + 1
    for mask, index in ((virtual >= n - 1, -1), (virtual < 0, 0), (np.isnan(virtual), -1)):
        previous[mask] = index
        following[mask] = index
    low, high = previous.astype(np.intp), following.astype(np.intp)
    arr.partition(sorted({0, -1, *low.tolist(), *high.tolist()}))
    a, b = arr[low], arr[high]
    gamma = virtual - low
    diff = b - a
    out: NDArray[np.float64] = np.add(a, diff * gamma)
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    if np.isnan(arr[-1]):  # NaN sorts last: numpy returns it for every quantile
        out[:] = arr[-1]
    return out


def median(values: NDArray[np.float64], *, overwrite: bool = False) -> float:
    """``np.median(values)`` for a non-empty 1-D float ``values`` (module docstring).

    ``overwrite``: ``values`` may be partitioned in place (``np.median``'s ``overwrite_input``).
    """
    arr = values if overwrite else np.array(values, dtype=np.float64)
    n = arr.size
    half = n // 2
    arr.partition([half - 1, half, -1] if n % 2 == 0 else [half, -1])
    if np.isnan(arr[-1]):  # NaN sorts last: numpy's median is then NaN
        return float(arr[-1])
    # np.mean of the middle one or two: numpy's sum starts from 0.0 (so -0.0 gives 0.0), then / n
    if n % 2:
        return float(0.0 + arr[half])
    return float((0.0 + arr[half - 1] + arr[half]) / 2)
