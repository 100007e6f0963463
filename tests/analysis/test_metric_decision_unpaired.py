"""The decision a report holds for a metric margin (``metric_noninferiority[name].decision``, the
JSON's) is the gate's: when some pairs lack the value in one arm, the gate is inconclusive, and
so is the decision. It said "non-inferior" (or "regression") from the test on the pairs that have
the value, beside an INCONCLUSIVE gate of the same numbers.

The reference is the same comparison with every value present: the test there is non-inferior
and the gate passes, so the inconclusive result comes from the missing values alone.
"""

from __future__ import annotations

import json

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.render import render
from ablation.report import AblationReport

N = 150
STATUS = {"non-inferior": "pass", "regression": "fail", "inconclusive": "inconclusive"}


def _report(missing_every: int | None) -> AblationReport:
    def rows(arm: str, shift: float) -> list[TaskResult]:
        return [
            TaskResult(
                task_id=f"t{i}", passed=True, latency_s=1.0,
                quality={} if arm == "candidate" and missing_every and i % missing_every == 0
                else {"q": (i % 7) / 10 + shift},
            )
            for i in range(N)
        ]  # fmt: skip

    config = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"q": 0.1}))
    return compare_results(rows("baseline", 0.0), rows("candidate", 0.01), config=config)


def _gate_and_decision(report: AblationReport) -> tuple[str, str]:
    (gate,) = [g for g in report.gates if g.name == "non-inferiority of q"]
    data = json.loads(render(report, "json"))
    return gate.status, data["metric_noninferiority"]["q"]["decision"]


def test_every_value_present_is_non_inferior() -> None:
    assert _gate_and_decision(_report(None)) == ("pass", "non-inferior")


def test_values_missing_in_one_arm_make_the_decision_inconclusive_as_the_gate() -> None:
    report = _report(5)  # 30 of 150 candidate trials have no q
    status, decision = _gate_and_decision(report)
    assert status == "inconclusive"
    assert STATUS[decision] == status
    ni = report.metric_noninferiority["q"]
    assert "30 of 150 pairs have no q in one arm" in ni.method
    assert ni.pvalue < 0.05  # the test on the 120 scored pairs alone would have passed


def test_every_output_format_says_what_the_gate_says() -> None:
    report = _report(5)
    data = json.loads(render(report, "json"))
    assert data["verdict"] == "fail"  # an inconclusive gate fails the verdict
    for fmt in ("markdown", "terminal"):
        text = render(report, fmt)
        assert "non-inferiority of q" in text and "INCONCLUSIVE" in text.upper(), fmt
