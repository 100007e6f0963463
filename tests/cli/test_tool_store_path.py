"""``[tool.ablation] store`` is relative to the folder of the ``pyproject.toml`` that sets it, as
the file is found from any folder below it: a campaign run from a subfolder is stored in the
project's store, where ``ablation list`` finds it from the project's root and from the subfolder.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here

SUITE = '''
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{n}", input_data=n, expected_output=2 * n) for n in range(3)]
'''
AGENTS = "def double(n):\n    return 2 * n\n"


def test_a_store_in_the_file_is_the_projects_from_any_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ablation]\nstore = "results/runs.db"\n')
    (tmp_path / "suite.py").write_text(SUITE)
    (tmp_path / "agents.py").write_text(AGENTS)
    sub = tmp_path / "docs"
    sub.mkdir()
    done = run_here(
        ["run", "../suite.py", "--baseline", "../agents.py:double", "--candidate", "../agents.py:double",
         "--no-progress", "--quiet"],
        cwd=sub,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "results" / "runs.db").is_file() and not (sub / "results").exists()
    for folder in (tmp_path, sub):
        listed = run_here(["list", "--format", "json"], cwd=folder)
        assert listed.returncode == 0, listed.stderr
        assert [c["n_trials"] for c in json.loads(listed.stdout)] == [6]
