"""A gate's JUnit failure message names its status once.

The message led every failed or inconclusive gate's evidence with its status, and an evidence
that already starts with it read "inconclusive: inconclusive: 100 of 200 pairs ...", in the
report's JUnit and in the numeric comparison's JUnit alike (one rule now, ``junit.gate_case``).
Reference: the gate's own status and evidence in the report.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.render import render


def test_an_inconclusive_gate_says_so_once() -> None:
    rows = [
        TaskResult(task_id=f"t{i}", arm=arm, passed=True, cost=None if arm == "candidate" and i % 2 else 0.1)
        for i in range(200) for arm in ("baseline", "candidate")
    ]  # fmt: skip
    config = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"cost": 0.05}))
    report = compare_results([r for r in rows if r.arm == "baseline"], [r for r in rows if r.arm == "candidate"],
                             config=config)  # fmt: skip
    gate = next(g for g in report.gates if g.name == "non-inferiority of cost")
    assert gate.status == "inconclusive" and gate.evidence.startswith("inconclusive: ")
    suite = ET.fromstring(render(report, "junit"))
    case = next(c for c in suite.iter("testcase") if c.get("name") == f"gate: {gate.name}")
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == gate.evidence
