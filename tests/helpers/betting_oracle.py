"""The fixed-n betting interval computed on the whole grid, as a reference for the bisection.

Every one of the 2001 candidate means gets both capitals, summed over the tasks in blocks of 256,
and the interval is read off the grid points where neither reaches ``log(2/alpha)``: the
definition of :func:`ablation.stats.task_means.bounded_mean_interval`, with no use of the
capitals' monotonicity. O(n x 2001): for tests of a few thousand tasks.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ablation.stats import task_means

_BLOCK = 256


def log_capitals(
    d: NDArray[np.float64], alpha: float, grid: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Log hedged capitals ``K+``, ``K-`` at every candidate mean of ``x = (d + 1)/2``."""
    x = (d + 1.0) / 2.0
    n = x.size
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x)) / (t + 1.0)
    sq = np.concatenate(([0.0], np.cumsum((x - mu) ** 2)[:-1]))
    var = (0.25 + sq) / t
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (n * var))
    m = (grid + 1.0) / 2.0
    c = task_means._TRUNCATION
    up, down = np.zeros(grid.size), np.zeros(grid.size)
    cap_up, cap_down = c / np.maximum(m, 1e-300), c / np.maximum(1 - m, 1e-300)
    for s in range(0, n, _BLOCK):
        lam_c = lam[s : s + _BLOCK, None]
        dx = x[s : s + _BLOCK, None] - m
        up += np.log1p(np.minimum(lam_c, cap_up) * dx).sum(axis=0)
        down += np.log1p(-np.minimum(lam_c, cap_down) * dx).sum(axis=0)
    return up, down


def grid_interval(d: NDArray[np.float64], alpha: float) -> tuple[float, float, NDArray[np.float64], NDArray[np.float64]]:
    """``(low, high, up, down)``: the interval from every grid point, and the capitals."""
    grid = np.linspace(-1.0, 1.0, task_means._GRID)
    up, down = log_capitals(d, alpha, grid)
    threshold = math.log(2.0 / alpha)
    keep = np.flatnonzero((up < threshold) & (down < threshold))
    if keep.size == 0:
        return -1.0, 1.0, up, down
    low = float(grid[keep[0] - 1]) if keep[0] > 0 else -1.0
    high = float(grid[keep[-1] + 1]) if keep[-1] < grid.size - 1 else 1.0
    return low, high, up, down
