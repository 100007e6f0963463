"""The report's headline figures are the validated ones, and the new default gates hold in Python.

- ``report.uplift.ci`` is the Tango score interval, computed at 96% below 30 discordant pairs
  (its exact coverage is enumerated in ``tests/stats/test_stats_coverage.py`` and
  ``tests/stats/test_stats_headline_interval.py``); the bootstrap is the labelled secondary figure.
- Mean-difference intervals are the closed-form paired t (scipy ``ttest_rel``), shown from
  ``MEAN_DIFFERENCE_MIN_N`` pairs with a stated reason below.
- The minimum detectable effect is the exact test's.
- ``GatePolicy()`` turns the regression and completeness gates on; ``metric_margins`` adds gates.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pairing_oracle import pair_arrays
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ablation import stats
from ablation.analysis.build import build_report, report_from_results
from ablation.config import CampaignConfig, GatePolicy
from ablation.schema import TaskResult

FAST = CampaignConfig(n_resamples=200)


def _table_arrays(n11: int, b: int, c: int, n22: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    base = np.array([1] * n11 + [1] * b + [0] * c + [0] * n22, dtype=bool)
    cand = np.array([1] * n11 + [0] * b + [1] * c + [0] * n22, dtype=bool)
    return [f"t{i:05d}" for i in range(len(base))], base, cand


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 40), st.integers(0, 25), st.integers(0, 25), st.integers(0, 40),
)
def test_headline_uplift_interval_is_tango_wider_when_sparse(
    n11: int, b: int, c: int, n22: int
) -> None:
    if n11 + b + c + n22 == 0:
        return
    report = build_report(pair_arrays(*_table_arrays(n11, b, c, n22)), config=FAST)
    level = 0.95 if b + c >= 30 else 0.96
    tango = stats.paired_difference_interval(n11, b, c, n22, method="tango", confidence_level=level)
    assert report.uplift.ci.low == pytest.approx(tango.confidence_interval.low, abs=1e-12)
    assert report.uplift.ci.high == pytest.approx(tango.confidence_interval.high, abs=1e-12)
    assert report.uplift.ci.confidence_level == 0.95
    assert report.uplift.ci.method.startswith(tango.method)
    assert ("96%" in report.uplift.ci.method) == (b + c < 30)
    assert report.uplift.bootstrap_ci is not None
    assert "bootstrap" in report.uplift.bootstrap_ci.method
    assert report.provenance.methods["uplift_ci"] == report.uplift.ci.method


def test_no_discordant_pairs_no_longer_gives_a_zero_width_headline() -> None:
    report = build_report(pair_arrays(*_table_arrays(25, 0, 0, 5)), config=FAST)
    assert report.uplift.ci.low < 0 < report.uplift.ci.high
    assert report.uplift.bootstrap_ci is not None
    assert report.uplift.bootstrap_ci.low == report.uplift.bootstrap_ci.high == 0.0


def _results(n: int, metric: str, base: np.ndarray, cand: np.ndarray) -> list[TaskResult]:
    out = []
    for i in range(n):
        for arm, values in (("baseline", base), ("candidate", cand)):
            out.append(
                TaskResult(
                    task_id=f"t{i:04d}", arm=arm, passed=True, latency_s=float(values[i]),  # type: ignore[arg-type]
                    metrics={metric: float(values[i])},
                )
            )
    return out


def test_mean_difference_interval_is_the_paired_t_from_the_minimum_n() -> None:
    rng = np.random.default_rng(4)
    n = stats.MEAN_DIFFERENCE_MIN_N
    x = rng.lognormal(0, 1, n)
    y = x * rng.lognormal(0.1, 0.3, n)
    report = report_from_results(_results(n, "score", x, y), config=FAST)
    lat = report.latency
    assert lat is not None and lat.ci is not None and lat.ci_note is None
    ref = sps.ttest_rel(y, x).confidence_interval(0.95)  # scipy reference
    assert lat.ci.low == pytest.approx(ref.low, rel=1e-10)
    assert lat.ci.high == pytest.approx(ref.high, rel=1e-10)
    assert lat.ratio_ci is not None  # the log-ratio interval stays
    small = report_from_results(_results(20, "score", x, y), config=FAST)
    assert small.latency is not None and small.latency.ci is None
    assert f"below {stats.MEAN_DIFFERENCE_MIN_N} pairs" in (small.latency.ci_note or "")
    assert small.latency.ratio_ci is not None


def test_minimum_detectable_effect_is_the_exact_tests() -> None:
    # The MDE of the gate's test: the one-sided exact McNemar test, H1 "candidate worse".
    report = build_report(pair_arrays(*_table_arrays(400, 30, 20, 50)), config=FAST)
    expected = stats.exact_minimum_detectable_effect(500, 50 / 500, alpha=0.05, alternative="less")
    assert report.minimum_detectable_effect == pytest.approx(expected, rel=1e-12)
    assert "exact" in (report.minimum_detectable_effect_method or "")
    assert expected > stats.minimum_detectable_effect(500, psi=0.1, alpha=0.05, alternative="less")


def test_default_policy_turns_on_regression_and_completeness() -> None:
    policy = GatePolicy()
    assert policy.no_significant_regression and policy.require_complete
    assert policy.min_completed == 0.95
    assert policy.noninferiority_margin is None and policy.max_latency_ratio is None
    # 30 regressions against 10 improvements: significant; the default verdict fails
    report = build_report(pair_arrays(*_table_arrays(50, 30, 10, 10)), config=FAST)
    assert report.summary == "regression" and report.verdict == "fail"


def test_metric_margin_gates_follow_the_metric_direction() -> None:
    rng = np.random.default_rng(1)
    n = 120  # a margin needs MEAN_DIFFERENCE_MIN_N pairs
    x = rng.normal(10, 1, n)
    y = x + 0.5 + rng.normal(0, 0.1, n)
    slower = _results(n, "quality_points", x, y)
    config = CampaignConfig(
        n_resamples=200, gates=GatePolicy(metric_margins={"latency_s": 0.1, "quality_points": 0.1})
    )
    report = report_from_results(slower, config=config)
    gates = {g.name: g for g in report.gates}
    # latency is lower-is-better: +0.5 s is a regression beyond the 0.1 s margin
    assert gates["non-inferiority of latency_s"].status == "fail"
    # quality_points is higher-is-better: +0.5 is non-inferior within 0.1
    assert gates["non-inferiority of quality_points"].status == "pass"
    ni = report.metric_noninferiority["latency_s"]
    ref = stats.metric_noninferiority(x, y, margin=0.1, higher_is_better=False)
    assert ni.decision == ref.decision == "regression"
    assert ni.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    missing = report_from_results(
        slower, config=CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"nope": 1.0}))
    )
    gate = next(g for g in missing.gates if g.name == "non-inferiority of nope")
    assert gate.status == "inconclusive" and "carry no nope" in gate.evidence


def test_metric_margins_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        GatePolicy(metric_margins={"cost": 0.0})


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 60), st.integers(0, 40), st.integers(0, 40), st.integers(0, 60))
def test_default_verdict_never_passes_a_significant_regression(
    n11: int, b: int, c: int, n22: int
) -> None:
    if n11 + b + c + n22 == 0:
        return
    report = build_report(pair_arrays(*_table_arrays(n11, b, c, n22)), config=FAST)
    if report.summary == "regression":  # "Candidate is worse ... p < alpha"
        assert report.verdict == "fail"
        assert any(g.name == "no significant regression" and g.status == "fail" for g in report.gates)
