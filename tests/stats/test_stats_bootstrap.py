"""Paired bootstrap, the binary multinomial fast path, and their agreement with scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import binary_uplift_bootstrap, paired_bootstrap

RNG = np.random.default_rng(12345)
BASE = RNG.normal(0.6, 0.2, size=60)
CAND = BASE + RNG.normal(0.05, 0.1, size=60)


def _scipy_interval(
    x: np.ndarray, y: np.ndarray, method: str, seed: int
) -> tuple[float, float, float]:
    # scipy.stats.bootstrap((x, y), statistic=mean(y - x), paired=True, vectorized=True, rng=seed)
    res = stats.bootstrap(
        (x, y),
        statistic=lambda a, b, axis: np.mean(b - a, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=10_000,
        method=method,
        rng=seed,
    )
    ci = res.confidence_interval
    return float(ci.low), float(ci.high), float(res.standard_error)


@pytest.mark.parametrize(
    ("ours", "theirs"), [("percentile", "percentile"), ("basic", "basic"), ("bca", "BCa")]
)
def test_paired_bootstrap_matches_scipy(ours: str, theirs: str) -> None:
    res = paired_bootstrap(BASE, CAND, method=ours, rng=7)
    lo, hi, se = _scipy_interval(BASE, CAND, theirs, 99)
    # Monte Carlo error of an endpoint with B = 10 000 is ~3% of the SE; allow ~6 MC SDs
    tol = 0.2 * se
    assert res.estimate == pytest.approx(float(np.mean(CAND - BASE)), rel=1e-12)
    assert res.confidence_interval.low == pytest.approx(lo, abs=tol)
    assert res.confidence_interval.high == pytest.approx(hi, abs=tol)
    assert res.standard_error == pytest.approx(se, rel=0.05)
    assert res.n_resamples == 10_000 and res.seed == 7 and res.confidence_level == 0.95


def test_same_seed_bit_identical_and_generator_seed_none() -> None:
    a = paired_bootstrap(BASE, CAND, rng=3)
    b = paired_bootstrap(BASE, CAND, rng=3)
    assert a == b
    c = paired_bootstrap(BASE, CAND, rng=np.random.default_rng(3))
    assert c.seed is None
    assert c.confidence_interval == a.confidence_interval  # int seed == default_rng(seed)
    assert paired_bootstrap(BASE, CAND, rng=4).confidence_interval != a.confidence_interval


def test_identical_differences_give_zero_width_interval() -> None:
    x = np.arange(10.0)
    for method in ("percentile", "basic", "bca"):
        res = paired_bootstrap(x, x + 0.25, method=method)
        assert res.confidence_interval.low == res.confidence_interval.high == pytest.approx(0.25)
        assert res.standard_error == 0.0
    assert "fallback" in paired_bootstrap(x, x, method="bca").method


def test_single_pair_and_empty() -> None:
    res = paired_bootstrap([1.0], [3.0])
    assert (res.estimate, res.confidence_interval.low, res.confidence_interval.high) == (
        2.0,
        2.0,
        2.0,
    )
    with pytest.raises(ValueError, match="no pairs"):
        paired_bootstrap([], [])
    with pytest.raises(ValueError, match="no pairs"):
        binary_uplift_bootstrap(0, 0, 0, 0)
    with pytest.raises(ValueError):
        paired_bootstrap([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        paired_bootstrap([1.0, np.nan], [1.0, 2.0])


def test_callable_statistic() -> None:
    def median_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(y - x, axis=axis)

    res = paired_bootstrap(BASE, CAND, statistic=median_diff, method="bca", n_resamples=2000)
    assert res.estimate == pytest.approx(float(np.median(CAND - BASE)))
    assert res.confidence_interval.low < res.estimate < res.confidence_interval.high
    assert "median_diff" in res.method


def _vectors(n11: int, b: int, c: int, n22: int) -> tuple[np.ndarray, np.ndarray]:
    base = np.repeat([1.0, 1.0, 0.0, 0.0], [n11, b, c, n22])
    cand = np.repeat([1.0, 0.0, 1.0, 0.0], [n11, b, c, n22])
    return base, cand


@pytest.mark.parametrize("table", [(59, 6, 16, 80), (300, 25, 40, 135), (10, 1, 4, 5)])
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_binary_fast_path_matches_generic(table: tuple[int, int, int, int], method: str) -> None:
    _, b, c, _ = table
    n = sum(table)
    fast = binary_uplift_bootstrap(*table, method=method, rng=1)
    generic = paired_bootstrap(*_vectors(*table), method=method, rng=2)
    # the ideal bootstrap SE is the plug-in SD of d_i over sqrt(n)
    ideal_se = math.sqrt(((b + c) / n - ((c - b) / n) ** 2) / n)
    assert fast.estimate == generic.estimate == pytest.approx((c - b) / n)
    assert fast.standard_error == pytest.approx(ideal_se, rel=0.04)
    assert generic.standard_error == pytest.approx(ideal_se, rel=0.04)
    tol = 0.2 * ideal_se + 1.0 / n  # MC error plus one lattice step
    assert fast.confidence_interval.low == pytest.approx(generic.confidence_interval.low, abs=tol)
    assert fast.confidence_interval.high == pytest.approx(generic.confidence_interval.high, abs=tol)


def test_binary_fast_path_distribution_matches_resampling_pairs() -> None:
    # the multinomial draw and the index resampling give the same distribution of (c* - b*):
    # compare 2 000 draws of each with a two-sample Kolmogorov-Smirnov test
    n11, b, c, n22 = 30, 5, 9, 16
    n = n11 + b + c + n22
    rng = np.random.default_rng(5)
    cells = np.repeat([0, 1, 2, 3], [n11, b, c, n22])
    idx = rng.integers(0, n, size=(2000, n))
    boot = cells[idx]
    via_pairs = ((boot == 2).sum(axis=1) - (boot == 1).sum(axis=1)) / n
    draws = rng.multinomial(n, np.array([b, c, n11 + n22]) / n, size=2000)
    via_multinomial = (draws[:, 1] - draws[:, 0]) / n
    assert stats.ks_2samp(via_pairs, via_multinomial).pvalue > 0.001


def test_binary_degenerate_tables() -> None:
    res = binary_uplift_bootstrap(90, 0, 0, 10, method="bca")
    assert res.confidence_interval.low == res.confidence_interval.high == 0.0
    assert "fallback" in res.method
    res = binary_uplift_bootstrap(0, 0, 12, 0)
    assert res.confidence_interval.low == res.confidence_interval.high == 1.0


cell = st.integers(min_value=0, max_value=200)


@settings(max_examples=40, deadline=None)
@given(n11=cell, b=cell, c=cell, n22=cell, seed=st.integers(0, 2**32 - 1))
def test_binary_bootstrap_seeded_and_order_free(
    n11: int, b: int, c: int, n22: int, seed: int
) -> None:
    if n11 + b + c + n22 == 0:
        return
    first = binary_uplift_bootstrap(n11, b, c, n22, n_resamples=500, rng=seed)
    again = binary_uplift_bootstrap(n11, b, c, n22, n_resamples=500, rng=seed)
    assert first == again
    ci = first.confidence_interval
    assert -1.0 <= ci.low <= ci.high <= 1.0
