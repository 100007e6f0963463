"""Tasks that an interrupted ``--runs 3`` campaign ran only in part (a real SIGINT), then reports.

Suite: 20 tasks in a sequential campaign, 3 runs per arm. In the run order (seed 0) the last two
tasks block: at the next-to-last, each arm's first run returns and its other two block (the arms
ran it in step: 1 of 3 runs each); at the last, the baseline's three runs return and only the
candidate's first (a failure) does. The campaign is interrupted once those 114 trials are stored.

A task whose arm has fewer than the configured runs stored is not a pair: it is listed as partly
run ("k of 3 runs"), left out of the paired figures, a gap where the replay waits, and a missing
pair for the completeness gate. A resume runs exactly the missing trials and completes both.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import analysis_shared, cli

from ablation.analysis.build import report_from_results
from ablation.analysis.completeness import GATE_COMPLETENESS
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.sequential import sequential_order
from ablation.config import CampaignConfig, SequentialPolicy
from ablation.schema import TaskResult
from ablation.store.run_store import RunStore

N_TASKS = 20
RUNS = 3
ORDER = sequential_order([f"t{i:02d}" for i in range(N_TASKS)], 0)
IN_STEP, UNEVEN = ORDER[-2], ORDER[-1]
#: The start of the excluded reason of a partly run task (read literally: the reports' words).
PARTLY_RUN_PREFIX = "partly run"

pytestmark = pytest.mark.xdist_group("partly-run")  # one worker runs the campaign once

STORED = 2 * RUNS * (N_TASKS - 2) + 2 + (RUNS + 1)  # every other task whole, then 1 + 1, 3 + 1

SUITE = f"""
from ablation import AblationTask
tasks = [AblationTask(task_id=f"t{{i:02d}}", input_data={{"id": f"t{{i:02d}}"}}, expected_output="yes")
         for i in range({N_TASKS})]
"""
AGENTS = """
import os
import time

def _first_call(task, arm):
    try:  # the campaign's folder is the working directory
        os.close(os.open(f"called-{{task}}-{{arm}}", os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False

def _block_after_first(task, arm):
    if not _first_call(task, arm) and os.path.exists("block"):
        time.sleep(60)  # the campaign is interrupted while this runs

def baseline(task):
    if task["id"] == {in_step!r}:
        _block_after_first(task["id"], "baseline")
    return "yes"

def candidate(task):
    if task["id"] in ({in_step!r}, {uneven!r}):
        _block_after_first(task["id"], "candidate")
    return "no" if task["id"] == {uneven!r} else "yes"
"""


def _args(*extra: str) -> list[str]:
    """``ablation run`` in the campaign's folder (relative names: a copy resumes the campaign)."""
    return ["run", "suite.py", "--baseline", "agents.py:baseline", "--candidate",
            "agents.py:candidate", "--sequential", "--runs", str(RUNS), "--store", "runs.db",
            "--concurrency", "8", "--no-progress", "--format", "json", *extra]  # fmt: skip


def _runs_stored(store: Path) -> dict[tuple[str, str], int]:
    with contextlib.closing(sqlite3.connect(store)) as conn:
        rows = conn.execute("SELECT task_id, arm, COUNT(*) FROM trials GROUP BY task_id, arm")
        return {(tid, arm): n for tid, arm, n in rows.fetchall()}


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("partly_run")
    (folder / "suite.py").write_text(SUITE, encoding="utf-8")
    (folder / "agents.py").write_text(AGENTS.format(in_step=IN_STEP, uneven=UNEVEN), encoding="utf-8")
    (folder / "block").touch()
    store = folder / "runs.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", cli.LAUNCH, *_args()], cwd=folder, env=cli.cli_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= STORED, timeout=60, proc=proc)
    finally:
        cli.kill(proc, signal.SIGINT)
    assert proc.returncode == 1
    assert [status for _, status, _ in cli.campaigns(store)] == ["interrupted"]
    stored = _runs_stored(store)
    assert stored[(IN_STEP, "baseline")] == stored[(IN_STEP, "candidate")] == 1
    assert (stored[(UNEVEN, "baseline")], stored[(UNEVEN, "candidate")]) == (RUNS, 1)
    return folder


