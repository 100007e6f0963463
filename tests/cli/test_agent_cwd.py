"""An agent that changes the working directory does not move the files ``ablation run`` uses.

With thread isolation agents share the process, and a coding agent that ``cd``s into a checkout
changes the working directory of the whole run. The run used to read its streamed JSONL suite,
reopen its store and write ``--output`` relative to the new directory: the second candidate
failed with "tasks.jsonl: cannot read the file", and a report went to the wrong place.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli_shared import run_here

AGENTS = """\
import os


def still(x):
    return x


def wanderer(x):
    os.chdir(os.environ["WANDER_TO"])
    return x
"""


@pytest.mark.slow
def test_an_agent_changing_the_cwd_moves_neither_suite_nor_store_nor_report(tmp_path: Path) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "agents.py").write_text(AGENTS, encoding="utf-8")
    with (work / "tasks.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(3):
            fh.write(json.dumps({"task_id": f"t{i}", "input_data": i, "expected_output": i}) + "\n")
    args = ["run", "tasks.jsonl", "--baseline", "agents.py:still",
            "--candidate", "agents.py:wanderer", "--candidate", "agents.py:still",
            "--store", "runs.db", "--format", "json", "-o", "report.json", "--no-progress"]  # fmt: skip
    # in this process, whose working directory the agent's thread changes (run_here restores it)
    done = run_here(args, {"WANDER_TO": str(elsewhere)}, cwd=work)
    assert done.returncode == 0, done.stderr
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    assert [c["report"]["n_paired"] for c in report["candidates"]] == [3, 3]
    assert (work / "runs.db").exists()
    assert sorted(p.name for p in elsewhere.iterdir()) == []
