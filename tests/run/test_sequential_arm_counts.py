"""A sequential campaign's arm summaries count the trials of the tasks it kept, and only those.

When a sequential campaign decides, the trials still in flight finish and are stored; their
tasks are not part of the analysis. Every figure of an arm's summary (trials, errors, timeouts,
retried trials, cost) must leave them out as the errors section does, or it varies from run to
run with timing. End to end through the command line: a candidate that fails every task after a
short sleep (some by raising, some after a retried connection error, some by timing out), 16 trials in flight, so
many finish after the stop; the summaries are recounted by hand from the stored trials. Two
campaigns run side by side, one a command-line process, the other the same command in this
process (``run_here``), and their counts must agree.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.cli import cli_env, kill, run_here, start

from ablation import RunStore

_AGENTS = '''
import time

from ablation import AgentOutput


def ok(x):
    return AgentOutput(output=3 * x["n"], cost=0.25)


_SEEN = set()


def broken(x):
    time.sleep(0.05)
    if x["n"] % 4 == 0:
        time.sleep(5)  # a timeout at --timeout 3
    if x["n"] % 3 == 0 and x["n"] not in _SEEN:
        _SEEN.add(x["n"])
        raise ConnectionError("reset")  # retried once (--max-attempts 2), after <= 1 s
    if x["n"] % 3 == 1:
        raise RuntimeError("down")
    return AgentOutput(output=-1, cost=0.5 + (x["n"] % 5) / 4)
'''
_COUNTS = ("n_trials", "errors", "timeouts", "retried", "cost_total")


def _args(tmp_path: Path, name: str, agents: Path) -> list[str]:
    """The campaign, into its own store ``NAME.db``."""
    return ["run", "tests/helpers/slow_suite.py", "--baseline", f"{agents}:ok", "--candidate",
            f"{agents}:broken", "--sequential", "--concurrency", "16", "--timeout", "3",
            "--max-attempts", "2", "--fail-fast", "0", "--store", str(tmp_path / f"{name}.db"),
            "--no-progress", "--format", "json", "--seed", "1"]  # fmt: skip


def _finish(tmp_path: Path, name: str, done: subprocess.CompletedProcess[str]) -> tuple[dict, dict[str, dict]]:
    """The report of a finished campaign of :func:`_args`, and each arm's counts recounted."""
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    not_run = {e["task_id"] for e in report["excluded"] if e["reason"].startswith("not run")}
    with RunStore(tmp_path / f"{name}.db") as db:
        campaign = db.latest_campaign()
        assert campaign is not None
        trials = db.results(campaign.campaign_id)
    assert any(t.task_id in not_run for t in trials)  # trials did finish after the stop
    kept = [t for t in trials if t.task_id not in not_run]
    recount = {}
    for arm in ("baseline", "candidate"):
        mine = [t for t in kept if t.arm == arm]
        costs = [t.cost for t in mine if t.cost is not None]
        recount[arm] = {
            "n_trials": len(mine),
            "errors": sum(t.status == "error" for t in mine),
            "timeouts": sum(t.status == "timeout" for t in mine),
            "retried": sum(t.attempts > 1 for t in mine),
            "cost_total": sum(costs) if costs else None,
        }
    return report, recount


@pytest.mark.slow
def test_arm_counts_are_a_recount_over_the_kept_tasks(tmp_path: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    # the two campaigns run side by side (each mostly waits for its time-outs): their timings
    # differ from each other as two runs one after the other would, and the counts must not
    proc = start(_args(tmp_path, "first", agents), cli_env(SLOW_SUITE_TASKS="120"))
    try:
        here = run_here(_args(tmp_path, "second", agents), {"SLOW_SUITE_TASKS": "120"})
        out, err = proc.communicate(timeout=120)
    finally:
        kill(proc)
    first, recount = _finish(tmp_path, "first", subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    second, _ = _finish(tmp_path, "second", here)
    assert first["sequential"]["stopped_early"]
    groups = first["errors"]["groups"]
    for arm in ("baseline", "candidate"):
        summary = first[arm]
        assert {k: summary[k] for k in _COUNTS} == pytest.approx(recount[arm]), arm
        failed = sum(g["count"] for g in groups if g["arm"] == arm)
        assert summary["errors"] + summary["timeouts"] == failed, (arm, summary, groups)
        assert {k: second[arm][k] for k in _COUNTS} == {k: summary[k] for k in _COUNTS}
    assert first["candidate"]["errors"] and first["candidate"]["timeouts"]
    assert first["candidate"]["retried"] and first["baseline"]["cost_total"]