def _report(folder: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    proc = cli.run_here(
        ["report", "latest", "--store", str(folder / "runs.db"), "--format", "json", *extra],
        cwd=folder,
    )
    return proc.returncode, json.loads(proc.stdout)


def _stored_pairs(folder: Path) -> Any:
    """The stored trials paired as a report pairs them, before the configured runs apply."""
    with RunStore(folder / "runs.db") as store:
        record = store.latest_campaign()
        assert record is not None
        columns = store.campaign_columns(record.campaign_id)
        expected = store.expected_ids(record.campaign_id)
    return pair_columns(*columns, expected_ids=expected)


def test_a_partly_run_task_is_listed_and_left_out_of_the_pairs(interrupted: Path) -> None:
    code, report = _report(interrupted)
    partly = {e["task_id"]: e["reason"] for e in report["excluded"] if e["reason"].startswith(PARTLY_RUN_PREFIX)}
    assert set(partly) == {IN_STEP, UNEVEN}
    assert "baseline 1 of 3 runs, candidate 1 of 3 runs" in partly[IN_STEP]
    assert "baseline 3 of 3 runs, candidate 1 of 3 runs" in partly[UNEVEN]
    assert not any(e["reason"].startswith("unmatched run") for e in report["excluded"])
    assert report["n_paired"] == N_TASKS - 2  # the uneven task's one failed run is no regression
    assert report["table"]["regressions"] == 0
    gate = {g["name"]: g for g in report["gates"]}[GATE_COMPLETENESS]
    assert gate["status"] == "fail" and code == 2
    assert "2 of 20 expected pair(s) missing" in gate["evidence"], gate["evidence"]
    assert sorted(gate["tasks"]) == sorted([IN_STEP, UNEVEN])


def test_the_sequential_replay_waits_at_the_first_partly_run_task(interrupted: Path) -> None:
    _, report = _report(interrupted, "--allow-incomplete")
    s = report["sequential"]
    assert s["gate"] == "undecided" and s["pairs"] == N_TASKS - 2
    assert s["fixed_n_descriptive"] is True and not s["stopped_early"]
    assert "2 of 20 tasks lack" in s["reason"], s["reason"]
    assert s["tasks_run"] == N_TASKS and s["agent_calls"] == STORED
    regression = {g["name"]: g for g in report["gates"]}["no significant regression"]
    assert regression["status"] == "inconclusive"
    assert "stopped undecided before every task ran" in regression["evidence"]


def test_the_configured_runs_take_partly_run_tasks_out_of_a_fixed_n_pairing(interrupted: Path) -> None:
    """The same stored trials paired as a fixed-n report pairs them, then with the configured
    runs applied (:func:`leave_out_partly_run`): the tasks leave the pairs and fail the gate."""
    from ablation.analysis.build import build_report
    from ablation.analysis.pairing import leave_out_partly_run

    data = _stored_pairs(interrupted)
    assert UNEVEN in set(data.task_ids)  # paired on what exists: one run against three
    kept = leave_out_partly_run(data, RUNS)
    assert sorted(set(data.task_ids) - set(kept.task_ids)) == sorted([IN_STEP, UNEVEN])
    assert np.all(kept.baseline.runs == RUNS) and np.all(kept.candidate.runs == RUNS)
    assert kept.baseline.n_trials == kept.candidate.n_trials == RUNS * (N_TASKS - 2)
    assert leave_out_partly_run(kept, RUNS) is kept
    report = build_report(kept, config=CampaignConfig(runs=RUNS, n_resamples=100))
    gate = {g.name: g for g in report.gates}[GATE_COMPLETENESS]
    assert gate.status == "fail" and sorted(gate.tasks) == sorted([IN_STEP, UNEVEN])
    assert report.n_paired == N_TASKS - 2 and report.table.regressions == 0


def test_a_fixed_n_report_leaves_partly_run_tasks_out(interrupted: Path) -> None:
    """The stored trials reported as a fixed-n campaign (``build_report`` with the configured
    runs, no sequential policy): the partly run tasks are listed, out of the pairs, and missing."""
    from ablation.analysis.build import build_report

    data = _stored_pairs(interrupted)
    report = build_report(data, config=CampaignConfig(runs=RUNS, n_resamples=100))
    partly = {e.task_id for e in report.excluded if e.reason.startswith(PARTLY_RUN_PREFIX)}
    assert partly == {IN_STEP, UNEVEN}
    assert report.n_paired == N_TASKS - 2 and report.table.regressions == 0
    gate = {g.name: g for g in report.gates}[GATE_COMPLETENESS]
    assert gate.status == "fail" and sorted(gate.tasks) == sorted([IN_STEP, UNEVEN])


def test_a_resume_runs_the_missing_runs_and_reports_every_pair(
    interrupted: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "copy"  # the other tests read the interrupted store: resume a copy
    shutil.copytree(interrupted, folder)
    (folder / "block").unlink()
    store = folder / "runs.db"
    before = set(cli.trial_keys(store))
    proc = analysis_shared.run_here(_args("--resume"), cwd=folder)
    added = {k[1:4] for k in set(cli.trial_keys(store)) - before}
    had = {k[1:4] for k in before}  # which run of a task came first is the scheduler's choice
    short = [(IN_STEP, "baseline"), (IN_STEP, "candidate"), (UNEVEN, "candidate")]
    assert added == {(t, arm, run) for t, arm in short for run in range(RUNS)} - had
    assert len(added) == 6
    report = json.loads(proc.stdout)
    assert report["n_paired"] == N_TASKS and report["table"]["regressions"] == 1
    assert not any(e["reason"].startswith(PARTLY_RUN_PREFIX) for e in report["excluded"])
    assert report["sequential"]["gate"] == "end_of_suite"
    gate = {g["name"]: g for g in report["gates"]}[GATE_COMPLETENESS]
    assert gate["status"] == "pass"


def _trial(task_id: str, arm: str, run: int, status: str = "completed") -> TaskResult:
    error: dict[str, Any] = {}
    if status != "completed":
        error = {"error_type": "RuntimeError", "error_message": "down"}
    return TaskResult.model_validate(
        {"task_id": task_id, "arm": arm, "run": run, "status": status, "passed": not error, **error}
    )


def test_errored_trials_are_stored_runs_and_an_excluded_task_short_of_runs_is_partly_run() -> None:
    """``on_error="exclude"``: a task whose three candidate trials all errored is excluded for
    errors (every run ran); one whose only candidate trial errored is partly run, a gap."""
    order = sequential_order(["a", "b", "c", "d"], 0)
    errored, short = order[1], order[2]  # order[0] and order[3] run whole
    trials = [_trial(t, arm, run) for t in order for arm in ("baseline", "candidate") for run in range(RUNS)
              if t not in (errored, short) or arm == "baseline"]  # fmt: skip
    trials += [_trial(errored, "candidate", run, "error") for run in range(RUNS)]
    trials.append(_trial(short, "candidate", 0, "error"))
    config = CampaignConfig(
        runs=RUNS, on_error="exclude", sequential=SequentialPolicy(), n_resamples=100
    )
    report = report_from_results(trials, config=config, expected_ids=order)
    reasons = {e.task_id: e.reason for e in report.excluded if e.run is None}
    assert reasons[errored].startswith("no completed trial in one arm")
    assert reasons[short] == f"{PARTLY_RUN_PREFIX}: baseline 3 of 3 runs, candidate 1 of 3 runs"
    assert report.n_paired == 2 and report.sequential is not None
    assert report.sequential.pairs == 1 and report.sequential.gate == "undecided"  # waits at ``short``
    assert report.errors is not None and report.errors.trials == {"baseline": 12, "candidate": 10}


def test_every_task_partly_run_keeps_the_configured_run_count() -> None:
    """Interrupted in every task's third run: the report's ``runs`` is the 3 configured, which
    its listing names ("2 of 3 runs"), not the 2 the arms stored (it once said "2 runs per
    task" beside "partly run: baseline 2 of 3 runs")."""
    rows = [
        TaskResult(task_id=f"t{i:02d}", arm=arm, run=run, passed=True)
        for i in range(4) for arm in ("baseline", "candidate") for run in range(2)
    ]  # fmt: skip
    report = report_from_results(rows, config=CampaignConfig(runs=RUNS, n_resamples=200))
    assert report.n_paired == 0 and report.runs == RUNS
    assert {e.reason for e in report.excluded} == {
        f"{PARTLY_RUN_PREFIX}: baseline 2 of {RUNS} runs, candidate 2 of {RUNS} runs"
    }
    assert report.provenance.runs == RUNS
