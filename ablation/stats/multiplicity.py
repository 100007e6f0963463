"""Multiple-comparison adjustment of p-values.

Holm (1979) step-down controls the family-wise error rate under any dependence: use it for gating
decisions. Benjamini & Hochberg (1995) step-up controls the false discovery rate under independence
or positive dependence: use it for exploratory slices. Benjamini & Yekutieli (2001) holds under
arbitrary dependence. No adjustment is needed when a release must pass *every* one of several tests
(intersection–union, Berger 1982).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["adjust_pvalues"]

_METHODS = ("holm", "bh", "by", "bonferroni")


def adjust_pvalues(pvalues: ArrayLike, method: str = "holm") -> NDArray[np.float64]:
    """Adjusted p-values, returned in the original order.

    Matches ``statsmodels.stats.multitest.multipletests(p, method='holm' | 'fdr_bh' | 'fdr_by' |
    'bonferroni')[1]``, including unsorted input with ties.

    Args:
        pvalues: 1-D p-values in ``[0, 1]``.
        method: ``"holm"`` (default), ``"bh"``, ``"by"`` or ``"bonferroni"``.

    Returns:
        A float array of adjusted p-values, capped at 1 (empty input gives an empty array).

    Raises:
        ValueError: On an unknown method, NaN, or values outside ``[0, 1]``.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(p)) or np.any((p < 0.0) | (p > 1.0)):
        raise ValueError("p-values must be finite numbers in [0, 1]")
    m = p.size
    if m == 0:
        return np.empty(0, dtype=np.float64)
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    ranks = np.arange(1, m + 1, dtype=np.float64)
    if method == "holm":
        adj = np.maximum.accumulate((m - ranks + 1.0) * ps)
    else:
        scale = m / ranks
        if method == "by":
            scale = scale * float(np.sum(1.0 / ranks))
        adj = np.minimum.accumulate((scale * ps)[::-1])[::-1]
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(adj, 1.0)
    return out
