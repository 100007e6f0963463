"""Intervals for the paired difference and the non-inferiority test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from ablation.stats import noninferiority_test, paired_difference_interval, tango_score_statistic

CAVO = (59, 6, 16, 80)  # Cavo et al. (2012): [[59, 6], [16, 80]]; b = 6, c = 16

# R contingencytables on cavo_2012 reports p1+ - p+1 = (b - c)/n; our Δ = (c - b)/n is its negative,
# so each reference interval (L, U) becomes (-U, -L).
CAVO_REFERENCE = {
    "tango": (-0.1240, -0.0054),  # Tango_asymptotic_score_CI_paired_2x2(cavo_2012)
    "newcombe": (-0.1186, -0.0046),  # Newcombe_square_and_add_CI_paired_2x2(cavo_2012)
    "wald": (-0.1184, -0.0058),  # Wald_CI_diff_paired_2x2(cavo_2012)
    "agresti_min": (-0.1182, -0.0045),  # Wald_CI_AgrestiMin_paired_2x2(cavo_2012)
    "bonett_price": (-0.1195, -0.0032),  # Wald_CI_BonettPrice_paired_2x2(cavo_2012)
}
METHODS = tuple(CAVO_REFERENCE)


@pytest.mark.parametrize("method", METHODS)
def test_cavo_reference_values(method: str) -> None:
    res = paired_difference_interval(*CAVO, method=method)
    low, high = CAVO_REFERENCE[method]
    assert res.estimate == pytest.approx(10 / 161, rel=1e-12)
    assert res.confidence_interval.low == pytest.approx(-high, abs=5e-5)
    assert res.confidence_interval.high == pytest.approx(-low, abs=5e-5)
    assert res.method


def _tango_numeric_mle(b: int, c: int, n: int, delta: float) -> float:
    """Independent score statistic: restricted MLE of p12 by numerical maximisation."""

    def negloglik(p12: float) -> float:
        p21 = p12 + delta
        rest = 1.0 - p12 - p21
        return -(b * math.log(p12) + c * math.log(p21) + (n - b - c) * math.log(rest))

    lo = max(1e-12, -delta + 1e-12)
    hi = (1.0 - delta) / 2.0 - 1e-12
    p12 = optimize.minimize_scalar(
        negloglik, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}
    ).x
    return (c - b - n * delta) / math.sqrt(n * (2 * p12 + delta * (1 - delta)))


@pytest.mark.parametrize("delta", [-0.05, 0.0, 0.03, 0.1, 0.2])
def test_tango_statistic_vs_numerical_mle(delta: float) -> None:
    _, b, c, _ = CAVO
    ours = tango_score_statistic(b, c, 161, delta)
    assert ours == pytest.approx(_tango_numeric_mle(b, c, 161, delta), rel=1e-5)


def test_tango_statistic_at_zero_is_mcnemar_z() -> None:
    assert tango_score_statistic(10, 20, 100, 0.0) == pytest.approx(10 / math.sqrt(30), rel=1e-12)
    assert tango_score_statistic(0, 0, 100, 0.0) == 0.0


def test_zero_discordant_tango_vs_wald() -> None:
    tango = paired_difference_interval(90, 0, 0, 10)
    wald = paired_difference_interval(90, 0, 0, 10, method="wald")
    assert tango.confidence_interval.low == pytest.approx(-0.0370, abs=1e-4)
    assert tango.confidence_interval.high == pytest.approx(0.0370, abs=1e-4)
    z = stats.norm.isf(0.025)
    assert tango.confidence_interval.high == pytest.approx(z * z / (100 + z * z), rel=1e-12)
    assert (wald.confidence_interval.low, wald.confidence_interval.high) == (0.0, 0.0)


def test_one_empty_discordant_cell() -> None:
    # Wald has zero width when only one discordant cell is non-zero and b + c = n
    tango = paired_difference_interval(0, 0, 20, 0)
    assert tango.estimate == 1.0 and tango.confidence_interval.high == 1.0
    assert tango.confidence_interval.low < 1.0
    worst = paired_difference_interval(0, 20, 0, 0)
    assert worst.estimate == -1.0 and worst.confidence_interval.low == -1.0
    wald = paired_difference_interval(0, 0, 20, 0, method="wald")
    assert wald.confidence_interval.low == wald.confidence_interval.high == 1.0


def test_adjusted_wald_widened_to_contain_estimate() -> None:
    # Agresti-Min centres on (c - b)/(n + 2); at 50% it would miss the observed -50/55
    res = paired_difference_interval(5, 50, 0, 0, method="agresti_min", confidence_level=0.5)
    assert res.confidence_interval.contains(res.estimate)
    assert "widened" in res.method
    assert "widened" not in paired_difference_interval(*CAVO, method="agresti_min").method


def test_empty_table() -> None:
    for method in METHODS:
        res = paired_difference_interval(0, 0, 0, 0, method=method)
        assert res.estimate == 0.0
        assert (res.confidence_interval.low, res.confidence_interval.high) == (-1.0, 1.0)


def test_bad_method() -> None:
    with pytest.raises(ValueError):
        paired_difference_interval(*CAVO, method="exact")


cell = st.integers(min_value=0, max_value=400)


@settings(max_examples=200, deadline=None)
@given(
    n11=cell,
    b=cell,
    c=cell,
    n22=cell,
    method=st.sampled_from(METHODS),
    level=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]),
)
def test_interval_contains_estimate_and_stays_in_range(
    n11: int, b: int, c: int, n22: int, method: str, level: float
) -> None:
    res = paired_difference_interval(n11, b, c, n22, method=method, confidence_level=level)
    ci = res.confidence_interval
    assert -1.0 <= ci.low <= res.estimate <= ci.high <= 1.0
    assert not (math.isnan(ci.low) or math.isnan(ci.high))


@settings(max_examples=100, deadline=None)
@given(n11=cell, b=cell, c=cell, n22=cell)
def test_counts_based_results_invariant_to_pair_order(n11: int, b: int, c: int, n22: int) -> None:
    # the same pairs in another order give the same table, hence the same result
    rng = np.random.default_rng(n11 + 7 * b)
    cells = np.repeat([0, 1, 2, 3], [n11, b, c, n22])
    rng.shuffle(cells)
    counts = np.bincount(cells, minlength=4)
    assert paired_difference_interval(*counts) == paired_difference_interval(n11, b, c, n22)
    # Tango is anti-symmetric under swapping the arms
    swapped = paired_difference_interval(n11, c, b, n22)
    orig = paired_difference_interval(n11, b, c, n22)
    assert swapped.confidence_interval.low == pytest.approx(
        -orig.confidence_interval.high, abs=1e-9
    )


def test_noninferiority_reference_case() -> None:
    # STATISTICS.md §7: n = 1000, b = 30, c = 20, margin 0.02: asymptotic p ≈ 0.085 and
    # 90% Tango lower limit ≈ -0.0221; the exact Berger-Boos p-value is larger (≈ 0.087)
    res = noninferiority_test(950, 30, 20, 0, margin=0.02)
    asymptotic = stats.norm.sf(tango_score_statistic(30, 20, 1000, -0.02))
    assert asymptotic == pytest.approx(0.085, abs=5e-4)
    assert res.statistic == pytest.approx(tango_score_statistic(30, 20, 1000, -0.02), rel=1e-15)
    assert asymptotic < res.pvalue < asymptotic + 0.01
    assert res.confidence_interval.low == pytest.approx(-0.0221, abs=5e-5)
    assert res.decision == "inconclusive"
    assert "exact unconditional" in res.method
    # 90% two-sided Tango interval
    ci90 = paired_difference_interval(950, 30, 20, 0, confidence_level=0.90).confidence_interval
    assert res.confidence_interval == ci90


@pytest.mark.parametrize(
    ("table", "margin", "decision"),
    [
        ((900, 5, 6, 89), 0.02, "non-inferior"),
        ((900, 60, 10, 30), 0.02, "regression"),
        ((950, 30, 20, 0), 0.02, "inconclusive"),
        ((0, 0, 0, 0), 0.02, "inconclusive"),
    ],
)
def test_noninferiority_decisions(
    table: tuple[int, int, int, int], margin: float, decision: str
) -> None:
    assert noninferiority_test(*table, margin=margin).decision == decision


# 40 examples, each an exact p-value at up to 1 600 pairs (~35 ms); the public decisions of every
# table at n = 30 are checked for monotonicity and size in test_stats_ni_size.py
@settings(max_examples=40, deadline=None)
@given(
    n11=cell,
    b=cell,
    c=cell,
    n22=cell,
    margin=st.sampled_from([0.01, 0.02, 0.05, 0.1]),
    alpha=st.sampled_from([0.025, 0.05, 0.1]),
)
def test_noninferiority_pvalue_and_interval_agree(
    n11: int, b: int, c: int, n22: int, margin: float, alpha: float
) -> None:
    res = noninferiority_test(n11, b, c, n22, margin=margin, alpha=alpha)
    assert 0.0 <= res.pvalue <= 1.0
    if b + c + n11 + n22 == 0:
        return
    n = n11 + b + c + n22
    # the p-value is never below the asymptotic score p-value 1 - Phi(Z(-margin))
    assert res.pvalue >= stats.norm.sf(tango_score_statistic(b, c, n, -margin)) - 1e-15
    assert (res.decision == "non-inferior") == (res.pvalue <= alpha)
    low = res.confidence_interval.low
    # one direction of the duality survives: verdict => interval (away from the boundary)
    if abs(low + margin) > 1e-9 and res.decision == "non-inferior":
        assert low > -margin
