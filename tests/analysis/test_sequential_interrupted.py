"""A sequential campaign interrupted (a real SIGINT) before it decided, then ``ablation report``.

Nothing was decided and most tasks never ran, so the fixed-n test of what did run is not the
planned look at the end of the suite (STATISTICS.md section 10): the fixed-n figures are
descriptive, the regression gate is the e-process's alone, and the sequential section counts
the tasks and agent calls that ran.

Suite: 40 tasks; in the run order (seed 0) the first 6 regress and the next 4 pass in both arms,
and every later task blocks, so the campaign is interrupted after exactly 10 pairs. Six
regressions in a row give the e-process (2**7 - 1) / 7 = 18.1, short of 1/alpha = 20, while the
one-sided exact McNemar p of b = 6, c = 0 is 1/64 < alpha.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from ablation.analysis.sequential import sequential_order

N_TASKS = 40
FAST = 10
SUITE = f"""
from ablation import AblationTask
from ablation.analysis.sequential import sequential_order
order = sequential_order([f"t{{i:02d}}" for i in range({N_TASKS})], 0)
tasks = [AblationTask(task_id=t, input_data={{"pos": p}}, expected_output="yes")
         for p, t in enumerate(order)]
"""
AGENTS = f"""
import time

def _wait(task):
    if task["pos"] >= {FAST}:
        time.sleep(60)  # the campaign is interrupted while these run

def baseline(task):
    _wait(task)
    return "yes"

def candidate(task):
    _wait(task)
    return "no" if task["pos"] < 6 else "yes"
"""


def _stored(store: Path) -> tuple[set[str], int]:
    """Tasks with a stored trial, and the stored trials, read from the store's table."""
    with contextlib.closing(sqlite3.connect(store)) as conn:
        rows = conn.execute("SELECT task_id FROM trials").fetchall()
    return {tid for (tid,) in rows}, len(rows)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    folder = tmp_path_factory.mktemp("interrupted")
    (folder / "suite.py").write_text(SUITE, encoding="utf-8")
    (folder / "agents.py").write_text(AGENTS, encoding="utf-8")
    store = folder / "runs.db"
    args = ["run", str(folder / "suite.py"), "--baseline", f"{folder / 'agents.py'}:baseline",
            "--candidate", f"{folder / 'agents.py'}:candidate", "--sequential", "--store",
            str(store), "--concurrency", "4", "--no-progress", "--format", "json"]  # fmt: skip
    proc = cli.start(args, cli.cli_env())
    try:
        cli.wait_until(lambda: cli.stored_trials(store) >= 2 * FAST, timeout=60, proc=proc)
    finally:
        cli.kill(proc, signal.SIGINT)
    assert proc.returncode == 1
    assert [status for _, status, _ in cli.campaigns(store)] == ["interrupted"]
    return store, folder


def test_the_report_counts_what_ran_and_calls_the_fixed_n_test_descriptive(
    interrupted: tuple[Path, Path],
) -> None:
    store, folder = interrupted
    ran, trials = _stored(store)
    assert ran == set(sequential_order([f"t{i:02d}" for i in range(N_TASKS)], 0)[:FAST])
    proc = cli.run_here(["report", "latest", "--store", str(store), "--format", "json"], cwd=folder)
    assert proc.returncode == 2, proc.stderr  # 30 pairs missing: the completeness gate fails
    report = json.loads(proc.stdout)
    s = report["sequential"]
    assert s["gate"] == "undecided" and s["pairs"] == FAST
    assert s["tasks_run"] == len(ran) < s["n_tasks"] == N_TASKS
    assert s["agent_calls"] == trials == 2 * FAST
    assert s["agent_calls_saved"] == 0 and not s["stopped_early"]
    assert s["fixed_n_descriptive"] is True
    assert report["table"]["regressions"] == 6 and report["uplift_test"]["pvalue_worse"] < 0.05
    gates = {g["name"]: g for g in report["gates"]}
    regression = gates["no significant regression"]
    assert regression["status"] == "inconclusive"  # the e-process did not reach 1/alpha
    assert "so the fixed-n test is valid" not in regression["evidence"]
    assert "stopped undecided before every task ran" in regression["evidence"]
    assert gates["complete comparison"]["status"] == "fail"


def test_without_the_completeness_gate_an_undecided_campaign_cannot_pass(
    interrupted: tuple[Path, Path],
) -> None:
    """Neither the e-process's nor the planned fixed-n look decided: no PASS beside "worse"."""
    store, folder = interrupted
    proc = cli.run_here(
        ["report", "latest", "--store", str(store), "--format", "json", "--allow-incomplete"],
        cwd=folder,
    )
    report = json.loads(proc.stdout)
    gates = {g["name"]: g for g in report["gates"]}
    assert report["summary"] == "regression"  # the descriptive fixed-n test, as the sentence says
    assert gates["no significant regression"]["status"] == "inconclusive"
    assert report["verdict"] == "fail" and proc.returncode == 2
    assert "descriptive" in cli.run_here(
        ["report", "latest", "--store", str(store), "--allow-incomplete"], cwd=folder
    ).stdout


def test_the_words_say_the_campaign_stopped_undecided(interrupted: tuple[Path, Path]) -> None:
    store, folder = interrupted
    for fmt in ("terminal", "markdown"):
        out = cli.run_here(
            ["report", "latest", "--store", str(store), "--format", fmt, "--allow-incomplete"],
            cwd=folder,
        ).stdout
        assert "decided by undecided" not in out and "stopped on the data" not in out, out
        flat = " ".join(out.split())
        assert "undecided, not every task ran" in flat and "stopped undecided before every task ran" in flat
        assert "Verdict: FAIL" in flat
