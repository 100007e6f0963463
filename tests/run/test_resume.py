"""Crash, interrupt and resume: nothing is lost and nothing runs twice (DESIGN.md sections 5, 9).

The end-to-end tests drive the real command line in a subprocess on ``tests/helpers/slow_suite.py``
(200 tasks x 2 arms, 20-50 ms agents): they kill it with SIGKILL or interrupt it with SIGINT
while trials are being committed, resume it with ``--resume``, and compare the final report with
an uninterrupted run of the same seed. The resumes and the uninterrupted run are the same command
in this process (``run_here``; no signal reaches them) with instant agents (the compared reports
hold no latency). The store is inspected with plain ``sqlite3``.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, slow_agents, slow_suite

from ablation import (
    CampaignAborted,
    CampaignConfig,
    ResumeMismatchError,
    RunStore,
    TaskResult,
    run_ablation_campaign,
)

N_TRIALS = 2 * slow_suite.DEFAULT_TASKS
#: The environment of a command run in this process: the whole suite, instant agents.
HERE = {"SLOW_AGENTS_SCALE": "0", "SLOW_SUITE_TASKS": None, "SLOW_SUITE_CHANGE": None,
        "SLOW_AGENTS_COUNTER_DIR": None}  # fmt: skip
EXIT_GATE = 2
FAST = CampaignConfig(n_resamples=200, concurrency=1, on_error="abort", seed=3)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The JSON report of an uninterrupted command-line run (seed 5)."""
    store = tmp_path_factory.mktemp("reference") / "runs.db"
    proc = cli.run_here(cli.run_args(store), HERE)
    # 20 regressions against 10 improvements: one-sided exact McNemar p = 0.049, so the default
    # "no significant regression" gate fails (exit 2); resumed runs must reproduce that too.
    assert proc.returncode == EXIT_GATE, proc.stderr
    report = json.loads(proc.stdout)
    # The suite is built to flip tasks both ways, so the comparison below is not vacuous.
    assert report["table"]["regressions"] == 20
    assert report["table"]["improvements"] == 10
    assert report["n_paired"] == slow_suite.DEFAULT_TASKS
    return report


def _assert_whole_trials(store: Path) -> None:
    """Every stored row is one complete, readable trial, stored once."""
    with contextlib.closing(sqlite3.connect(store)) as conn:
        dupes = conn.execute(
            "SELECT task_id, arm, run, COUNT(*) FROM trials GROUP BY campaign_id, task_id, arm, run"
            " HAVING COUNT(*) > 1"
        ).fetchall()
        rows = conn.execute(
            "SELECT task_id, arm, status, passed, result_json FROM trials"
        ).fetchall()
    assert dupes == []
    for task_id, arm, status, passed, blob in rows:
        result = TaskResult.model_validate_json(blob)
        assert (result.task_id, result.arm, result.status, result.passed) == (
            task_id, arm, status, bool(passed),
        )  # fmt: skip
        assert result.status == "completed", result.error
        assert result.latency_s is not None and result.wall_s is not None


def _agent_calls(counter_dir: Path) -> int:
    return slow_agents.calls(counter_dir, "baseline") + slow_agents.calls(counter_dir, "candidate")


