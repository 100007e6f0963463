"""Paired t, Wilcoxon and Hodges-Lehmann on differences near the ends of the float range.

The t statistic, the signed ranks and the Walsh median are scale-equivariant, and scaling by a
power of two is exact, so the reference is scipy (or a brute-force Walsh median) on the data
divided by a power of two that keeps every square and sum finite, the estimate and interval
multiplied back (``inf`` where the product passes the float range). scipy on the raw data is not
the reference here: ``ttest_rel`` squares differences of 1e300 to ``inf`` (t = 0, p = 1) and gives
NaN when ``y − x`` overflows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ablation.stats import (
    hodges_lehmann,
    mean_difference_interval,
    paired_t_test,
    wilcoxon_signed_rank,
)

CASES = {
    # a spread of 1e300: the squares overflow
    "spread 1e300": (np.zeros(4), np.array([1e300, 3e300, -2e300, 5e300])),
    # a consistent shift of -1e300: t is large and negative
    "shift -1e300": (np.zeros(5), -np.array([1.0, 1.1, 1.2, 0.9, 1.05]) * 1e300),
    # the sum of the differences overflows
    "sum past max": (np.zeros(3), np.array([1e307, 9e307, 1.5e308])),
    # y - x itself overflows
    "difference past max": (np.array([-1e308, -1.2e308, 0.0, 1.0]), np.array([1e308, 1.5e308, 1.0, 3.0])),
    # tiny differences: the squares underflow to 0
    "tiny": (np.zeros(4), np.array([1e-170, 3e-170, 2e-170, 7e-170])),
    # two tasks, an interval wider than any float
    "wide at n=2": (np.zeros(2), np.array([0.0, 1e308])),
}


# numpy's overflow warning for the raw y - x of the references
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _scale(x: np.ndarray, y: np.ndarray) -> float:
    """The power of two just below the largest value: every scaled value is below 2 in size."""
    return math.ldexp(1.0, math.frexp(float(max(np.abs(x).max(), np.abs(y).max())))[1] - 1)


def _times(value: float, s: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float64(value) * s)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("case", list(CASES))
def test_paired_t_matches_scipy_on_the_scaled_data(case: str, alternative: str) -> None:
    x, y = CASES[case]
    s = _scale(x, y)
    ref = stats.ttest_rel(y / s, x / s, alternative=alternative)
    ci = ref.confidence_interval(confidence_level=0.95)
    res = paired_t_test(x, y, alternative=alternative)
    assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-9)
    assert res.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9)
    assert res.estimate == pytest.approx(_times(float(np.mean(y / s - x / s)), s), rel=1e-12)
    for got, want in ((res.confidence_interval.low, ci.low), (res.confidence_interval.high, ci.high)):
        assert got == pytest.approx(_times(float(want), s), rel=1e-9)


def test_an_interval_past_the_float_range_is_infinite_not_nan() -> None:
    for x, y in CASES.values():
        ci = mean_difference_interval(x, y).confidence_interval
        assert not (math.isnan(ci.low) or math.isnan(ci.high))
    wide = mean_difference_interval(*CASES["wide at n=2"]).confidence_interval
    assert (wide.low, wide.high) == (-math.inf, math.inf)  # 5e307 ± 12.7 · 5e307


def test_a_consistent_shift_of_1e300_is_significant() -> None:
    # scipy on the raw data squares to inf and says t = 0, p = 1
    x, y = CASES["shift -1e300"]
    assert paired_t_test(x, y, alternative="less").pvalue < 1e-3


@pytest.mark.parametrize("case", list(CASES))
def test_wilcoxon_and_hodges_lehmann_match_the_scaled_data(case: str) -> None:
    x, y = CASES[case]
    s = _scale(x, y)
    d = y / s - x / s
    assert wilcoxon_signed_rank(x, y).pvalue == pytest.approx(float(stats.wilcoxon(d).pvalue), rel=1e-12)
    walsh = [(d[i] + d[j]) / 2 for i in range(d.size) for j in range(i, d.size)]
    assert hodges_lehmann(x, y) == pytest.approx(_times(float(np.median(walsh)), s), rel=1e-12)


def test_overflowing_differences_keep_their_ranks() -> None:
    # true differences +2.0e308, +2.1e308, -2.5e308, -2.7e308, +1, +2: W+ = 1 + 2 + 3 + 4 = 10,
    # W- = 11; four tied infinities would make them 12 and 9
    x = np.array([-1e308, -1.05e308, 1.25e308, 1.35e308, 0.0, 0.0])
    y = np.array([1e308, 1.05e308, -1.25e308, -1.35e308, 1.0, 2.0])
    d = y / 4 - x / 4
    ref = stats.wilcoxon(d, method="exact")
    got = wilcoxon_signed_rank(x, y)
    assert got.statistic == ref.statistic == 10.0
    assert got.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12)
