"""TOST equivalence and metric non-inferiority against statsmodels and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from ablation.stats import metric_noninferiority, tost_paired

RNG = np.random.default_rng(7)
X = RNG.lognormal(0.0, 0.6, size=40)
Y = X * RNG.lognormal(-0.05, 0.2, size=40)


def _check_against_statsmodels(x: np.ndarray, y: np.ndarray, low: float, upp: float) -> None:
    ours = tost_paired(x, y, low, upp)
    # same argument order as statsmodels: both test mean(x - y)
    pval, (t1, p1, df1), (t2, p2, df2) = ttost_paired(x, y, low, upp)
    assert ours.pvalue == pytest.approx(pval, rel=1e-12, abs=1e-300)
    assert ours.lower.statistic == pytest.approx(t1, rel=1e-12, abs=1e-12)
    assert ours.lower.pvalue == pytest.approx(p1, rel=1e-12, abs=1e-300)
    assert ours.upper.statistic == pytest.approx(t2, rel=1e-12, abs=1e-12)
    assert ours.upper.pvalue == pytest.approx(p2, rel=1e-12, abs=1e-300)
    assert ours.lower.df == df1 == ours.upper.df == df2
    assert ours.estimate == pytest.approx(float(np.mean(x - y)), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    ("low", "upp"), [(-0.1, 0.1), (-0.3, 0.05), (-0.01, 0.5), (0.0, 0.2), (-1.0, -0.2)]
)
def test_tost_matches_statsmodels_fixed(low: float, upp: float) -> None:
    _check_against_statsmodels(X, Y, low, upp)


def test_tost_tests_the_mean_of_x_minus_y_like_statsmodels() -> None:
    # the candidate is ~1 s slower on every task: tost_paired(candidate, baseline, ...) tests
    # candidate - baseline, equivalent within (0.5, 1.5), not within (-1.5, -0.5)
    baseline = np.linspace(1.0, 5.0, 30)
    candidate = baseline + 1.0 + 0.05 * np.sin(np.arange(30))
    x, y = candidate, baseline
    assert tost_paired(x, y, 0.5, 1.5).pvalue < 1e-6
    assert tost_paired(x, y, -1.5, -0.5).pvalue > 0.99
    with pytest.raises(ValueError):
        tost_paired(x, y, 1.0, 1.0)


finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


# 100 examples; the case it once found (a bound that dwarfs the differences) has its own test
@settings(max_examples=100, deadline=None)
@given(
    data=st.lists(st.tuples(finite, finite), min_size=3, max_size=60),
    low=st.floats(min_value=-50, max_value=0),
    width=st.floats(min_value=1e-3, max_value=100),
)
def test_tost_matches_statsmodels_property(
    data: list[tuple[float, float]], low: float, width: float
) -> None:
    x = np.array([a for a, _ in data])
    y = np.array([b for _, b in data])
    d = y - x
    assume(np.std(d) > 1e-6 * max(1.0, float(np.max(np.abs(d)))))  # statsmodels gives NaN/inf at 0
    _check_against_statsmodels(x, y, low, low + width)
    res = tost_paired(x, y, low, low + width)
    assert 0.0 <= res.pvalue <= 1.0


def test_tost_keeps_its_digits_when_the_bound_dwarfs_the_differences() -> None:
    # Found by the property above: differences ~1e-5 against a bound of 1. The exact lower t is
    # 299999: (mean(d) + 1) / (sd(d) / sqrt(3)) with d = (0, 0, -1e-5), in rational arithmetic
    # (fractions.Fraction); statsmodels gives 299999.00000000006. A test on d - low lost five
    # digits of sd to the shift: 299999.00000136526.
    x, y = np.zeros(3), np.array([0.0, 0.0, 1e-05])
    _check_against_statsmodels(x, y, -1.0, 0.0)
    assert tost_paired(x, y, -1.0, 0.0).lower.statistic == pytest.approx(299999.0, rel=1e-15)


def test_tost_degenerate_inputs_give_no_nan() -> None:
    res = tost_paired([1.0, 2.0, 3.0], [1.5, 2.5, 3.5], -1.0, 1.0)
    assert res.pvalue == 0.0 and res.lower.statistic == np.inf
    res = tost_paired([1.0], [2.0], -1.0, 1.0)
    assert res.pvalue == 1.0


@pytest.mark.parametrize("margin", [0.0, 0.05, 0.3])
def test_metric_noninferiority_matches_scipy(margin: float) -> None:
    # higher is better: scipy.stats.ttest_rel(y + margin, x, alternative="greater")
    res = metric_noninferiority(X, Y, margin=margin)
    ref = stats.ttest_rel(Y + margin, X, alternative="greater")
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    ci = stats.ttest_rel(Y, X).confidence_interval(confidence_level=0.90)
    assert res.confidence_interval.low == pytest.approx(ci.low, rel=1e-12)
    assert res.confidence_interval.high == pytest.approx(ci.high, rel=1e-12)
    # lower is better (latency): scipy.stats.ttest_rel(y - margin, x, alternative="less")
    lat = metric_noninferiority(X, Y, margin=margin, higher_is_better=False)
    ref = stats.ttest_rel(Y - margin, X, alternative="less")
    assert lat.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_metric_noninferiority_decisions() -> None:
    base = np.linspace(1.0, 3.0, 50)
    wobble = 0.01 * np.cos(np.arange(50))
    # quality: candidate equal -> non-inferior; much worse -> regression; noisy -> inconclusive
    assert metric_noninferiority(base, base + wobble, margin=0.05).decision == "non-inferior"
    assert metric_noninferiority(base, base - 0.5 + wobble, margin=0.05).decision == "regression"
    noisy = base + np.random.default_rng(3).normal(0, 1.0, 50)
    assert metric_noninferiority(base, noisy, margin=0.05).decision == "inconclusive"
    # latency: candidate 0.5 s slower is a regression when lower is better
    slower = metric_noninferiority(base, base + 0.5 + wobble, margin=0.1, higher_is_better=False)
    assert slower.decision == "regression"
    faster = metric_noninferiority(base, base - 0.5 + wobble, margin=0.1, higher_is_better=False)
    assert faster.decision == "non-inferior"
    with pytest.raises(ValueError):
        metric_noninferiority(base, base, margin=-0.1)


@settings(max_examples=100, deadline=None)
@given(
    data=st.lists(st.tuples(finite, finite), min_size=2, max_size=40),
    margin=st.floats(min_value=0, max_value=100),
    higher=st.booleans(),
)
def test_metric_noninferiority_duality(
    data: list[tuple[float, float]], margin: float, higher: bool
) -> None:
    x = np.array([a for a, _ in data])
    y = np.array([b for _, b in data])
    res = metric_noninferiority(x, y, margin=margin, higher_is_better=higher)
    assert 0.0 <= res.pvalue <= 1.0
    ci = res.confidence_interval
    bound = ci.low + margin if higher else margin - ci.high
    if abs(bound) > 1e-9 * max(1.0, margin, abs(ci.low), abs(ci.high)):
        assert (res.decision == "non-inferior") == (bound > 0)
