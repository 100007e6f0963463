"""The latency gate reads whether any paired trial completed, not the errors of tasks left out.

An arm summary counts errors over every task of the report, paired or not (the errors section
lists them all), and ``n_trials`` over the paired tasks only. The gates' "no trial of either arm
completed" check subtracted the first from the second, so with ``on_error="exclude"`` a suite
whose both arms errored on more tasks than were paired read as if nothing completed: the latency
gate was inconclusive ("no trial of either arm completed (baseline: 180 error(s) in 120
trial(s)...") beside 120 pairs of measured latencies, a latency margin on the same pairs passing,
and the verdict failed on it.

Reference: the same 120 completed pairs without the errored tasks, whose latency gate passes on
the log-ratio t test (scipy) that the report's gate states.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.report import AblationReport, GateResult

PAIRED, ERRORED, LIMIT, GATE = 120, 180, 1.04, "no significant latency regression"


def _latency(i: int, arm: str) -> float:
    return (1.0 + i / 1000) * (1.0 + 0.02 * (i % 5) if arm == "candidate" else 1.0)


def _report(errored: int, on_error: str) -> tuple[AblationReport, GateResult]:
    arms: dict[str, list[TaskResult]] = {"baseline": [], "candidate": []}
    for arm, rows in arms.items():
        rows += [TaskResult(task_id=f"t{i}", arm=arm, passed=True, latency_s=_latency(i, arm)) for i in range(PAIRED)]  # type: ignore[arg-type]
        rows += [TaskResult(task_id=f"e{i}", arm=arm, status="error", error_stage="agent",  # type: ignore[arg-type]
                            error_type="RuntimeError") for i in range(errored)]  # fmt: skip
    config = CampaignConfig(
        n_resamples=200, on_error=on_error,  # type: ignore[arg-type]
        gates=GatePolicy(require_complete=False, max_latency_ratio=LIMIT),
    )  # fmt: skip
    report = compare_results(arms["baseline"], arms["candidate"], config=config)
    return report, next(g for g in report.gates if g.name == GATE)


def test_errors_of_tasks_left_out_do_not_make_the_latency_gate_inconclusive() -> None:
    report, gate = _report(ERRORED, "exclude")
    assert report.n_paired == PAIRED and report.baseline.errors == ERRORED
    assert report.latency is not None and report.latency.n_pairs == PAIRED
    x = np.log([_latency(i, "baseline") for i in range(PAIRED)])
    y = np.log([_latency(i, "candidate") for i in range(PAIRED)])
    reference = float(sps.ttest_rel(y, x + np.log(LIMIT), alternative="greater").pvalue)
    assert 0.05 < reference < 0.95  # not significant: the gate passes on this test
    assert gate.status == "pass", gate
    assert gate.pvalue == pytest.approx(reference, rel=1e-9)
    assert "no trial of either arm completed" not in gate.evidence
    assert report.verdict == "pass"
    without, without_gate = _report(0, "exclude")  # the same pairs, no task left out
    assert (without_gate.status, without.verdict) == ("pass", "pass")


def test_when_every_paired_trial_timed_out_the_gate_stays_inconclusive() -> None:
    def timeouts(arm: str) -> list[TaskResult]:
        return [TaskResult(task_id=f"t{i}", arm=arm, status="timeout", error_stage="timeout",  # type: ignore[arg-type]
                           error_type="TimeoutError", latency_s=2.0) for i in range(PAIRED)]  # fmt: skip

    rows = {arm: timeouts(arm) for arm in ("baseline", "candidate")}
    config = CampaignConfig(n_resamples=200, timeout_s=2.0, gates=GatePolicy(max_latency_ratio=LIMIT))
    report = compare_results(rows["baseline"], rows["candidate"], config=config)
    gate = next(g for g in report.gates if g.name == GATE)
    assert gate.status == "inconclusive" and "every trial of both arms timed out" in gate.evidence
