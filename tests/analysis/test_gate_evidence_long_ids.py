"""A gate's evidence names long task ids by a bounded, marked text, and keeps them apart.

A task id may hold a million characters (``TASK_ID_LIMIT``). The critical gate's evidence listed
up to 20 ids whole: twenty long critical regressions made one evidence sentence of megabytes,
copied into the JSON report and every format. The report's id lists keep ids whole for programs.
"""

from __future__ import annotations

import hashlib

from ablation import TaskResult, compare_results
from ablation.schema import NAME_SHOWN

#: Ids that share their first 300,000 characters, so only a digest of the whole tells them apart.
IDS = ["x" * 300_000 + f"{i:02d}" for i in range(25)]


def _results(arm: str, ids: list[str]) -> list[TaskResult]:
    return [TaskResult(task_id=t, arm=arm, passed=arm == "baseline", critical=True) for t in ids]  # type: ignore[arg-type]


def _digest(task_id: str) -> str:
    return hashlib.sha256(task_id.encode()).hexdigest()[:16]


def test_the_critical_gate_names_long_ids_apart_in_bounded_evidence() -> None:
    report = compare_results(_results("baseline", IDS), _results("candidate", IDS))
    assert report.regressions == sorted(IDS)  # whole for programs
    (gate,) = [g for g in report.gates if g.name == "critical tasks must not regress"]
    assert gate.status == "fail"
    assert len(gate.evidence) < 20 * 2 * NAME_SHOWN + 1000
    named = [t for t in IDS if _digest(t) in gate.evidence]
    assert len(named) == 20 and f"{len(IDS[0])} characters" in gate.evidence
    assert "... and 5 more" in gate.evidence


def test_the_completeness_gate_names_missing_long_ids_the_same_way() -> None:
    report = compare_results(_results("baseline", IDS[:3]), _results("candidate", IDS[:3]), expected_ids=IDS)
    (gate,) = [g for g in report.gates if g.name == "complete comparison"]
    assert gate.status == "fail"
    assert len(gate.evidence) < 10 * 2 * NAME_SHOWN + 1000
    assert len([t for t in IDS[3:] if _digest(t) in gate.evidence]) == 10
