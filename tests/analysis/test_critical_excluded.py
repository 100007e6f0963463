"""A critical task left out of the pairing cannot pass the critical gate.

A critical task whose candidate crashes on every run, with ``on_error="exclude"``, has no pair:
the gate cannot show it did not regress, so it is inconclusive (the verdict fails), naming the
task and why it was left out, unless a paired critical regression already fails it. The flag is
read from the suite in a campaign (stored or not), from the result file's ``critical`` column in
``compare``, and from the stored trials when a stored campaign's report is rebuilt. With repeated
runs, the p-value beside a critical regression is named by the test that produced it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ablation import (
    AblationTask,
    CampaignConfig,
    GatePolicy,
    TaskResult,
    compare_results,
    run_ablation_campaign,
)
from ablation.analysis.stored import report_stored_campaign
from ablation.cli import main
from ablation.report import AblationReport, GateResult
from ablation.store import RunStore

GATE = "critical tasks must not regress"
CRITICAL = "refund-limit"
EXCLUDE = CampaignConfig(n_resamples=100, on_error="exclude", gates=GatePolicy(require_complete=False))


def _gate(report: AblationReport) -> GateResult:
    return next(g for g in report.gates if g.name == GATE)


def _suite() -> list[AblationTask]:
    tasks = [
        AblationTask(task_id=f"ok{i}", input_data={"crash": False}, expected_output="yes")
        for i in range(20)
    ]
    tasks.append(
        AblationTask(task_id=CRITICAL, input_data={"crash": True}, expected_output="yes", critical=True)
    )
    return tasks


def _baseline(task: dict) -> str:
    return "yes"


def _candidate(task: dict) -> str:
    if task["crash"]:
        raise RuntimeError("candidate crashes on the critical task")
    return "yes"


def _assert_left_out(report: AblationReport, reason: str) -> None:
    gate = _gate(report)
    assert gate.status == "inconclusive", gate.evidence
    assert report.verdict == "fail" and report.exit_code == 2
    assert report.critical_excluded == [CRITICAL]
    assert gate.tasks == [CRITICAL]
    assert f"{CRITICAL} ({reason})" in gate.evidence
    assert "no task is marked critical" not in gate.evidence


def test_a_campaign_whose_critical_task_crashes_is_not_a_pass(tmp_path: Path) -> None:
    suite = _suite()
    report = run_ablation_campaign(_baseline, _candidate, suite, config=EXCLUDE, fail_fast=0)
    assert report.n_paired == 20 and report.n_critical == 0
    reason = next(e.reason for e in report.excluded if e.task_id == CRITICAL and e.run is None)
    assert reason.startswith("no completed trial in one arm")
    _assert_left_out(report, reason)
    assert json.loads(report.model_dump_json())["critical_excluded"] == [CRITICAL]

    store = tmp_path / "runs.db"  # the stored campaign, and its report rebuilt from the store
    stored = run_ablation_campaign(_baseline, _candidate, suite, config=EXCLUDE, fail_fast=0, store=store)
    _assert_left_out(stored, reason)
    rebuilt, _ = report_stored_campaign(RunStore(store))
    _assert_left_out(rebuilt, reason)


def test_turned_off_the_gate_says_it_would_have_been_inconclusive() -> None:
    config = EXCLUDE.model_copy(
        update={"gates": GatePolicy(require_complete=False, critical_must_not_regress=False)}
    )
    report = run_ablation_campaign(_baseline, _candidate, _suite(), config=config, fail_fast=0)
    gate = _gate(report)
    assert gate.status == "off" and "would have been inconclusive" in gate.evidence
    assert report.verdict == "pass"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_compare_of_result_files_reads_the_flag_of_a_task_one_file_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = [{"id": f"ok{i}", "passed": True} for i in range(20)]
    before.append({"id": CRITICAL, "passed": True, "critical": True})
    after = before[:-1]  # the candidate's file has no result for the critical task
    b, a = _write(tmp_path / "before.jsonl", before), _write(tmp_path / "after.jsonl", after)
    reason = "only in baseline (no candidate result)"
    _assert_left_out(compare_results(str(b), str(a), config=EXCLUDE), reason)

    code = main(["compare", str(b), str(a), "--allow-incomplete", "--format", "json"])
    report = AblationReport.model_validate_json(capsys.readouterr().out)
    assert code == 2
    _assert_left_out(report, reason)


def _results(arm: str, passed: dict[str, bool], critical: set[str], runs: int = 1) -> list[TaskResult]:
    return [
        TaskResult(task_id=t, arm=arm, run=r, passed=ok, critical=t in critical)
        for t, ok in passed.items()
        for r in range(runs)
    ]


def test_a_paired_critical_regression_fails_and_names_the_task_left_out() -> None:
    ids = {f"t{i}": True for i in range(10)}
    base = _results("baseline", {**ids, "crit-a": True, "crit-b": True}, {"crit-a", "crit-b"})
    cand = _results("candidate", {**ids, "crit-a": False}, {"crit-a"})  # crit-b: no candidate result
    report = compare_results(base, cand, config=EXCLUDE)
    gate = _gate(report)
    assert gate.status == "fail" and gate.tasks == ["crit-a"]
    assert report.critical_regressions == ["crit-a"] and report.critical_excluded == ["crit-b"]
    assert "1 critical task(s) left out of the pairing could not be checked" in gate.evidence
    assert "crit-b (only in baseline (no candidate result))" in gate.evidence


def test_left_out_tasks_that_are_not_critical_change_nothing() -> None:
    ids = {f"t{i}": True for i in range(10)}
    base = _results("baseline", {**ids, "crit": True, "gone": True}, {"crit"})
    cand = _results("candidate", ids | {"crit": True}, {"crit"})  # "gone" is not critical
    report = compare_results(base, cand, config=EXCLUDE, expected_ids=[*ids, "crit", "gone"])
    assert report.critical_excluded == []
    assert _gate(report).status == "pass"
    # an id outside the expected ids is not a task of the comparison, whatever its flag
    extra = _results("baseline", {"stray": True}, {"stray"})
    report = compare_results([*base, *extra], cand, config=EXCLUDE, expected_ids=[*ids, "crit", "gone"])
    assert report.critical_excluded == [] and _gate(report).status == "pass"


def test_with_repeated_runs_the_p_value_is_named_by_its_test() -> None:
    ids = {f"t{i}": True for i in range(6)}
    base = _results("baseline", {**ids, "crit": True}, {"crit"}, runs=3)
    cand = _results("candidate", {**ids, "crit": False}, {"crit"}, runs=3)
    report = compare_results(base, cand, config=CampaignConfig(n_resamples=100))
    gate = _gate(report)
    assert gate.status == "fail" and report.runs == 3
    assert "sign test" in report.mcnemar.method  # what the report's two-sided figure is
    assert "McNemar p =" not in gate.evidence
    assert f"two-sided sign test on the tasks, p = {report.mcnemar.pvalue:.4g}" in gate.evidence
