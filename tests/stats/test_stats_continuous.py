"""Paired t, Wilcoxon signed-rank, sign test, Hodges-Lehmann and log ratio."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ablation.stats import (
    hodges_lehmann,
    log_ratio_interval,
    paired_t_test,
    sign_test,
    wilcoxon_signed_rank,
)
from ablation.stats._ties import tied_differences

RNG = np.random.default_rng(2024)
X = RNG.normal(10, 2, size=25)
Y = X + RNG.normal(0.5, 1.0, size=25)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_paired_t_matches_ttest_rel(alternative: str) -> None:
    res = paired_t_test(X, Y, alternative=alternative, confidence_level=0.9)
    # scipy.stats.ttest_rel(Y, X, alternative=...) and its confidence_interval(0.9)
    ref = stats.ttest_rel(Y, X, alternative=alternative)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.df == 24
    assert res.confidence_interval.low == pytest.approx(ci.low, rel=1e-12)
    assert res.confidence_interval.high == pytest.approx(ci.high, rel=1e-12)
    assert res.estimate == pytest.approx(float(np.mean(Y - X)), rel=1e-12)


def test_paired_t_degenerate() -> None:
    one = paired_t_test([1.0], [3.0])
    assert (one.pvalue, one.confidence_interval.low, one.confidence_interval.high) == (
        1.0,
        2.0,
        2.0,
    )
    assert "n = 1" in one.method
    zeros = paired_t_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert zeros.pvalue == 1.0 and zeros.statistic == 0.0
    const = paired_t_test([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert const.pvalue == 0.0 and const.statistic == math.inf
    assert const.confidence_interval.low == const.confidence_interval.high == 1.0
    assert paired_t_test([1.0, 2.0], [2.0, 3.0], alternative="less").pvalue == 1.0
    with pytest.raises(ValueError, match="no pairs"):
        paired_t_test([], [])


def test_wilcoxon_acceptance_values() -> None:
    # latency deltas -1..-6 s on 6 tasks: exact two-sided p = 2 / 2**6 = 0.03125; 5 tasks: 0.0625
    base = np.full(6, 10.0)
    cand = base - np.arange(1, 7)
    assert wilcoxon_signed_rank(base, cand).pvalue == pytest.approx(0.03125, rel=1e-12)
    assert wilcoxon_signed_rank(base[:5], cand[:5]).pvalue == pytest.approx(0.0625, rel=1e-12)
    assert "exact" in wilcoxon_signed_rank(base, cand).method


def test_wilcoxon_matches_scipy_and_pins_method() -> None:
    # no ties: scipy.stats.wilcoxon(d, method='exact')
    d = Y - X
    res = wilcoxon_signed_rank(X, Y)
    ref = stats.wilcoxon(np.round(d, 12), method="exact", zero_method="wilcox")
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.statistic == ref.statistic and res.n == 25
    # ties and zeros, n <= 13: exhaustive permutation == scipy method='auto'
    dd = np.array([1.0, 1.0, 2.0, -1.0, 0.0, 3.0, 3.0, 2.0])
    tied = wilcoxon_signed_rank(np.zeros(8), dd)
    assert tied.pvalue == pytest.approx(stats.wilcoxon(dd).pvalue, rel=1e-12)
    assert tied.n == 7 and "permutation" in tied.method
    # large with ties: normal approximation, no continuity correction
    big = np.round(RNG.normal(0.3, 1, size=80) * 2) / 2
    approx = wilcoxon_signed_rank(np.zeros(80), big)
    ref2 = stats.wilcoxon(big, method="asymptotic", correction=False, zero_method="wilcox")
    assert approx.pvalue == pytest.approx(ref2.pvalue, rel=1e-12)
    # pratt keeps zeros in the ranking
    pratt = wilcoxon_signed_rank(np.zeros(80), big, zero_method="pratt", method="asymptotic")
    ref3 = stats.wilcoxon(big, method="asymptotic", zero_method="pratt")
    assert pratt.pvalue == pytest.approx(ref3.pvalue, rel=1e-12)


def test_wilcoxon_rounds_differences_before_ranking() -> None:
    # 0.3 - 0.1 and 0.2 differ in the last bit; rounding keeps them tied
    x = np.array([0.1, 0.0, 0.0, 0.0])
    y = np.array([0.3, 0.2, -0.5, 0.7])
    res = wilcoxon_signed_rank(x, y)
    assert "permutation" in res.method  # a tie was detected


def test_wilcoxon_and_sign_all_zero() -> None:
    assert wilcoxon_signed_rank([1.0, 2.0], [1.0, 2.0]).pvalue == 1.0
    assert wilcoxon_signed_rank([], []).pvalue == 1.0
    assert sign_test([1.0, 2.0], [1.0, 2.0]).pvalue == 1.0


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_sign_test_vs_binomtest(alternative: str) -> None:
    d = np.round(Y - X, 12)
    pos, nz = int((d > 0).sum()), int((d != 0).sum())
    res = sign_test(X, Y, alternative=alternative)
    # scipy.stats.binomtest(#positive, #nonzero, 0.5, alternative=...)
    assert res.pvalue == pytest.approx(
        stats.binomtest(pos, nz, 0.5, alternative=alternative).pvalue
    )
    assert res.statistic == pos and res.n == nz


def test_hodges_lehmann() -> None:
    d = Y - X
    i, j = np.triu_indices(d.size)
    assert hodges_lehmann(X, Y) == pytest.approx(float(np.median((d[i] + d[j]) / 2)), rel=1e-12)
    assert hodges_lehmann([0.0], [2.0]) == 2.0
    with pytest.raises(ValueError, match="no pairs"):
        hodges_lehmann([], [])


@pytest.mark.parametrize("kind", ["discrete", "heavy"])
def test_hodges_lehmann_large_n_path_matches_brute_force(kind: str) -> None:
    rng = np.random.default_rng(11)
    n = 2301  # above the brute-force limit
    d = np.round(rng.normal(size=n) * 3) / 2 if kind == "discrete" else rng.standard_t(2, size=n)
    i, j = np.triu_indices(n)
    brute = float(np.median((d[i] + d[j]) / 2))
    assert hodges_lehmann(np.zeros(n), d) == pytest.approx(brute, rel=1e-9, abs=1e-12)
    d2 = d[:-1]  # even number of Walsh averages -> mean of two order statistics
    i, j = np.triu_indices(n - 1)
    brute2 = float(np.median((d2[i] + d2[j]) / 2))
    assert hodges_lehmann(np.zeros(n - 1), d2) == pytest.approx(brute2, rel=1e-9, abs=1e-12)


def test_log_ratio_interval() -> None:
    base = RNG.lognormal(1.0, 1.0, size=12)
    cand = base * np.exp(RNG.normal(-0.1, 0.05, size=12))
    res = log_ratio_interval(base, cand)
    r = np.log(cand) - np.log(base)
    # scipy.stats.ttest_rel(log(cand), log(base)) on the log scale, exponentiated
    ref = stats.ttest_rel(np.log(cand), np.log(base))
    ci = ref.confidence_interval()
    assert res.estimate == pytest.approx(math.exp(r.mean()), rel=1e-12)
    assert res.confidence_interval.low == pytest.approx(math.exp(ci.low), rel=1e-10)
    assert res.confidence_interval.high == pytest.approx(math.exp(ci.high), rel=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.median_ratio == pytest.approx(math.exp(np.median(r)), rel=1e-12)
    assert res.n == 12


def test_log_ratio_rejects_nonpositive() -> None:
    with pytest.raises(ValueError, match="2 pair"):
        log_ratio_interval([1.0, 0.0, 2.0], [1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="no pairs"):
        log_ratio_interval([], [])


@pytest.mark.parametrize("seed", range(4))
def test_tied_differences_keep_distinct_differences_and_merge_decimal_ties(seed: int) -> None:
    # continuous differences are kept as computed (nothing within a few ulps of another), and
    # differences equal in decimal (here 5e-13 added to 6-decimal values) come out tied
    rng = np.random.default_rng(seed)
    x = np.concatenate((rng.lognormal(size=500), rng.integers(0, 10**6, 500) / 1e6))
    y = np.concatenate((x[:500] * rng.lognormal(0, 0.3, 500), x[500:] + 5e-13))
    got = tied_differences(x, y)
    np.testing.assert_array_equal(got[:500], y[:500] - x[:500])
    assert np.unique(got[500:]).size == 1
    assert got[500] == pytest.approx(5e-13, rel=1e-3)
