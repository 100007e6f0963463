"""The non-inferiority gate's words say what the interval and the test show.

With one run per task the decision is the exact unconditional test's (p <= alpha), and the
reported interval is the two-sided ``1 - 2 alpha`` Tango score interval beside it. The two can
disagree (STATISTICS.md section 7): the interval can clear -margin while the exact p stays above
alpha. The inconclusive gate must then not say that the interval "crosses" -margin, and the
interval is named by its own method, not by the test's.
"""

from __future__ import annotations

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results, stats
from ablation.report import AblationReport, GateResult

MARGIN = 0.05
CONFIG = CampaignConfig(n_resamples=100, gates=GatePolicy(noninferiority_margin=MARGIN))


def _report(both_pass: int, b: int, c: int, both_fail: int) -> AblationReport:
    """Results with the given paired table (b regressions, c improvements)."""
    cells = [(True, True)] * both_pass + [(True, False)] * b + [(False, True)] * c
    cells += [(False, False)] * both_fail
    base = [TaskResult(task_id=f"t{i:03d}", arm="baseline", passed=x) for i, (x, _) in enumerate(cells)]
    cand = [TaskResult(task_id=f"t{i:03d}", arm="candidate", passed=y) for i, (_, y) in enumerate(cells)]
    return compare_results(base, cand, config=CONFIG)


def _gate(report: AblationReport) -> GateResult:
    return next(g for g in report.gates if g.name == "non-inferiority")


def _tango(both_pass: int, b: int, c: int, both_fail: int) -> tuple[str, float, float]:
    r = stats.paired_difference_interval(
        both_pass, b, c, both_fail, method="tango", confidence_level=1 - 2 * CONFIG.alpha
    )
    return r.method, r.confidence_interval.low, r.confidence_interval.high


def test_an_interval_above_the_margin_with_the_exact_p_above_alpha_is_said_so() -> None:
    counts = (26, 3, 5, 26)
    report = _report(*counts)
    ni, gate = report.noninferiority, _gate(report)
    method, low, high = _tango(*counts)
    assert ni is not None and ni.decision == "inconclusive" and ni.pvalue > ni.alpha
    assert low > -MARGIN  # the case: the interval clears the margin, the exact test does not
    assert gate.status == "inconclusive"
    assert "crosses" not in gate.evidence
    assert f"the 90% {method} [{low:+.4f}, {high:+.4f}] lies above -0.05" in gate.evidence
    assert f"but the exact test gives p = {ni.pvalue:.4g} > alpha 0.05" in gate.evidence


def test_an_interval_that_crosses_the_margin_says_crosses_under_its_own_name() -> None:
    counts = (20, 8, 5, 27)
    report = _report(*counts)
    ni, gate = report.noninferiority, _gate(report)
    method, low, high = _tango(*counts)
    assert ni is not None and ni.decision == "inconclusive" and low < -MARGIN < high
    assert f"inconclusive: the 90% {method} [{low:+.4f}, {high:+.4f}] crosses -0.05" in gate.evidence


def test_a_regression_names_the_interval_by_its_method() -> None:
    counts = (10, 25, 2, 23)
    report = _report(*counts)
    ni, gate = report.noninferiority, _gate(report)
    method, low, high = _tango(*counts)
    assert ni is not None and ni.decision == "regression" and gate.status == "fail"
    assert f"regression: the 90% {method} [{low:+.4f}, {high:+.4f}] lies below 0" in gate.evidence
