"""Edge cases of the continuous, planning and power statistics, each against a reference.

Constant differences at a bound (exact arithmetic), the design effect's ICC range (fractions),
large designs in the planning functions, ``method="auto"`` of the Wilcoxon test with zeros and
ties (scipy), scale-aware ties of differences (scipy on the true decimal differences, exact
Walsh medians), and the exact McNemar power at attainable levels (a brute-force sum over
:func:`ablation.stats.mcnemar`'s own p-values).
"""

from __future__ import annotations

import math
import statistics
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as ss

from ablation import stats
from ablation.stats._mcnemar_region import critical_k

# --- D5: constant differences are compared exactly with the bound ---------------------------

VALUES = [0.1, 0.2, 0.3, 0.7, 1.1, 2.675, 1e-5, 123.456]


@pytest.mark.parametrize("value", VALUES)
def test_constant_difference_on_a_bound_stays_in_h0(value: float) -> None:
    for n in range(2, 25):
        x, y = [value] * n, [0.0] * n
        assert Fraction(value) - Fraction(0) == Fraction(value)  # d == value exactly
        res = stats.tost_paired(x, y, value, value + 1.0)
        assert res.lower.pvalue == 1.0 and res.pvalue == 1.0, n  # d == low: H0 mean <= low
        assert res.estimate == value
        res = stats.tost_paired(x, y, value - 1.0, value)
        assert res.upper.pvalue == 1.0 and res.pvalue == 1.0, n  # d == upp: H0 mean >= upp
        # candidate worse by exactly the margin: H0 holds, p = 1, never "non-inferior"
        ni = stats.metric_noninferiority(y, [-value] * n, margin=value)
        assert ni.pvalue == 1.0 and ni.decision != "non-inferior", n
        ni = stats.metric_noninferiority(y, x, margin=value, higher_is_better=False)
        assert ni.pvalue == 1.0 and ni.decision != "non-inferior", n
        assert ni.confidence_interval.low == ni.confidence_interval.high == value
        t = stats.paired_t_test(y, x, alternative="greater")
        assert t.estimate == value and t.confidence_interval.low == value and t.pvalue == 0.0
        assert stats.mean_difference_interval(y, x).estimate == value


def test_constant_difference_just_inside_a_bound_is_equivalent() -> None:
    inside = math.nextafter(0.1, 1.0)
    assert stats.tost_paired([inside] * 3, [0.0] * 3, 0.1, 0.2).pvalue == 0.0


# --- D6: the design effect's ICC range --------------------------------------------------------


def test_design_effect_rejects_an_icc_below_minus_one_over_m_minus_one() -> None:
    with pytest.raises(ValueError, match=r"icc must be in \[-0.25, 1\]"):
        stats.design_effect(5, -0.5)
    with pytest.raises(ValueError):
        stats.design_effect(3, -0.6)
    for m in range(2, 60):
        assert stats.design_effect(m, -1.0 / (m - 1)) == pytest.approx(0.0, abs=1e-15)
        assert stats.design_effect(m, -1.0 / (m - 1)) >= 0.0
    assert stats.design_effect(1, -1.0) == 1.0
    assert stats.design_effect(1.5, -1.0) == 0.5


@given(st.integers(1, 200), st.fractions(-1, 1, max_denominator=1000))
@settings(max_examples=100, deadline=None)
def test_design_effect_matches_exact_arithmetic(m: int, rho: Fraction) -> None:
    exact = 1 + (m - 1) * rho
    if exact < 0:
        with pytest.raises(ValueError):
            stats.design_effect(m, float(rho))
    else:
        assert stats.design_effect(m, float(rho)) == pytest.approx(float(exact), abs=1e-12)


# --- D4: designs beyond the exact power's limit -----------------------------------------------


def test_sample_size_beyond_the_exact_limit_returns_connor_without_exact_power() -> None:
    res = stats.sample_size_paired(0.5, 0.0003)
    za, zb = ss.norm.isf(0.025), ss.norm.ppf(0.8)
    connor = (za * math.sqrt(0.5) + zb * math.sqrt(0.5 - 0.0003**2)) ** 2 / 0.0003**2
    assert res.n_exact == pytest.approx(connor, rel=1e-12) and res.n == math.ceil(connor)
    assert res.exact_power is None and res.n_exact_test is None
    assert "exact power not computed" in res.method