@pytest.mark.slow
@pytest.mark.xdist_group("resume-reference")  # one worker runs the reference campaign once
def test_kill_9_mid_campaign_then_resume_gives_the_uninterrupted_report(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    store = tmp_path / "runs.db"
    first, second = tmp_path / "calls-killed", tmp_path / "calls-resumed"
    first.mkdir()
    second.mkdir()

    proc = cli.start(cli.run_args(store), cli.cli_env(SLOW_AGENTS_COUNTER_DIR=first))
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= 60, timeout=60, proc=proc)
    finally:
        cli.kill(proc, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    done = cli.stored_trials(store)
    assert 0 < done < N_TRIALS, "the kill must land mid-campaign"
    [(campaign_id, status, _)] = cli.campaigns(store)
    assert status == "running"  # killed: nobody could mark it
    assert _agent_calls(first) >= done
    _assert_whole_trials(store)

    resumed = cli.run_here(
        cli.run_args(store, extra=["--resume"]), {**HERE, "SLOW_AGENTS_COUNTER_DIR": second}
    )
    assert resumed.returncode == EXIT_GATE, resumed.stderr

    keys = cli.trial_keys(store)
    assert len(keys) == N_TRIALS
    assert {copies for *_, copies in keys} == {1}
    assert cli.campaigns(store) == [(campaign_id, "complete", N_TRIALS)]
    _assert_whole_trials(store)
    # The resume ran exactly the missing trials: none lost, none run twice.
    assert _agent_calls(second) == N_TRIALS - done
    report = json.loads(resumed.stdout)
    assert report["provenance"]["campaign_id"] == campaign_id
    assert cli.stable(report) == cli.stable(reference)


@pytest.mark.slow
@pytest.mark.xdist_group("resume-reference")
def test_ctrl_c_marks_the_campaign_interrupted_and_its_hint_resumes_it(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    store = tmp_path / "runs.db"
    calls = tmp_path / "calls"
    calls.mkdir()
    proc = cli.start(cli.run_args(store), cli.cli_env())
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= 40, timeout=60, proc=proc)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            cli.kill(proc)
    assert proc.returncode == 1, err
    assert elapsed < 5.0, f"took {elapsed:.1f} s to stop after SIGINT"
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "--resume" in lines[0]
    [(campaign_id, status, done)] = cli.campaigns(store)
    assert status == "interrupted"
    assert 0 < done < N_TRIALS
    assert campaign_id in lines[0]
    _assert_whole_trials(store)

    # The printed command resumes the campaign as it is.
    hint = shlex.split(lines[0].split("Resume with:", 1)[1])
    assert hint[:2] == ["ablation", "run"]
    resumed = cli.run_here(hint[1:], {**HERE, "SLOW_AGENTS_COUNTER_DIR": calls})
    assert resumed.returncode == EXIT_GATE, resumed.stderr
    assert _agent_calls(calls) == N_TRIALS - done
    assert cli.campaigns(store) == [(campaign_id, "complete", N_TRIALS)]
    assert {copies for *_, copies in cli.trial_keys(store)} == {1}
    assert cli.stable(json.loads(resumed.stdout)) == cli.stable(reference)


@pytest.mark.slow
def test_cli_refuses_to_resume_after_the_suite_changed(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    env = {**HERE, "SLOW_SUITE_TASKS": "40"}
    first = cli.run_here(cli.run_args(store), env)
    assert first.returncode == 0, first.stderr
    before = cli.campaigns(store)

    changed = {"SLOW_AGENTS_SCALE": "0", "SLOW_SUITE_TASKS": "40", "SLOW_SUITE_CHANGE": "t017"}
    proc = cli.run_here(cli.run_args(store, extra=["--resume"]), changed)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "'t017'" in lines[0]
    assert "Traceback" not in proc.stderr
    assert cli.campaigns(store) == before  # nothing was run or re-labelled


class _Flaky:
    """A candidate that fails task ``t006`` while ``down`` is set, counting its calls."""

    name = "flaky-candidate"

    def __init__(self) -> None:
        self.down = True
        self.calls: list[int] = []

    def __call__(self, task: dict[str, Any]) -> int:
        self.calls.append(task["n"])
        if self.down and task["n"] == 6:
            raise RuntimeError("service down")
        return 3 * task["n"]


def _aborted_campaign(store: Path, agent: _Flaky) -> set[tuple[str, str, int]]:
    """Run the 12-task suite until ``agent`` aborts it; return the stored trial keys."""
    with pytest.raises(CampaignAborted):
        run_ablation_campaign(
            slow_agents.baseline, agent, slow_suite.make_tasks(12), config=FAST, store=store
        )
    with RunStore(store) as s:
        [record] = s.list_campaigns()
        assert record.status == "aborted"  # stopped by on_error="abort"
        assert 0 < record.n_trials < 24
        return s.completed_keys(record.campaign_id)


def test_resume_mismatch_names_the_changed_task(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    agent = _Flaky()
    stored = _aborted_campaign(store, agent)
    agent.down = False

    edited = slow_suite.make_tasks(12, changed="t004")
    with pytest.raises(ResumeMismatchError, match="'t004'") as info:
        run_ablation_campaign(
            slow_agents.baseline, agent, edited, config=FAST, store=store, resume=True
        )
    message = str(info.value)
    assert "t005" not in message
    assert "agent" not in message  # only the task differs
    with RunStore(store) as s:
        [after] = s.list_campaigns()
        assert after.status == "aborted"  # unchanged by the refused resume
        assert s.completed_keys(after.campaign_id) == stored


def test_resume_through_the_api_runs_only_the_missing_trials(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    agent = _Flaky()
    stored = _aborted_campaign(store, agent)
    agent.down = False
    agent.calls.clear()

    report = run_ablation_campaign(
        slow_agents.baseline, agent, slow_suite.make_tasks(12), config=FAST, store=store,
        resume=True,
    )  # fmt: skip
    missing = {f"t{n:03d}" for n in range(12)} - {t for t, arm, _ in stored if arm == "candidate"}
    assert sorted(f"t{n:03d}" for n in agent.calls) == sorted(missing)
    assert report.n_paired == 12
    with RunStore(store) as s:
        [record] = s.list_campaigns()
        assert (record.status, record.n_trials) == ("complete", 24)
        errored = [r for r in s.results(record.campaign_id) if r.status != "completed"]
    # The trial that aborted the run stays as recorded: a resume fills gaps, it does not rerun.
    assert [(r.task_id, r.arm, r.error) for r in errored] == [
        ("t006", "candidate", "RuntimeError: service down")
    ]
