"""Mean-difference interval for numeric metrics: scipy reference, cost, simulated coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.op_counts import library_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import MEAN_DIFFERENCE_MIN_N, log_ratio_interval, mean_difference_interval

RNG = np.random.default_rng(11)
X = RNG.lognormal(0.0, 1.0, size=30)
Y = X * RNG.lognormal(-0.1, 0.5, size=30)


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_matches_scipy_ttest_rel(level: float) -> None:
    res = mean_difference_interval(X, Y, confidence_level=level)
    # candidate - baseline = y - x: scipy.stats.ttest_rel(y, x).confidence_interval(level)
    ci = stats.ttest_rel(Y, X).confidence_interval(confidence_level=level)
    assert res.estimate == pytest.approx(float(np.mean(Y - X)), rel=1e-12)
    assert res.confidence_interval.low == pytest.approx(ci.low, rel=1e-12, abs=1e-12)
    assert res.confidence_interval.high == pytest.approx(ci.high, rel=1e-12, abs=1e-12)
    assert "paired t" in res.method


finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)


@settings(max_examples=150, deadline=None)
@given(data=st.lists(st.tuples(finite, finite), min_size=1, max_size=50))
def test_interval_contains_estimate_and_is_antisymmetric(data: list[tuple[float, float]]) -> None:
    x = np.array([a for a, _ in data])
    y = np.array([b for _, b in data])
    res = mean_difference_interval(x, y)
    ci = res.confidence_interval
    assert ci.low <= res.estimate <= ci.high
    swapped = mean_difference_interval(y, x)
    scale = 1e-9 * max(1.0, float(np.max(np.abs(y - x))))
    assert swapped.estimate == pytest.approx(-res.estimate, abs=scale)
    assert swapped.confidence_interval.low == pytest.approx(-ci.high, abs=scale)


def test_degenerate_and_errors() -> None:
    one = mean_difference_interval([1.0], [3.0])
    assert one.estimate == 2.0 and one.confidence_interval.width == 0.0
    const = mean_difference_interval([1.0, 2.0], [2.0, 3.0])
    assert const.confidence_interval.low == const.confidence_interval.high == 1.0
    with pytest.raises(ValueError, match="no pairs"):
        mean_difference_interval([], [])
    with pytest.raises(ValueError):
        mean_difference_interval([1.0, 2.0], [1.0])


def test_a_million_tasks_by_the_closed_form() -> None:
    # closed form, O(n): no resamples (a resampled interval would not equal scipy's t interval to
    # 1e-9) and no Python loop over the pairs (that would run a million lines in the library)
    rng = np.random.default_rng(0)
    x = rng.lognormal(0, 1, 1_000_000)
    y = x + rng.normal(0, 0.1, 1_000_000)
    mean_difference_interval(x[:10], y[:10])  # modules imported on first use are not the call's work
    res, lines = library_lines(mean_difference_interval, x, y)
    ci = stats.ttest_rel(y, x).confidence_interval()
    assert res.confidence_interval.low == pytest.approx(ci.low, rel=1e-9)
    assert res.confidence_interval.high == pytest.approx(ci.high, rel=1e-9)
    assert 0 < lines < 100_000


def _latencies(rng: np.random.Generator, reps: int, n: int, ratio: float) -> tuple[np.ndarray, ...]:
    """log latency = task effect N(0, 1) + arm shift + noise N(0, 0.5^2), per arm; reps x n."""
    mu = rng.normal(0.0, 1.0, (reps, n))
    base = np.exp(mu + rng.normal(0.0, 0.5, (reps, n)))
    cand = np.exp(mu + math.log(ratio) + rng.normal(0.0, 0.5, (reps, n)))
    return base, cand


def _t_limits(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise 95% paired t interval (checked against the public functions below)."""
    n = d.shape[1]
    half = stats.t.isf(0.025, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
    return d.mean(axis=1) - half, d.mean(axis=1) + half


def _coverage(base: np.ndarray, cand: np.ndarray, ratio: float, which: str) -> float:
    """Share of the replicates (rows) whose interval holds the truth."""
    if which == "ratio":
        low, high = np.exp(_t_limits(np.log(cand) - np.log(base)))
        public = [log_ratio_interval(base[i], cand[i]).confidence_interval for i in range(50)]
        truth = ratio
    else:
        low, high = _t_limits(cand - base)
        public = [
            mean_difference_interval(base[i], cand[i]).confidence_interval for i in range(50)
        ]
        # E[cand - base] = E[exp(mu)] E[exp(noise)] (ratio - 1) = exp(1/2 + 1/8) (ratio - 1)
        truth = math.exp(0.5 + 0.125) * (ratio - 1.0)
    # the vectorised limits are the public function's, row by row (the first 50 rows)
    np.testing.assert_allclose([c.low for c in public], low[:50], rtol=1e-10)
    np.testing.assert_allclose([c.high for c in public], high[:50], rtol=1e-10)
    return float(np.mean((low <= truth) & (truth <= high)))


@pytest.mark.parametrize("ratio", [1.5, 1 / 1.5])
def test_simulated_coverage(ratio: float) -> None:
    # seeded; 40 000 replicates give a Monte Carlo SE of about 0.0013. One draw of 2 x MIN_N tasks
    # a replicate: its first 20 and first MIN_N tasks are the smaller suites (each share is an
    # estimate of its own coverage; the suites of one replicate overlap)
    assert MEAN_DIFFERENCE_MIN_N in (20, 30, 50, 100, 200)
    n_max = 2 * MEAN_DIFFERENCE_MIN_N
    base, cand = _latencies(np.random.default_rng(202), 40_000, n_max, ratio)
    assert _coverage(base[:, :20], cand[:, :20], ratio, "ratio") >= 0.935
    for n in (MEAN_DIFFERENCE_MIN_N, n_max):
        assert _coverage(base[:, :n], cand[:, :n], ratio, "mean") >= 0.92
    # and the reason for the threshold: at 20 tasks the raw-seconds interval under-covers
    assert _coverage(base[:, :20], cand[:, :20], ratio, "mean") < 0.92
