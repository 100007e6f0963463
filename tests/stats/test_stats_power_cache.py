"""The exact MDE search reuses the delta-free part of the power; its answers are unchanged.

The reference below is the power function as it was before the cache (every call recomputes the
weights of N; its range of N and its critical values, pure functions of the design and the level,
are computed once per design by the reference's own searches, independent of the library's cache); the MDE found with
it by the same ``brentq`` must equal the library's to the last bit. Since the binary report
stopped importing scipy (issue 13), the library's tails, quantiles and root finder are
``ablation.stats._dist`` / ``_roots`` (compared with scipy in test_stats_dist.py); the reference
uses the same primitives, so the comparison is still bit-exact and tests the cache, not the
primitives. Designs up to ``power._GRID_N`` pairs sum the power over one (N, j) grid instead of
the tails (equal to them to 1e-12), so there the reference is met to brentq's tolerance, and a
cache-cleared computation to the last bit.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np
import pytest

from ablation.stats import (
    _binom_quantile,
    _mcnemar_region,
    exact_mcnemar_power,
    exact_minimum_detectable_effect,
    minimum_detectable_effect,
    power,
)
from ablation.stats import _dist as special
from ablation.stats._roots import brentq


def _critical_k(ns: np.ndarray, level: float) -> np.ndarray:
    k0 = np.asarray(_binom_quantile.binom_ppf(level, ns, 0.5)).astype(np.int64)
    best = np.full(ns.shape, -1, dtype=np.int64)
    for k in (k0 - 1, k0, k0 + 1):
        ok = (k >= 0) & (k < ns) & (np.asarray(special.bdtr(np.maximum(k, 0), ns, 0.5)) <= level)
        best = np.where(ok, np.maximum(best, k), best)
    return best


def _tail(k: np.ndarray, ns: np.ndarray, p: float) -> np.ndarray:
    return np.where(k >= 0, special.bdtr(np.maximum(k, 0), ns, p), 0.0)


@functools.cache
def _support(n: int, psi: float) -> np.ndarray:
    """The discordant totals N the reference sums over: all but 1e-15 of Bin(n, psi) each side
    (two quantile searches, once per design; read-only)."""
    lo, hi = int(_binom_quantile.binom_ppf(1e-15, n, psi)), int(_binom_quantile.binom_isf(1e-15, n, psi))
    ns = np.arange(max(lo - 1, 0), min(hi + 1, n) + 1, dtype=np.int64)
    ns.flags.writeable = False
    return ns


@functools.cache
def _reference_critical_k(n: int, psi: float, level: float) -> np.ndarray:
    """:func:`_critical_k` over :func:`_support`, once per design and level (read-only)."""
    k = _critical_k(_support(n, psi), level)
    k.flags.writeable = False
    return k


def _uncached_power(n: int, psi: float, delta: float, alpha: float, alternative: str) -> float:
    ns = _support(n, psi)
    log_w = (special.gammaln(n + 1.0) - special.gammaln(ns + 1.0) - special.gammaln(n - ns + 1.0)
             + special.xlogy(ns, psi) + special.xlog1py(n - ns, -psi))  # fmt: skip
    pi_b = min(1.0, max(0.0, (psi - delta) / (2.0 * psi)))
    if alternative == "two-sided":
        k = _reference_critical_k(n, psi, alpha / 2.0)
        reject = _tail(k, ns, pi_b) + _tail(k, ns, 1.0 - pi_b)
    else:
        k = _reference_critical_k(n, psi, alpha)
        reject = _tail(k, ns, pi_b if alternative == "greater" else 1.0 - pi_b)
    return float(min(1.0, max(0.0, float(np.dot(np.exp(log_w), reject)))))


def _uncached_mde(n: int, psi: float, alternative: str) -> float:
    """The library's search with :func:`_uncached_power`: brentq from the bracket next to
    Connor's MDE (public ``minimum_detectable_effect``), widened to 0 or psi where it fails."""
    sign = -1.0 if alternative == "less" else 1.0

    def gap(d: float) -> float:
        return _uncached_power(n, psi, sign * d, 0.05, alternative) - 0.8

    def root(lo: float, hi: float) -> float:
        return float(brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12, maxiter=200))

    guess = minimum_detectable_effect(n, psi=psi, alternative=alternative)
    if 0.0 < guess < psi:
        lo, hi = guess, min(psi, guess * (1.0 + 1.0 / math.sqrt(n * psi)))
        if gap(lo) < 0.0 <= gap(hi):
            return root(lo, hi)
        if gap(lo) >= 0.0:
            return 0.0 if gap(0.0) >= 0.0 else root(0.0, lo)
        return math.inf if gap(psi) < 0.0 else root(hi, psi)
    if gap(psi) < 0.0:
        return math.inf
    if gap(0.0) >= 0.0:
        return 0.0
    return root(0.0, psi)


