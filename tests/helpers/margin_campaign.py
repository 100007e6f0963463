"""A small campaign run through ``ablation run`` with ``--margin 0.2``, for report-setting tests.

Suite: 60 tasks both arms pass and 3 the candidate fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import cli

SUITE = """
from ablation import AblationTask
tasks = [AblationTask(task_id=f"ok{i:02d}", input_data={"bad": False}, expected_output="yes")
         for i in range(60)]
tasks += [AblationTask(task_id=f"reg{i}", input_data={"bad": True}, expected_output="yes")
          for i in range(3)]
"""
AGENTS = """
def baseline(task):
    return "yes"

def candidate(task):
    return "no" if task["bad"] else "yes"
"""


#: ``(flags, as the refusal names them, the stored setting in words)``: each would change the stop
#: of the campaign when it runs with ``--sequential`` (seed 0, alpha 0.05, margin 0.2, critical gate on).
STOP_CHANGES = [
    (("--margin", "0.5"), "--margin 0.5", "margin 0.2"),
    (("--seed", "1"), "--seed 1", "seed 0"),
    (("--alpha", "0.1"), "--alpha 0.1", "alpha 0.05"),
    (("--no-critical-gate",), "--no-critical-gate", "the critical gate on"),
]


def run_campaign(folder: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    """Run the campaign in a new ``folder``; its store and its JSON report."""
    folder.mkdir()
    (folder / "suite.py").write_text(SUITE, encoding="utf-8")
    (folder / "agents.py").write_text(AGENTS, encoding="utf-8")
    store = folder / "runs.db"
    proc = cli.run_here(
        ["run", "suite.py", "--baseline", "agents.py:baseline", "--candidate",
         "agents.py:candidate", "--margin", "0.2", "--store", str(store), "--no-progress",
         "--resamples", "200", "--format", "json", *extra],
        cwd=folder,
    )  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    return store, json.loads(proc.stdout)
