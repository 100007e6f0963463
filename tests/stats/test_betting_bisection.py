"""The betting interval found by bisection is the interval of the whole grid.

:func:`bounded_mean_interval` evaluates the capitals at about 2 x 11 grid points instead of all
2001, relying on ``log K+`` not increasing and ``log K-`` not decreasing in the candidate mean.
The reference evaluates every grid point (tests/helpers/betting_oracle.py); the capitals it
returns are checked for that monotonicity, so the premise is tested, not assumed.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.stats import task_means
from ablation.stats.task_means import bounded_mean_interval, bounded_mean_noninferiority
from tests.helpers.betting_oracle import grid_interval, log_capitals


@st.composite
def differences(draw: st.DrawFn) -> np.ndarray:
    runs = draw(st.sampled_from([1, 2, 3, 5]))
    n = draw(st.integers(1, 250))
    steps = draw(st.lists(st.integers(-runs, runs), min_size=n, max_size=n))
    return np.asarray(steps, dtype=np.float64) / runs


@settings(max_examples=25, deadline=None)
@given(d=differences(), level=st.sampled_from([0.8, 0.9, 0.95, 0.99]), seed=st.integers(0, 3))
def test_bisection_equals_the_whole_grid(d: np.ndarray, level: float, seed: int) -> None:
    ci = bounded_mean_interval(d, confidence_level=level, rng=seed)
    ordered = task_means._ordered(d, seed)
    low, high, up, down = grid_interval(ordered, 1.0 - level)
    assert (ci.low, ci.high) == (low, high)
    # the premise of the bisection, on the reference's own capitals
    assert np.all(np.diff(up) <= 1e-9 * (1 + np.abs(up[1:])))
    assert np.all(np.diff(down) >= -1e-9 * (1 + np.abs(down[1:])))


def test_a_skewed_suite_of_thousands_of_tasks() -> None:
    rng = np.random.default_rng(7)
    d = rng.choice([-1.0, -2 / 3, -1 / 3, 0.0, 1 / 3, 2 / 3, 1.0], 3000, p=[.02, .03, .05, .8, .05, .03, .02])
    ci = bounded_mean_interval(d, confidence_level=0.95, rng=11)
    low, high, _, _ = grid_interval(task_means._ordered(d, 11), 0.05)
    assert (ci.low, ci.high) == (low, high)
    assert ci.low < float(d.mean()) < ci.high


@settings(max_examples=15, deadline=None)
@given(d=differences(), margin=st.sampled_from([0.02, 0.05, 0.1, 0.3]), seed=st.integers(0, 3))
def test_noninferiority_reads_the_same_capital(d: np.ndarray, margin: float, seed: int) -> None:
    res = bounded_mean_noninferiority(d, margin=margin, alpha=0.05, rng=seed)
    up, _ = log_capitals(task_means._ordered(d, seed), 0.1, np.array([-margin]))
    assert math.isclose(res.statistic, float(up[0]), rel_tol=1e-12, abs_tol=1e-12)
