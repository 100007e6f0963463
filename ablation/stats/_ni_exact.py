"""Exact unconditional p-value of the paired non-inferiority score test (private).

Berger & Boos (1994) confidence-interval p-value with the Tango (1998) / Nam (1997) score statistic
as the ordering of the tables, the approach of Sidik (2003) for matched pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.stats import _binom_quantile, _dist
from ablation.stats._lazy import LazyModule
from ablation.stats._tango import tango_z_array

_st: Any = LazyModule("scipy.stats")

__all__ = ["BERGER_BOOS_GAMMA", "exact_ni_pvalue"]

BERGER_BOOS_GAMMA = 0.001
_TAIL = 1e-13  # binomial mass left out on each side of the discordant count, per ψ
_GRID = 48
_ZOOM = 17
_TIE = 1e-10


def _critical_c(ns: NDArray[np.int64], n: int, margin: float, z_obs: float) -> NDArray[np.int64]:
    """For each discordant total ``N``, the smallest ``c`` with ``Z(N − c, c) ≥ z_obs``.

    ``Z(−margin)`` increases with ``c`` at fixed ``N`` (more improvements, fewer regressions), so
    ``{Z ≥ z_obs}`` is ``{c ≥ c*(N)}``; ``N + 1`` when no ``c`` reaches it. Ties count as at least
    as extreme (relative tolerance 1e-10).
    """
    thr = z_obs - _TIE * max(1.0, abs(z_obs))
    lo = np.zeros_like(ns)
    hi = ns + 1
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = np.minimum((lo + hi) // 2, ns)
        ok = tango_z_array(ns - mid, mid, n, -margin) >= thr
        hi = np.where(active & ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)


def _tail_curve(
    psi: NDArray[np.float64],
    ns: NDArray[np.int64],
    log_comb: NDArray[np.float64],
    cstar: NDArray[np.int64],
    n: int,
    margin: float,
) -> NDArray[np.float64]:
    """``P_ψ(Z ≥ z_obs)`` under ``Δ = −margin`` for each ψ: ``Σ_N Bin(N; n, ψ)·P(C ≥ c*(N) | N)``.

    The binomial weights are computed in log space (``log_comb`` = ``log C(n, N)``); the conditional
    tails by :func:`ablation.stats._dist.bdtrc` (regularised incomplete beta), never as ``1 − cdf``.
    """
    p = psi[:, None]
    q = (p - margin) / (2.0 * p)  # P(improvement | discordant) under Δ = −margin
    log_w = log_comb[None, :] + _dist.xlogy(ns[None, :], p) + _dist.xlog1py((n - ns)[None, :], -p)
    weight = np.exp(log_w)
    tail = _dist.bdtrc(cstar[None, :] - 1, ns[None, :], q)
    out: NDArray[np.float64] = np.einsum("ij,ij->i", weight, tail)
    return out


def _supremum(
    lo: float, hi: float, curve: Callable[[NDArray[np.float64]], NDArray[np.float64]]
) -> float:
    """Maximum of ``curve`` on ``[lo, hi]``: a 48-point grid, then two 17-point zooms.

    The first zoom covers one grid step either side of each of the three best grid points, the
    second one zoom step either side of the best point so far.
    """
    if hi <= lo:
        return float(curve(np.array([lo]))[0])
    grid = np.linspace(lo, hi, _GRID)
    values = curve(grid)
    step = (hi - lo) / (_GRID - 1)
    centres = grid[np.argsort(values)[-3:]]
    zoom = np.clip((centres[:, None] + np.linspace(-step, step, _ZOOM)[None, :]).ravel(), lo, hi)
    zvalues = curve(zoom)
    best_at = float(zoom[int(np.argmax(zvalues))])
    step2 = 2.0 * step / (_ZOOM - 1)
    zoom2 = np.clip(best_at + np.linspace(-step2, step2, _ZOOM), lo, hi)
    return float(max(values.max(), zvalues.max(), curve(zoom2).max()))


def exact_ni_pvalue(
    b: int, c: int, n: int, margin: float, *, gamma: float = BERGER_BOOS_GAMMA
) -> float:
    """Berger–Boos exact unconditional p-value of H0: ``Δ ≤ −margin`` ordered by ``Z(−margin)``.

    ``p = min(1, sup_{ψ ∈ C_γ} P_ψ(Z(−margin) ≥ z_obs) + γ)``, where ψ is the discordant probability
    (the nuisance parameter at the null boundary ``Δ = −margin``, where ``P(regression) =
    (ψ + margin)/2`` and ``P(improvement) = (ψ − margin)/2``) and ``C_γ`` is the ``1 − γ``
    Clopper–Pearson interval for ψ from ``N = b + c``, intersected with ``[margin, 1]``. Berger & Boos
    (1994) show ``P(p ≤ α) ≤ α`` for every ψ. When ``C_γ`` misses ``[margin, 1]`` the data exclude
    the null (``Δ ≥ −ψ > −margin``) and ``p = γ``. The supremum is taken on a grid over ``C_γ``
    with two zooms (:func:`_supremum`); the binomial mass left out (``≤ 2·10⁻¹³`` per ψ) is added.

    Cost: the ψ interval shrinks like ``1/√n``, so only ``O(√n)`` discordant totals enter.
    """
    nd = b + c
    lo_psi = 0.0 if nd == 0 else float(_st.beta.ppf(gamma / 2.0, nd, n - nd + 1))
    hi_psi = 1.0 if nd == n else float(_st.beta.isf(gamma / 2.0, nd + 1, n - nd))
    lo_psi = max(lo_psi, margin, 1e-12)
    if hi_psi < lo_psi:
        return gamma
    z_obs = float(tango_z_array(b, c, n, -margin))
    n_lo = int(_binom_quantile.binom_ppf(_TAIL, n, lo_psi))
    n_hi = int(_binom_quantile.binom_isf(_TAIL, n, hi_psi))
    ns = np.arange(max(n_lo - 1, 0), min(n_hi + 1, n) + 1, dtype=np.int64)
    log_comb = _dist.gammaln(n + 1.0) - _dist.gammaln(ns + 1.0) - _dist.gammaln(n - ns + 1.0)
    cstar = _critical_c(ns, n, margin, z_obs)

    def curve(psi: NDArray[np.float64]) -> NDArray[np.float64]:
        return _tail_curve(psi, ns, log_comb, cstar, n, margin)

    return float(min(1.0, _supremum(lo_psi, hi_psi, curve) + 2.0 * _TAIL + gamma))
