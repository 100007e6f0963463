"""Exact coverage of the one-run headline interval in the sparse regime (n = 10..500).

Used by ``benchmarks/validation.py``. For each n, every table ``(b, c)`` with ``b + c`` in the
central ``1 − 2·10⁻¹³`` of ``Bin(n, ψ)`` is weighted by its trinomial probability
(``P(b) = (ψ − δ)/2``, ``P(c) = (ψ + δ)/2``) and the coverage at ``δ = r·ψ`` is the mass of the
tables whose interval contains δ (left-out mass counts as a miss). ψ runs over ``n·ψ`` = 0.25,
0.5, …, 40 and 0.01, 0.02, …, 0.5 (ψ ≤ 0.5); r over 0, 0.05, …, 1. Tango depends on a table only
through ``(b, c, n)`` and is symmetric in ``b ↔ c``, so ``r ≥ 0`` and the concordant split need
no enumeration.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import gammaln

from ablation.stats._tango import tango_interval_array
from ablation.stats.headline_interval import headline_interval_array

R_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)
TAIL = 1e-13
SPARSE_NS = (*range(10, 101), *range(105, 201, 5), *range(220, 501, 20))


def psi_grid(n: int) -> np.ndarray:
    """ψ values scanned at ``n`` (see the module docstring)."""
    grid = np.concatenate([np.arange(0.25, 40.001, 0.25) / n, np.arange(0.01, 0.5001, 0.01)])
    grid = np.unique(np.round(grid, 10))
    return grid[grid <= 0.5]


def _cells(nmax: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(b, c)`` with ``b + c ≤ nmax``, ordered by ``b + c`` (offset ``N(N + 1)/2``)."""
    nd = np.repeat(np.arange(nmax + 1), np.arange(1, nmax + 2))
    c = np.arange(nd.size) - nd * (nd + 1) // 2
    return (nd - c).astype(np.float64), c.astype(np.float64)


def sparse_row(n: int) -> tuple[int, dict[str, tuple[float, float, float]]]:
    """Lowest exact coverage of plain Tango and of the headline rule at ``n``: (coverage, ψ, r)."""
    nmax = min(n, int(stats.binom.isf(TAIL, n, 0.5)) + 1)
    b, c = _cells(nmax)
    log_comb = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(n - b - c + 1)
    limits = {
        "tango": tango_interval_array(b, c, n, float(stats.norm.isf(0.025))),
        "headline": headline_interval_array(b, c, n, 0.95),
    }
    worst = {k: (2.0, 0.0, 0.0) for k in limits}
    for psi in psi_grid(n):
        lo = int(stats.binom.ppf(TAIL, n, psi))
        hi = min(nmax, int(stats.binom.isf(TAIL, n, psi)))
        s0, s1 = lo * (lo + 1) // 2, (hi + 1) * (hi + 2) // 2
        bb, cc = b[s0:s1], c[s0:s1]
        delta = R_GRID * psi
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p = (
                log_comb[s0:s1][None, :]
                + np.where(bb > 0, bb[None, :] * np.log((psi - delta) / 2)[:, None], 0.0)
                + cc[None, :] * np.log((psi + delta) / 2)[:, None]
                + (n - bb - cc)[None, :] * np.log1p(-psi)
            )
        w = np.exp(log_p)
        for key, (low, high) in limits.items():
            hit = (low[s0:s1][None, :] <= delta[:, None]) & (delta[:, None] <= high[s0:s1][None, :])
            cov = np.sum(w * hit, axis=1)
            j = int(np.argmin(cov))
            if cov[j] < worst[key][0]:
                worst[key] = (float(cov[j]), float(psi), float(R_GRID[j]))
    return n, worst
