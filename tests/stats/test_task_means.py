"""Repeated runs: the sign-flip test and the betting interval for the mean per-task difference.

References: brute-force enumeration of all 2^n sign vectors, scipy's exact binomial test (the
test must reduce to McNemar with one run), and seeded simulations of the common agent case (most
tasks deterministic, a few change) where the paired t interval under-covers.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, compare_results, stats


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=11))
def test_sign_flip_matches_enumeration(ks: list[int]) -> None:
    d = np.array(ks) / 3
    s = d.sum()
    flips = np.array(list(itertools.product([-1, 1], repeat=len(d)))) @ np.abs(d)
    low = np.mean(flips <= s + 1e-12)
    high = np.mean(flips >= s - 1e-12)
    assert stats.sign_flip_test(d, denominator=3, alternative="less").pvalue == pytest.approx(low, rel=1e-10)
    assert stats.sign_flip_test(d, denominator=3, alternative="greater").pvalue == pytest.approx(high, rel=1e-10)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_sign_flip_with_one_run_is_exact_mcnemar(b: int, c: int, ties: int) -> None:
    d = np.array([-1.0] * b + [1.0] * c + [0.0] * ties)
    if d.size == 0:
        return
    p = stats.sign_flip_test(d, denominator=1, alternative="less").pvalue
    ref = sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0
    assert p == pytest.approx(ref, rel=1e-12)


def _mostly_deterministic(rng: np.random.Generator, n: int, share: float, runs: int = 3):
    """Tasks pass or fail in both arms alike; a ``share`` of them change (Beta(1, 1) rates)."""
    change = rng.random(n) < share
    pb = np.where(change, rng.random(n), rng.integers(0, 2, n).astype(float))
    pc = np.where(change, rng.random(n), pb)
    return rng.binomial(runs, pc) / runs - rng.binomial(runs, pb) / runs  # true mean 0


def test_betting_interval_covers_when_most_tasks_are_deterministic() -> None:
    # The paired t interval covered 73% (n = 30) here; the betting interval holds its level.
    rng = np.random.default_rng(7)
    reps, n = 200, 30
    hits = t_hits = 0
    for i in range(reps):
        d = _mostly_deterministic(rng, n, 0.05)
        ci = stats.bounded_mean_interval(d, rng=i)
        hits += ci.low <= 0.0 <= ci.high
        assert ci.high > ci.low  # never zero width
        t = sps.ttest_1samp(d, 0.0) if d.std() > 0 else None
        t_hits += t is not None and t.confidence_interval().low <= 0 <= t.confidence_interval().high
    assert hits / reps >= 0.95
    assert t_hits / reps < 0.9  # the case is the one that defeats the t interval


def test_betting_noninferiority_holds_its_size_at_the_margin() -> None:
    # Delta = -M exactly: 90% of tasks deterministic, the rest lose half their pass rate.
    rng = np.random.default_rng(11)
    reps, n, margin = 300, 100, 0.05
    passes = 0
    for i in range(reps):
        change = rng.random(n) < 0.1
        pb = np.where(change, 0.75, rng.integers(0, 2, n).astype(float))
        pc = np.where(change, 0.25, pb)
        d = rng.binomial(3, pc) / 3 - rng.binomial(3, pb) / 3
        passes += stats.bounded_mean_noninferiority(d, margin=margin, rng=i).pvalue <= 0.05
    assert passes / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)


def test_report_with_identical_runs_has_a_non_degenerate_headline_and_ni() -> None:
    # 30 tasks x 3 identical runs: the t interval was [0, 0].
    rows = [
        {"task_id": f"t{i}", "run": r, "passed": i % 2 == 0} for i in range(30) for r in range(3)
    ]
    config = CampaignConfig(n_resamples=200, gates=GatePolicy(noninferiority_margin=0.05))
    report = compare_results(rows, [dict(r) for r in rows], config=config)
    assert report.runs == 3
    ci = report.uplift.ci
    assert ci.low < 0 < ci.high and "betting" in ci.method
    assert report.uplift_test is not None and report.uplift_test.pvalue_worse == 1.0
    ni = report.noninferiority
    assert ni is not None and ni.decision == "inconclusive"  # 30 tasks cannot show it at 5 points
    assert ni.ci.low < -0.05 < ni.ci.high