def test_exact_figures_beyond_the_limit_say_so_in_the_callers_terms() -> None:
    with pytest.raises(ValueError, match=r"exact_minimum_detectable_effect .* 10000000 pairs"):
        stats.exact_minimum_detectable_effect(10**8, 0.5)
    with pytest.raises(ValueError, match=r"exact_mcnemar_power .* 10000000 pairs"):
        stats.exact_mcnemar_power(10**8, 0.5, 0.1)


# --- D2: method="auto" resolved as scipy resolves it ------------------------------------------


def test_auto_with_zeros_uses_the_normal_approximation_as_scipy() -> None:
    d = np.array([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12, -13.0])
    ours = stats.wilcoxon_signed_rank(np.zeros(16), d)
    ref = ss.wilcoxon(d, correction=False)
    assert ours.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert "normal approximation" in ours.method


@given(
    st.lists(st.integers(-40, 40), min_size=1, max_size=55),
    st.integers(0, 8),
    st.sampled_from(["wilcox", "pratt"]),
    st.sampled_from(["two-sided", "less", "greater"]),
)
@settings(max_examples=20, deadline=None)  # scipy's own permutation branch: ~0.3 s an example
def test_auto_matches_scipy_with_zeros_and_ties(
    values: list[int], zeros: int, zero_method: str, alt: str
) -> None:
    # sizes on both sides of 13 and 50, zeros included, with and without ties; the exhaustive
    # permutation branch (13 or fewer, tied) is also checked on 150 examples against every sign
    # flip and on fixed cases against scipy (test_stats_signed_rank.py)
    d = np.array(values + [0] * zeros, dtype=float) / 4.0
    if not d.any():
        return  # scipy gives NaN for all zeros; the package documents p = 1
    if zero_method == "pratt" and np.count_nonzero(d) < 2:
        return  # scipy's Pratt variance is 0 there
    ours = stats.wilcoxon_signed_rank(np.zeros(d.size), d, zero_method=zero_method, alternative=alt)
    ref = ss.wilcoxon(d, zero_method=zero_method, correction=False, alternative=alt)
    assert ours.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-15)
    assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12)


# --- D3: ties and zeros relative to the operands ----------------------------------------------


def _walsh_median(d: list[Fraction]) -> Fraction:
    return statistics.median((a + b) / 2 for i, a in enumerate(d) for b in d[i:])


def test_tiny_differences_are_not_lost() -> None:
    x, y = np.zeros(20), np.arange(1, 21) * 1e-13
    ref = float(ss.wilcoxon(y).pvalue)
    for scale in (1e-200, 1.0, 1e13, 1e200):
        assert stats.wilcoxon_signed_rank(x, y * scale).pvalue == pytest.approx(ref, rel=1e-12)
        assert stats.sign_test(x, y * scale).n == 20
    assert stats.hodges_lehmann(x, y) == pytest.approx(10.5e-13, rel=1e-12)


def test_large_operands_do_not_split_decimal_ties() -> None:
    xs = ["12345.678", "23456.789", "34567.891", "45678.912", "56789.123", "67891.234", "1.5", "2.5"]
    steps = ["0.1"] * 6 + ["-0.1"] * 2
    x = np.array([float(v) for v in xs])
    y = x + np.array([float(s) for s in steps])
    true = np.array([float(Decimal(s)) for s in steps])
    assert stats.wilcoxon_signed_rank(x, y).pvalue == float(ss.wilcoxon(true).pvalue) == 0.2890625
    assert stats.sign_test(x, y).pvalue == pytest.approx(ss.binomtest(6, 8).pvalue, rel=1e-12)
    exact = _walsh_median([Fraction(Decimal(s)) for s in steps])
    assert stats.hodges_lehmann(x, y) == pytest.approx(float(exact), rel=1e-12)


def test_huge_differences_do_not_overflow() -> None:
    got = stats.hodges_lehmann([0, 0, 0], [1e300, 2e300, 3e300])
    exact = _walsh_median([Fraction(1e300), Fraction(2e300), Fraction(3e300)])
    assert got == pytest.approx(float(exact), rel=1e-15)


def test_a_zero_of_large_operands_does_not_absorb_a_small_difference() -> None:
    assert stats.sign_test([1e6, 0.0], [1e6, 1e-12]).n == 1


