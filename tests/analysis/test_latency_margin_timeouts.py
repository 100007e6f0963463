"""A latency margin tests the report's own latency: timeouts at the time limit, a lower bound.

The margin's t test once left timed-out trials out while the latency section counted them at
the limit: a candidate that timed out on 20 of 200 tasks (its latency there at least the 2 s
limit) passed a 0.05 s margin on a mean difference of -0.13 s over 180 pairs, beside a section
showing -0.02 s over 200. The gate now tests the section's numbers, and a lower bound decides one
way only: a candidate timeout blocks a pass (its latency there can be anything above the limit),
a baseline timeout blocks a fail; a bound on the other side stands. Reference: scipy's one-sided
paired t test on the section's censored latencies.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results

N, LIMIT, GATE = 200, 2.0, "non-inferiority of latency_s"


def _trial(i: int, arm: str, latency: float | None) -> TaskResult:
    if latency is None:
        return TaskResult(task_id=f"t{i:03d}", arm=arm, passed=False, status="timeout",
                          error_type="TimeoutError", latency_s=LIMIT)  # fmt: skip
    return TaskResult(task_id=f"t{i:03d}", arm=arm, passed=True, latency_s=latency)


def _report(base: list[float | None], cand: list[float | None], margin: float):  # type: ignore[no-untyped-def]
    rows_b = [_trial(i, "baseline", x) for i, x in enumerate(base)]
    rows_c = [_trial(i, "candidate", y) for i, y in enumerate(cand)]
    config = CampaignConfig(timeout_s=LIMIT, n_resamples=200,
                            gates=GatePolicy(metric_margins={"latency_s": margin}))  # fmt: skip
    report = compare_results(rows_b, rows_c, config=config)
    return report, next(g for g in report.gates if g.name == GATE)


def _reference(base: list[float | None], cand: list[float | None], margin: float) -> float:
    x = np.array([LIMIT if v is None else v for v in base])
    y = np.array([LIMIT if v is None else v for v in cand])
    return float(sps.ttest_rel(y - margin, x, alternative="less").pvalue)


def test_a_candidate_timeout_leaves_a_faster_mean_inconclusive() -> None:
    base = [1.0 + 0.01 * (i % 7) for i in range(N)]
    cand: list[float | None] = [None if i % 10 == 1 else 0.9 for i in range(N)]
    report, gate = _report(base, cand, 0.05)
    assert report.latency is not None and report.latency.n_pairs == N
    ni = report.metric_noninferiority["latency_s"]
    assert f"{N} pairs" in ni.method  # the section's pairs, timeouts included
    assert ni.pvalue == pytest.approx(_reference(base, cand, 0.05), rel=1e-9)
    assert ni.decision == "inconclusive" and gate.status == "inconclusive", gate
    assert "candidate timed out on 20 of 200 pairs" in gate.evidence
    assert "non-inferiority cannot be shown" in gate.evidence


def test_a_baseline_timeout_leaves_a_regression_inconclusive_and_a_pass_standing() -> None:
    base: list[float | None] = [None if i % 10 == 1 else 1.0 + 0.01 * (i % 7) for i in range(N)]
    slower = [1.5 + 0.01 * (i % 5) for i in range(N)]
    report, gate = _report(base, list(slower), 0.05)
    assert report.metric_noninferiority["latency_s"].pvalue == pytest.approx(_reference(base, list(slower), 0.05), rel=1e-9)
    assert gate.status == "inconclusive" and "baseline timed out on 20 of 200 pairs" in gate.evidence
    faster = [0.5 + 0.01 * (i % 5) for i in range(N)]
    report, gate = _report(base, list(faster), 0.05)
    assert gate.status == "pass", gate  # the baseline's bound makes the candidate look worse, not better


def test_without_timeouts_the_gate_is_the_t_test() -> None:
    base = [1.0 + 0.01 * (i % 7) for i in range(N)]
    slower = [1.5 + 0.01 * (i % 5) for i in range(N)]
    report, gate = _report(base, list(slower), 0.05)
    assert gate.status == "fail"
    assert report.metric_noninferiority["latency_s"].pvalue == pytest.approx(_reference(base, list(slower), 0.05), rel=1e-9)


def test_the_left_out_reason_names_errors_not_timeouts() -> None:
    """A timed-out trial counts at the limit, so only an error (or no latency) leaves a pair out;
    the reason once named timeouts as a cause."""
    base = [1.0] * N
    rows_b = [_trial(i, "baseline", x) for i, x in enumerate(base)]
    rows_c = [_trial(i, "candidate", None if i == 0 else 1.0) for i in range(N)]
    rows_c[1] = TaskResult(task_id="t001", arm="candidate", passed=False, status="error", error_type="RuntimeError")
    report = compare_results(rows_b, rows_c, config=CampaignConfig(timeout_s=LIMIT, n_resamples=200))
    assert report.latency is not None and report.latency.n_left_out == 1  # the error, not the timeout
    reason = report.latency.left_out_reason or ""
    assert "error" in reason and "timeout counts at the time limit" in reason


def test_the_latency_gate_names_the_pairs_an_error_left_out() -> None:
    """The ratio gate tests the pairs with a latency in both arms; an errored trial has none,
    and the gate's evidence once said "192 pairs" without the 8 it could not test."""
    rows_b = [_trial(i, "baseline", 1.0 + 0.01 * (i % 7)) for i in range(N)]
    rows_c = [
        TaskResult(task_id=f"t{i:03d}", arm="candidate", passed=False, status="error", error_type="RuntimeError")
        if i % 25 == 0 else _trial(i, "candidate", 1.0 + 0.01 * (i % 5))
        for i in range(N)
    ]  # fmt: skip
    config = CampaignConfig(timeout_s=LIMIT, n_resamples=200, gates=GatePolicy(max_latency_ratio=1.5))
    report = compare_results(rows_b, rows_c, config=config)
    gate = next(g for g in report.gates if g.name == "no significant latency regression")
    assert report.latency is not None and (report.latency.n_pairs, report.latency.n_left_out) == (192, 8)
    assert "192 pairs, 8 left out: an error or no latency in an arm" in gate.evidence
