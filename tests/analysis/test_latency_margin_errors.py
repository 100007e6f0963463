"""A latency margin is inconclusive when some pairs have no latency in one arm (an errored trial).

A trial that errored has no latency (``analysis/latency_censoring.py``: only completed trials and
timeouts, at the time limit, count), so its pair leaves the latency section, which says so
(``n_left_out``). The cost, token and quality margins are inconclusive on such pairs; the
latency margin passed on the rest, the pairs the candidate finished: a candidate that crashed on
its slow tasks was non-inferior on its fast ones.

Reference: scipy's one-sided paired t test on the pairs with a latency in both arms (the test the
margin ran) passes; the same comparison with every latency measured passes the gate, so the
inconclusive result comes from the missing latencies alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.report import AblationReport, GateResult

N, ERRORS, MARGIN, GATE = 200, 8, 0.5, "non-inferiority of latency_s"


def _base(i: int) -> float:
    return 1.0 + 0.01 * (i % 7)


def _report(errored_arm: str | None, error_latency: float | None = None) -> tuple[AblationReport, GateResult]:
    rows = []
    for arm in ("baseline", "candidate"):
        for i in range(N):
            if arm == errored_arm and i < ERRORS:
                rows.append(TaskResult(task_id=f"t{i:03d}", arm=arm, status="error", error_stage="agent",
                                       error_type="RuntimeError", latency_s=error_latency))  # fmt: skip
            else:
                latency = _base(i) * (1.05 if arm == "candidate" else 1.0)
                rows.append(TaskResult(task_id=f"t{i:03d}", arm=arm, passed=True, latency_s=latency))
    config = CampaignConfig(timeout_s=10.0, n_resamples=200, gates=GatePolicy(metric_margins={"latency_s": MARGIN}))
    report = compare_results([r for r in rows if r.arm == "baseline"], [r for r in rows if r.arm == "candidate"], config=config)
    return report, next(g for g in report.gates if g.name == GATE)


@pytest.mark.parametrize("error_latency", [None, 0.01])
@pytest.mark.parametrize("arm", ["candidate", "baseline"])
def test_an_errored_trial_leaves_the_latency_margin_inconclusive(arm: str, error_latency: float | None) -> None:
    report, gate = _report(arm, error_latency)
    assert report.latency is not None
    assert (report.latency.n_pairs, report.latency.n_left_out) == (N - ERRORS, ERRORS)
    x = np.array([_base(i) for i in range(ERRORS, N)])
    reference = float(sps.ttest_rel(1.05 * x - MARGIN, x, alternative="less").pvalue)
    assert reference < 0.05  # the test on the measured pairs alone would pass
    assert report.metric_noninferiority["latency_s"].pvalue == pytest.approx(reference, rel=1e-6)
    assert gate.status == "inconclusive", gate
    assert gate.evidence.startswith(f"inconclusive: {ERRORS} of {N} pairs have no latency_s in one arm")
    assert report.verdict == "fail"


def test_with_every_latency_measured_the_margin_passes() -> None:
    report, gate = _report(None)
    assert gate.status == "pass", gate
    assert report.verdict == "pass"
