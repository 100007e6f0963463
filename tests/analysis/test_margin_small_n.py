"""A metric margin on a mean difference is tested from ``MEAN_DIFFERENCE_MIN_N`` pairs, the same
rule the report's own interval of that mean difference follows.

Below 100 pairs the report shows no interval for a mean difference in seconds (or dollars, or
points), because its t interval under-covers on skewed per-task differences (docs/VALIDATION.md
section 5). The latency margin gate once judged exactly that t test at n = 5 and passed beside a
report that refused to show its interval: a verdict resting on a test the report itself calls
unreliable. The gate is now inconclusive there, saying why and naming the ratio gate that holds at
any n; at 100 pairs the same data are tested, and the gate's p-value is the reference t test's.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.stats import MEAN_DIFFERENCE_MIN_N

GATE = "non-inferiority of latency_s"


def _arms(n: int) -> tuple[list[TaskResult], list[TaskResult]]:
    """Skewed latencies (log-normal task effects); the candidate 10% faster on every task."""
    rng = np.random.default_rng(7)
    base = np.exp(rng.normal(0.0, 1.0, n)) + 1.0
    rows = ([], [])  # type: tuple[list[TaskResult], list[TaskResult]]
    for i, x in enumerate(base):
        rows[0].append(TaskResult(task_id=f"t{i}", arm="baseline", passed=True, latency_s=float(x)))
        rows[1].append(TaskResult(task_id=f"t{i}", arm="candidate", passed=True, latency_s=float(0.9 * x)))
    return rows


CONFIG = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"latency_s": 0.5}))


@pytest.mark.parametrize("n", [2, 5, MEAN_DIFFERENCE_MIN_N - 1])
def test_below_the_report_s_interval_rule_the_margin_gate_is_inconclusive(n: int) -> None:
    report = compare_results(*_arms(n), config=CONFIG)
    assert report.latency is not None and report.latency.ci is None  # the report refuses the t interval
    assert "latency_s" not in report.metric_noninferiority
    (gate,) = [g for g in report.gates if g.name == GATE]
    assert gate.status == "inconclusive" and gate.pvalue is None, gate
    assert f"only {n} pairs have latency in both arms" in gate.evidence
    assert f"needs {MEAN_DIFFERENCE_MIN_N}" in gate.evidence and "max_latency_ratio" in gate.evidence
    assert report.verdict == "fail"


def test_from_the_rule_s_n_the_gate_judges_the_reference_t_test() -> None:
    base, cand = _arms(MEAN_DIFFERENCE_MIN_N)
    report = compare_results(base, cand, config=CONFIG)
    assert report.latency is not None and report.latency.ci is not None
    (gate,) = [g for g in report.gates if g.name == GATE]
    x = np.array([r.latency_s for r in base])
    y = np.array([r.latency_s for r in cand])
    # lower is better: H0 mean(y - x) >= margin, one-sided paired t
    ref = sps.ttest_rel(y - 0.5, x, alternative="less")
    assert gate.status == "pass" and gate.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
