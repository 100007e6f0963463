"""Critical values of the exact McNemar test, as :func:`ablation.stats.mcnemar` decides (private).

Used by :mod:`ablation.stats.power` for the rejection region ``b ≤ k(N)`` at each discordant
total ``N``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ablation.stats import _dist
from ablation.stats.binary import _binom_cdf

__all__ = ["critical_k"]


def critical_k(ns: NDArray[np.int64], level: float) -> NDArray[np.int64]:
    """Largest ``k`` with ``P(X ≤ k) ≤ level`` for ``X ~ Bin(N, 1/2)``, per ``N`` (−1 if none).

    The comparison is the one :func:`ablation.stats.mcnemar` makes (p ≤ α, with ``level`` α/2
    for a two-sided test: doubling a float is exact), on the tail that test computes: the
    vectorised :func:`_dist.bdtr` decides where it is farther than ``1e-9`` relative from
    ``level``, far beyond its error, and the test's own tail (exact integer sums up to 4096
    pairs, :func:`ablation.stats.binary._binom_cdf`) decides the few tails closer than that,
    such as ``P(X ≤ 0) = 1/8`` at α/2 = 0.125, where ``bdtr``'s last bits would otherwise
    put an attainable α outside the region. So the region is the one that test rejects on.
    Since the tail grows with ``k``, the answer is the ``k`` where ``P(X ≤ k) ≤ level < P(X ≤ k + 1)``;
    the search starts at the normal guess ``⌊N/2 + z·√N/2 − ½⌋`` (continuity-corrected; the
    kurtosis term of Cornish–Fisher is ``O(1/√N)``) and steps by one where the check fails,
    usually two tail evaluations in all. Every evaluation covers the whole ``ns`` array, so
    each tail is computed by the same code path as one call over all of them.
    """
    size = ns.astype(np.float64)
    z = float(_dist.ndtri(level)) if 0.0 < level < 1.0 else 0.0
    guess = np.clip(np.floor(size / 2.0 + z * np.sqrt(size) / 2.0 - 0.5), -1, ns - 1)
    k = guess.astype(np.int64)
    at, above = _within(k, ns, level), _within(k + 1, ns, level)
    while True:
        # the answer is above k / below k; each entry moves one way only, so this ends even
        # where rounding made two neighbouring tails out of order
        up, down = above, ~at & ~above
        if not (up.any() or down.any()):
            return k
        k = k + up - down
        at, above = np.where(up, above, at), np.where(down, at, above)
        if down.any():
            at = np.where(down, _within(k, ns, level), at)
        if up.any():
            above = np.where(up, _within(k + 1, ns, level), above)


def _within(k: NDArray[np.int64], ns: NDArray[np.int64], level: float) -> NDArray[np.bool_]:
    """Whether ``P(X ≤ k) ≤ level`` for ``X ~ Bin(N, 1/2)`` (true for ``k < 0``, false for ``k ≥ N``).

    As :func:`ablation.stats.mcnemar` decides it: near ``level``, by that test's own tail
    (:func:`critical_k`).
    """
    tail = np.asarray(_dist.bdtr(np.maximum(k, 0), ns, 0.5))
    inside = (k >= 0) & (k < ns)
    ok: NDArray[np.bool_] = (k < 0) | (inside & (tail <= level))
    for i in np.flatnonzero(inside & (np.abs(tail - level) <= 1e-9 * level)):
        ok[i] = _binom_cdf(int(k[i]), int(ns[i])) <= level
    return ok
