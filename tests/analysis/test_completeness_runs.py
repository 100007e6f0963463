"""Completeness counts expected trials: tasks x runs seen in either arm.

An arm that supplied 1 of its 3 runs per task completed a third of its expected trials; the
missing runs (present in the other arm only) count against ``--min-completed``.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli

from ablation import CampaignConfig, GatePolicy, compare_results

FAST = CampaignConfig(n_resamples=200)
GATE = "complete comparison"


def _rows(tasks: int, runs_base: int, runs_cand: int) -> tuple[list[dict], list[dict]]:
    base = [
        {"task_id": f"t{i}", "run": r, "passed": r < 2} for i in range(tasks) for r in range(runs_base)
    ]
    cand = [
        {"task_id": f"t{i}", "run": r, "passed": True} for i in range(tasks) for r in range(runs_cand)
    ]
    return base, cand


def _gate(report):
    return next(g for g in report.gates if g.name == GATE)


def test_an_arm_that_supplied_one_of_three_runs_is_incomplete() -> None:
    report = compare_results(*_rows(20, 3, 1), config=FAST)
    gate = _gate(report)
    assert gate.status == "fail" and report.verdict == "fail"
    # 20 completed of 20 x 3 = 60 expected: 33.3%, the 40 absent runs named as such.
    assert "candidate completed 20 of 60 expected trial(s) (33.3%" in gate.evidence
    assert "40 of them missing runs the other arm has" in gate.evidence


def test_one_missing_run_in_sixty_stays_within_the_default_share() -> None:
    base, cand = _rows(20, 3, 3)
    cand = [r for r in cand if not (r["task_id"] == "t0" and r["run"] == 2)]
    report = compare_results(base, cand, config=FAST)
    gate = _gate(report)
    assert gate.status == "pass"  # 59 / 60 = 98.3% >= 95%
    assert "candidate 59/60 completed" in gate.evidence
    strict = compare_results(
        base, cand, config=CampaignConfig(n_resamples=200, gates=GatePolicy(min_completed=0.99))
    )
    assert _gate(strict).status == "fail"
    assert "candidate completed 59 of 60 expected trial(s)" in _gate(strict).evidence


def test_cli_compare_with_run_field_fails_the_incomplete_arm(tmp_path: Path) -> None:
    base, cand = _rows(20, 3, 1)
    for name, rows in (("before.jsonl", base), ("after.jsonl", cand)):
        (tmp_path / name).write_text(
            "".join(
                json.dumps({"id": r["task_id"], "run": r["run"], "passed": r["passed"]}) + "\n"
                for r in rows
            )
        )
    proc = cli.run_here(["compare", "before.jsonl", "after.jsonl", "--run-field", "run", "--format", "json"],
                        cwd=tmp_path)  # in this process: the verdict's exit code is main's return
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    gate = next(g for g in report["gates"] if g["name"] == GATE)
    assert gate["status"] == "fail" and "20 of 60 expected" in gate["evidence"]