ALTERNATIVES = ["two-sided", "greater", "less"]
# every alternative up to the grid's limit; past it (2 001 pairs on), "less" runs the lines of
# "greater" with the regression probability mirrored, so two alternatives there
DESIGNS = [
    *((n, psi, alt) for n, psi in [(20, 0.9), (300, 0.5), (2000, 0.3)] for alt in ALTERNATIVES),
    *((n, psi, alt) for n, psi in [(2001, 0.3), (5000, 0.05), (200_000, 0.3)]
      for alt in ALTERNATIVES[:2]),
]  # fmt: skip


@pytest.mark.parametrize(("n", "psi", "alternative"), DESIGNS)
def test_mde_and_power_equal_the_uncached_computation(n: int, psi: float, alternative: str) -> None:
    # up to power._GRID_N pairs the power is one sum over the (N, j) grid, equal to the tails'
    # sum to 1e-12 (test_stats_power.py), so the MDE found on it is equal to brentq's tolerance;
    # above, the same tails, so the same bits
    exact = n > power._GRID_N
    mde = exact_minimum_detectable_effect(n, psi, alternative=alternative)
    reference = _uncached_mde(n, psi, alternative)
    assert mde == reference if exact else mde == pytest.approx(reference, rel=1e-10, abs=4e-12)
    for delta in (0.0, psi / 7, -psi / 3):
        got = exact_mcnemar_power(n, psi, delta, alternative=alternative)
        ref = _uncached_power(n, psi, delta, 0.05, alternative)
        assert got == ref if exact else got == pytest.approx(ref, rel=1e-12, abs=1e-15)
    # the caches return what a fresh computation returns, to the last bit
    power._design.cache_clear()
    power._grid.cache_clear()
    assert exact_minimum_detectable_effect(n, psi, alternative=alternative) == mde


LEVELS = [0.025, 0.05, 0.5, 1e-6, 0.3, 0.9]


@pytest.mark.parametrize("level", LEVELS)
def test_critical_values_equal_the_quantile_search(level: float) -> None:
    """The normal-guess stepping of ``power._critical_k`` finds the k of the ppf-based search.

    Small N (where the guess is furthest off), 200 random N up to 1e7, and a block of 2 500
    consecutive N near 4e5 (the array size and N at which the tails go to the bulk path); a
    seed per level, so the six levels see six sets of random N.
    """
    rng = np.random.default_rng(LEVELS.index(level))
    blocks = (
        np.arange(0, 400, dtype=np.int64),
        rng.integers(0, 10_000_000, 200).astype(np.int64),
        np.arange(400_000, 402_500, dtype=np.int64) + int(rng.integers(0, 1000)),
    )
    for ns in blocks:
        np.testing.assert_array_equal(power._critical_k(ns, level), _critical_k(ns, level))


@pytest.mark.parametrize(
    ("n", "psi", "alternative"),
    # (67, 1): the root is below Connor's MDE; (4, 1): nothing up to psi is detectable, which
    # the search finds past the bracket's top
    [(3000, 0.3, "two-sided"), (200_000, 0.3, "two-sided"), (67, 1.0, "two-sided"),
     (4, 1.0, "two-sided")],
)  # fmt: skip
def test_mde_search_evaluates_each_effect_once(
    monkeypatch: pytest.MonkeyPatch, n: int, psi: float, alternative: str
) -> None:
    """The ends checked before the root search are not computed again by brentq, and the
    bracket next to Connor's MDE takes it there in a few powers (about 20 on the whole (0, ψ])."""
    seen: list[float] = []
    inner = power._power

    def counting(n: int, psi: float, delta: float, alpha: float, alternative: str) -> float:
        seen.append(delta)
        return inner(n, psi, delta, alpha, alternative)

    monkeypatch.setattr(power, "_power", counting)
    mde = exact_minimum_detectable_effect(n, psi, alternative=alternative)
    reference = _uncached_mde(n, psi, alternative)
    assert mde == reference if n > power._GRID_N else mde == pytest.approx(reference, rel=1e-10)
    assert len(seen) == len(set(seen)) >= 2
    if n > power._GRID_N:
        assert len(seen) <= 10


def test_critical_value_search_ends_on_out_of_order_tails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tail above the level right below one under it (rounding) must not make the steps cycle.

    Fake tails for N = 100, level ½ (normal guess k = 49): 0 up to k = 60 and 1 above, except a
    spurious 1 at k = 49. The search moves up from the guess and stops at 60.
    """

    def fake_bdtr(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
        return np.where((k > 60) | (k == 49), 1.0, 0.0)

    monkeypatch.setattr(
        _mcnemar_region, "_dist", SimpleNamespace(bdtr=fake_bdtr, ndtri=special.ndtri)
    )
    assert power._critical_k(np.array([100], dtype=np.int64), 0.5).tolist() == [60]
