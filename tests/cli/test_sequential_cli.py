"""``--sequential`` end to end through the command line (SQLite store; the campaign that is
killed runs in a subprocess, the others in this process).

Suite: ``tests/helpers/slow_suite.py`` (200 tasks; 100 for the alpha split of two candidates);
``candidate_c`` regresses 20 tasks (of 200) and fixes none, so a sequential campaign stops early
on "significant regression".
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, slow_agents
from helpers.cli_shared import run_here

from ablation.cli.options import campaign_config
from ablation.errors import ConfigError
from ablation.stats import SequentialMonitor

N_TASKS = 200
SEQ = ["--sequential"]


def _reference_stop(seed: int, candidates: int = 1, n_tasks: int = N_TASKS) -> SequentialMonitor:
    """The stopping pair from the agents' failure rules and the statistics module's monitor."""
    from ablation.analysis.sequential import sequential_order

    order = sequential_order([f"t{n:03d}" for n in range(n_tasks)], seed)
    mon = SequentialMonitor(alpha=0.05, n_candidates=candidates, population_size=n_tasks)
    for tid in order:
        n = int(tid[1:])
        b = n % 10 != 3
        c = n % 10 not in (3, 9)
        mon = mon.update(float(c) - float(b))
        if mon.decided:
            return mon
    return mon


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    store = tmp_path_factory.mktemp("seq") / "runs.db"
    calls = tmp_path_factory.mktemp("calls")
    proc = run_here(
        cli.run_args(store, candidates=["candidate_c"], extra=SEQ),
        {"SLOW_AGENTS_COUNTER_DIR": calls, "SLOW_SUITE_CHANGE": None},
    )
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    report["_calls"] = slow_agents.calls(calls, "baseline") + slow_agents.calls(calls, "candidate_c")
    return report


@pytest.mark.slow
@pytest.mark.xdist_group("sequential-uninterrupted")  # one worker runs that campaign once
def test_clearly_worse_candidate_stops_early_with_exit_2(uninterrupted: dict[str, Any]) -> None:
    s = uninterrupted["sequential"]
    ref = _reference_stop(seed=5)
    assert s["stopped_early"] is True and s["gate"] == "regression"
    assert s["pairs"] == ref.decided_at < N_TASKS
    assert s["agent_calls_saved"] == 2 * (N_TASKS - s["tasks_run"]) > 0
    # agent calls really made: the decided pairs, plus the trials of later tasks that ran while
    # earlier ones were still in flight (not analysed); far fewer than the whole suite's 400
    assert 2 * s["tasks_run"] <= uninterrupted["_calls"] < N_TASKS
    assert uninterrupted["verdict"] == "fail"
    not_run = [e for e in uninterrupted["excluded"] if e["reason"].startswith("not run (stopped early)")]
    assert len(not_run) == N_TASKS - s["tasks_run"]


@pytest.mark.slow
@pytest.mark.xdist_group("sequential-uninterrupted")
def test_kill_9_then_resume_stops_at_the_same_pair(
    tmp_path: Path, uninterrupted: dict[str, Any]
) -> None:
    store = tmp_path / "runs.db"
    proc = cli.start(cli.run_args(store, candidates=["candidate_c"], extra=SEQ), cli.cli_env())
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= 30, timeout=60, proc=proc)
    finally:
        cli.kill(proc, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    done = cli.stored_trials(store)
    assert done < 2 * uninterrupted["sequential"]["tasks_run"], "the kill must land before the stop"
    resumed = run_here(  # the kill was the process's; the resume reads what it left
        cli.run_args(store, candidates=["candidate_c"], extra=[*SEQ, "--resume"]), {"SLOW_SUITE_CHANGE": None}
    )
    assert resumed.returncode == 2, resumed.stderr
    report = json.loads(resumed.stdout)
    expected = {k: v for k, v in uninterrupted.items() if k != "_calls"}
    assert report["sequential"] == expected["sequential"]
    assert cli.stable(report) == cli.stable(expected)


@pytest.mark.slow
def test_several_candidates_split_alpha(tmp_path: Path) -> None:
    n_tasks = 100  # the worse candidate still stops early (at 71 pairs); the better one runs them all
    proc = run_here(
        cli.run_args(tmp_path / "runs.db", candidates=["candidate_c", "candidate_b"], extra=SEQ),
        {"SLOW_AGENTS_SCALE": "0.2", "SLOW_SUITE_TASKS": str(n_tasks), "SLOW_SUITE_CHANGE": None},
    )
    assert proc.returncode == 2, proc.stderr
    worse, better = (c["report"]["sequential"] for c in json.loads(proc.stdout)["candidates"])
    assert worse["candidates"] == better["candidates"] == 2
    assert worse["alpha_per_candidate"] == pytest.approx(0.025)
    stop = _reference_stop(5, 2, n_tasks).decided_at
    assert worse["gate"] == "regression" and worse["pairs"] == stop < n_tasks
    assert better["gate"] == "end_of_suite" and better["tasks_run"] == n_tasks


@pytest.mark.slow
def test_sequential_replay_of_result_files() -> None:
    data = "examples/data/swebench-verified-mini__"
    proc = run_here(
        ["compare", f"{data}gpt-5.jsonl", f"{data}gpt-5-nano.jsonl", "--sequential-replay",
         "--format", "json", "--seed", "1"],
    )
    assert proc.returncode == 2, proc.stderr
    s = json.loads(proc.stdout)["sequential"]
    assert s["stopped_early"] and s["gate"] == "regression"
    assert s["agent_calls"] < s["agent_calls_planned"] == 1000


@pytest.mark.slow
def test_plan_sequential_prints_expected_calls_beside_fixed_n() -> None:
    proc = run_here(
        ["plan", "--discordance", "0.3", "--uplift", "-0.12", "--sequential", "--simulations",
         "500"],
    )
    assert proc.returncode == 0, proc.stderr
    assert "tasks needed" in proc.stdout and "expected agent calls" in proc.stdout
    assert "90th percentile" in proc.stdout


def test_futility_needs_sequential() -> None:
    with pytest.raises(ConfigError, match="--sequential"):
        campaign_config({"stop_when_inconclusive_after": 5})
    config = campaign_config({"sequential": True, "stop_when_inconclusive_after": 5, "n_candidates": 3})
    assert config.sequential is not None
    assert (config.sequential.futility_after, config.sequential.candidates) == (5, 3)


def test_resume_keeps_the_stored_alpha_split(tmp_path: Path) -> None:
    """The resume hint of a several-candidate run names fewer candidates than the campaign had."""
    from ablation import CampaignConfig, run_ablation_campaign
    from ablation.cli.commands import _stored_candidates
    from ablation.config import SequentialPolicy

    store = tmp_path / "runs.db"
    assert _stored_candidates(store, True) is None
    config = CampaignConfig(n_resamples=200, sequential=SequentialPolicy(candidates=3))
    tasks = __import__("helpers.slow_suite", fromlist=["make_tasks"]).make_tasks(10)
    report = run_ablation_campaign(
        lambda x: 3 * x["n"], lambda x: 3 * x["n"], tasks, config=config, store=store
    )
    assert _stored_candidates(store, True) == 3
    assert _stored_candidates(store, report.provenance.campaign_id or "") == 3
