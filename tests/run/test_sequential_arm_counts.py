"""A sequential campaign's arm summaries count the same trials as its errors section.

When a sequential campaign decides, the trials still in flight finish and are stored; their
tasks are not part of the analysis. The errors section already left them out; the arms' error
and timeout counts (``report.candidate.errors``) must too, or they vary from run to run with
timing. End to end through the command line: a candidate that fails every task after a short
sleep, 16 trials in flight, so many finish after the stop.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import cli_env, run

_AGENTS = '''
import time


def ok(x):
    return 3 * x["n"]


def broken(x):
    time.sleep(0.05)
    if x["n"] % 4 == 0:
        time.sleep(5)  # a timeout at --timeout 0.5
    raise RuntimeError("down")
'''


@pytest.mark.slow
def test_arm_counts_match_the_errors_section_after_an_early_stop(tmp_path: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    proc = run(
        ["run", "tests/helpers/slow_suite.py", "--baseline", f"{agents}:ok", "--candidate",
         f"{agents}:broken", "--sequential", "--concurrency", "16", "--timeout", "0.5",
         "--fail-fast", "0", "--no-store", "--no-progress", "--format", "json", "--seed", "1"],
        cli_env(SLOW_SUITE_TASKS="120"),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    assert report["sequential"]["stopped_early"]
    groups = report["errors"]["groups"]
    for arm in ("baseline", "candidate"):
        summary = report[arm]
        failed = sum(g["count"] for g in groups if g["arm"] == arm)
        assert summary["errors"] + summary["timeouts"] == failed, (arm, summary, groups)
        timeouts = sum(g["count"] for g in groups if g["arm"] == arm and g["error_type"] == "Timeout")
        assert summary["timeouts"] == timeouts
    assert report["candidate"]["errors"] > 0 and report["candidate"]["timeouts"] > 0