@given(
    st.lists(st.integers(-10**6, 10**6), min_size=2, max_size=40),
    st.lists(st.integers(-3, 3), min_size=2, max_size=40),
    st.integers(0, 4),
)
@settings(max_examples=100, deadline=None)
def test_exact_decimal_inputs_match_scipy_on_the_true_differences(
    base: list[int], steps: list[int], decimals: int
) -> None:
    n = min(len(base), len(steps))
    q = Decimal(10) ** -decimals
    xd = [Decimal(b) * q for b in base[:n]]
    yd = [a + Decimal(s) * q * 7 for a, s in zip(xd, steps[:n], strict=True)]
    x = np.array([float(v) for v in xd])
    y = np.array([float(v) for v in yd])
    true = np.array([float(b - a) for a, b in zip(xd, yd, strict=True)])
    if not true.any():
        return
    ours = stats.wilcoxon_signed_rank(x, y, method="asymptotic")
    ref = ss.wilcoxon(true, correction=False, method="asymptotic")
    assert ours.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9)
    assert ours.statistic == float(ref.statistic)
    assert stats.sign_test(x, y).n == int(np.count_nonzero(true))
    exact = _walsh_median([b - a for a, b in zip(map(Fraction, xd), map(Fraction, yd), strict=True)])
    # the operands' own round-off: a few ulps of the largest operand
    slack = 4.0 * np.finfo(float).eps * float(np.max(np.abs(np.concatenate((x, y)))))
    assert stats.hodges_lehmann(x, y) == pytest.approx(float(exact), rel=1e-12, abs=slack)


# --- D1: the exact power's region is mcnemar's own -------------------------------------------

ALPHAS = [2.0**-j for j in range(1, 11)] + [3 / 8, 3 / 64]


def _brute_power(pmf: list[float], pvalues: list[float], alpha: float) -> float:
    """Σ_b P(b)·[mcnemar(b, n − b).pvalue ≤ α] with ψ = 1 (every pair discordant); ``pvalues``
    holds ``stats.mcnemar(b, n - b).pvalue`` for b = 0..n, ``pmf`` scipy's binomial P(b)."""
    return math.fsum(p for p, pv in zip(pmf, pvalues, strict=True) if pv <= alpha)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_power_rejects_where_mcnemar_does(alternative: str) -> None:
    """n = 1..20 pairs at every level of ALPHAS: each level that mcnemar's p-values attain at some
    n < 60 (the former n = 1..59 grid) is attained at an n ≤ 15, and a one-sided p-value also
    attains ½ at every odd n; the two-sided critical values up to n = 59 are the next test's."""
    for n in range(1, 21):
        pvalues = [stats.mcnemar(b, n - b, alternative=alternative).pvalue for b in range(n + 1)]
        for delta in (0.3, -0.5):
            pmf = ss.binom.pmf(np.arange(n + 1), n, (1.0 - delta) / 2.0).tolist()
            for alpha in ALPHAS:
                ours = stats.exact_mcnemar_power(n, 1.0, delta, alpha=alpha, alternative=alternative)
                ref = _brute_power(pmf, pvalues, alpha)
                assert ours == pytest.approx(ref, rel=1e-9, abs=1e-15), (n, alpha, delta)


def test_critical_values_equal_mcnemars_largest_rejected_count() -> None:
    ns = np.arange(1, 60, dtype=np.int64)
    for alpha in ALPHAS:
        got = critical_k(ns, alpha / 2.0)
        for n, k in zip(ns.tolist(), got.tolist(), strict=True):
            ref = max(
                (b for b in range(n + 1) if b <= n - b and stats.mcnemar(b, n - b).pvalue <= alpha),
                default=-1,
            )
            assert k == ref, (n, alpha)


def test_attainable_level_examples() -> None:
    assert stats.mcnemar(0, 3).pvalue == 0.25
    assert stats.exact_mcnemar_power(3, 1.0, 1.0, alpha=0.25) == 1.0
    assert stats.exact_mcnemar_power(8, 1.0, -1.0, alpha=1 / 256, alternative="less") == 1.0
    assert stats.exact_sample_size_paired(1.0, 1.0, alpha=0.25, power=0.99) == 3
