"""``ablation plan --results BEFORE AFTER`` takes the task count and the discordance from the files,
so ``--tasks`` or ``--discordance`` beside it is a usage error naming the flag, exit 1: the plan
printed the files' figures and left the flag unused without a word (``--tasks 3`` planned for 30).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli_shared import run_here


@pytest.mark.parametrize(("flag", "value"), [("--tasks", "3"), ("--discordance", "0.3")])
def test_tasks_or_discordance_beside_results_is_a_usage_error(tmp_path: Path, flag: str, value: str) -> None:
    paths = []
    for name, step in (("b.jsonl", 3), ("a.jsonl", 4)):
        path = tmp_path / name
        path.write_text("".join(json.dumps({"id": f"t{i}", "passed": i % step > 0}) + "\n" for i in range(30)))
        paths.append(str(path))
    assert run_here(["plan", "--results", *paths]).returncode == 0  # the files alone plan
    done = run_here(["plan", "--results", *paths, flag, value])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"ablation: error: ablation plan: {flag} and --results: the files give the tasks and the "
        "discordance; give one or the other\n"
    )
