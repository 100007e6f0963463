"""McNemar, Wilson, Clopper-Pearson, zero-failure bound and pairing summary."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from helpers.op_counts import library_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sst
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from ablation.stats import (
    clopper_pearson_interval,
    mcnemar,
    paired_binary_summary,
    wilson_interval,
    zero_failure_upper_bound,
)


def exact_two_sided(b: int, c: int) -> Fraction:
    """Exact rational min(1, 2 * P(X <= min(b, c))), X ~ Bin(b + c, 1/2) (math.comb)."""
    n = b + c
    if n == 0:
        return Fraction(1)
    k = min(b, c)
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
    return min(Fraction(1), 2 * tail)


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (0, 10, 0.001953125),
        (10, 20, 0.0987371467),
        (4, 13, 0.0490417),
        (10, 2, 0.0385742188),
        (34, 56, 0.0263017),
        (4, 3, 1.0),
        (3, 3, 1.0),
        (0, 0, 1.0),
        (0, 3, 0.25),
        (6, 16, 0.052479),  # Cavo table, R contingencytables
    ],
)
def test_mcnemar_exact_reference_values(b: int, c: int, expected: float) -> None:
    res = mcnemar(b, c)
    assert res.pvalue == pytest.approx(expected, rel=1e-5, abs=1e-9)
    # exact rational arithmetic: fractions.Fraction with math.comb
    assert res.pvalue == pytest.approx(float(exact_two_sided(b, c)), rel=1e-12)
    # statsmodels.stats.contingency_tables.mcnemar([[0, b], [c, 0]], exact=True)
    assert res.pvalue == pytest.approx(sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue, rel=1e-9)
    assert res.b == b and res.c == c and res.alternative == "two-sided"
    assert res.method == "exact McNemar (binomial, two-sided)"


def test_mcnemar_tiny_pvalue_is_not_underflowed() -> None:
    # 2 * 2**-1000 = 2**-999 ≈ 1.87e-301
    res = mcnemar(0, 1000)
    assert res.pvalue == pytest.approx(2.0**-999, rel=1e-9)
    assert res.pvalue > 0.0


@pytest.mark.parametrize(("b", "c"), [(400, 500), (5000, 5200), (499_000, 501_000), (0, 1000)])
def test_mcnemar_large_vs_binomtest(b: int, c: int) -> None:
    # scipy.stats.binomtest(b, b + c, 0.5).pvalue (two-sided, likelihood ordering = doubling for p=1/2)
    ref = sst.binomtest(b, b + c, 0.5).pvalue
    mcnemar(b, c)  # modules imported on first use are not the call's work
    res, lines = library_lines(mcnemar, b, c)
    assert res.pvalue == pytest.approx(ref, rel=1e-9)
    # one tail, not a sum over the b + c terms: a loop over a million terms would run a million lines
    assert 0 < lines < 10_000


@pytest.mark.parametrize(("b", "c"), [(0, 5), (3, 9), (9, 3), (7, 7), (0, 0), (120, 95)])
def test_mcnemar_one_sided_vs_binomtest(b: int, c: int) -> None:
    n = b + c
    less = mcnemar(b, c, alternative="less").pvalue
    greater = mcnemar(b, c, alternative="greater").pvalue
    if n == 0:
        assert less == 1.0 and greater == 1.0
        return
    # "less" (candidate worse): P(X >= b) = binomtest(b, n, alternative='greater')
    assert less == pytest.approx(sst.binomtest(b, n, 0.5, alternative="greater").pvalue, rel=1e-12)
    # "greater" (candidate better): P(X <= b) = binomtest(b, n, alternative='less')
    assert greater == pytest.approx(sst.binomtest(b, n, 0.5, alternative="less").pvalue, rel=1e-12)


def test_mcnemar_midp_reference() -> None:
    # Cavo (6, 16): contingencytables McNemar_midP_test_paired_2x2 gives P = 0.034690
    assert mcnemar(6, 16, method="midp").pvalue == pytest.approx(0.034690, abs=5e-7)
    # b == c: 1 - 0.5 * P(X = b), X ~ Bin(2b, 1/2) (contingencytables convention)
    expected = 1 - Fraction(math.comb(6, 3), 2 * 2**6)
    assert mcnemar(3, 3, method="midp").pvalue == pytest.approx(float(expected), rel=1e-12)
    assert mcnemar(0, 0, method="midp").pvalue == 1.0
    # 2 P(X <= k) - P(X = k) exactly
    b, c = 4, 13
    n = b + c
    exact = 2 * Fraction(sum(math.comb(n, i) for i in range(b + 1)), 2**n) - Fraction(
        math.comb(n, b), 2**n
    )
    assert mcnemar(b, c, method="midp").pvalue == pytest.approx(float(exact), rel=1e-12)
    # one-sided mid-p: P(X > b) + P(X = b)/2
    less = Fraction(sum(math.comb(n, i) for i in range(b + 1, n + 1)), 2**n) + Fraction(
        math.comb(n, b), 2 ** (n + 1)
    )
    assert mcnemar(b, c, method="midp", alternative="less").pvalue == pytest.approx(
        float(less), rel=1e-12
    )


@pytest.mark.parametrize(("b", "c"), [(10, 20), (6, 16), (34, 56), (1, 0), (12, 3)])
def test_mcnemar_chi2_vs_statsmodels(b: int, c: int) -> None:
    table = [[0, b], [c, 0]]
    # statsmodels mcnemar(table, exact=False, correction=False / True)
    plain = sm_mcnemar(table, exact=False, correction=False)
    cc = sm_mcnemar(table, exact=False, correction=True)
    assert mcnemar(b, c, method="chi2").statistic == pytest.approx(plain.statistic, rel=1e-12)
    assert mcnemar(b, c, method="chi2").pvalue == pytest.approx(plain.pvalue, rel=1e-10)
    assert mcnemar(b, c, method="chi2_cc").pvalue == pytest.approx(cc.pvalue, rel=1e-10)


def test_mcnemar_chi2_degenerate_edges() -> None:
    # statsmodels gives p = 0.752 for (5, 5) corrected and inf/0.0 for (0, 0); we give 1.0
    assert mcnemar(5, 5, method="chi2_cc").pvalue == 1.0
    for method in ("chi2", "chi2_cc"):
        res = mcnemar(0, 0, method=method)
        assert res.pvalue == 1.0 and res.statistic == 0.0
    # one-sided asymptotic equals the normal tail of z = (c - b)/sqrt(b + c)
    z = (20 - 10) / math.sqrt(30)
    assert mcnemar(10, 20, method="chi2", alternative="greater").pvalue == pytest.approx(
        sst.norm.sf(z), rel=1e-12
    )


def test_mcnemar_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        mcnemar(-1, 3)
    with pytest.raises(ValueError):
        mcnemar(1.5, 3)
    with pytest.raises(ValueError):
        mcnemar(1, 3, method="fisher")
    with pytest.raises(ValueError):
        mcnemar(1, 3, alternative="two_sided")


counts = st.integers(min_value=0, max_value=3000)
methods = st.sampled_from(["exact", "midp", "chi2", "chi2_cc"])
alternatives = st.sampled_from(["two-sided", "less", "greater"])


@settings(max_examples=150, deadline=None)
@given(b=counts, c=counts, method=methods, alternative=alternatives)
def test_mcnemar_pvalue_in_unit_interval(b: int, c: int, method: str, alternative: str) -> None:
    p = mcnemar(b, c, method=method, alternative=alternative).pvalue
    assert 0.0 <= p <= 1.0 and not math.isnan(p)


@settings(max_examples=150, deadline=None)
@given(b=counts, c=counts, method=methods)
def test_mcnemar_two_sided_symmetric(b: int, c: int, method: str) -> None:
    assert mcnemar(b, c, method=method).pvalue == mcnemar(c, b, method=method).pvalue
    # one-sided tails mirror each other
    assert mcnemar(b, c, method=method, alternative="less").pvalue == pytest.approx(
        mcnemar(c, b, method=method, alternative="greater").pvalue, rel=1e-12, abs=1e-300
    )


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (50, 100), (1, 1000), (3, 7), (0, 1)])
def test_wilson_vs_statsmodels(k: int, n: int) -> None:
    res = wilson_interval(k, n)
    # statsmodels.stats.proportion.proportion_confint(k, n, alpha=0.05, method='wilson')
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert res.confidence_interval.low == pytest.approx(lo, rel=1e-10, abs=1e-15)
    assert res.confidence_interval.high == pytest.approx(hi, rel=1e-10)
    assert res.estimate == k / n
    if k == 0:
        assert res.confidence_interval.low == 0.0
    if k == n:
        assert res.confidence_interval.high == 1.0


def test_wilson_reference_values_and_empty() -> None:
    ci = wilson_interval(50, 100).confidence_interval
    assert (ci.low, ci.high) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    ci = wilson_interval(1, 1000).confidence_interval
    assert (ci.low, ci.high) == pytest.approx((0.000177, 0.00564), abs=5e-6)
    empty = wilson_interval(0, 0)
    assert empty.estimate == 0.0
    assert (empty.confidence_interval.low, empty.confidence_interval.high) == (0.0, 1.0)
    assert "n = 0" in empty.method
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (50, 100), (1, 1000), (3, 7)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_clopper_pearson_vs_statsmodels(k: int, n: int, level: float) -> None:
    res = clopper_pearson_interval(k, n, confidence_level=level)
    # statsmodels proportion_confint(k, n, alpha=1 - level, method='beta')
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="beta")
    assert res.confidence_interval.low == pytest.approx(lo, rel=1e-9, abs=1e-15)
    assert res.confidence_interval.high == pytest.approx(hi, rel=1e-9)
    assert clopper_pearson_interval(0, 0).confidence_interval.high == 1.0


@pytest.mark.parametrize(("n", "expected"), [(10, 0.2589), (100, 0.02951), (300, 0.009936)])
def test_zero_failure_upper_bound(n: int, expected: float) -> None:
    bound = zero_failure_upper_bound(n)
    assert bound == pytest.approx(expected, rel=2e-4)
    # scipy.stats.beta.ppf(0.95, 1, n) and the one-sided Clopper-Pearson limit
    assert bound == pytest.approx(sst.beta.ppf(0.95, 1, n), rel=1e-12)
    assert bound == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-12)
    assert zero_failure_upper_bound(0) == 1.0


def test_paired_binary_summary() -> None:
    n11, b, c, n22 = 59, 6, 16, 80
    n = n11 + b + c + n22
    s = paired_binary_summary(n11, b, c, n22)
    assert s.se_paired == pytest.approx(math.sqrt((b + c) - (b - c) ** 2 / n) / n, rel=1e-12)
    p1, p2 = (n11 + b) / n, (n11 + c) / n
    assert s.se_unpaired == pytest.approx(math.sqrt(p1 * (1 - p1) / n + p2 * (1 - p2) / n))
    # phi = Pearson correlation of the paired 0/1 vectors
    import numpy as np

    x = np.repeat([1, 1, 0, 0], [n11, b, c, n22])
    y = np.repeat([1, 0, 1, 0], [n11, b, c, n22])
    assert s.correlation == pytest.approx(np.corrcoef(x, y)[0, 1], rel=1e-12)
    assert s.se_paired < s.se_unpaired
    assert paired_binary_summary(0, 0, 0, 0) == paired_binary_summary(0, 0, 0, 0)
    zero = paired_binary_summary(10, 0, 0, 0)
    assert (zero.se_paired, zero.se_unpaired, zero.correlation) == (0.0, 0.0, 0.0)
