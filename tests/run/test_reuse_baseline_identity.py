"""``--reuse-baseline`` takes stored trials for the baseline given: the same agent, the same code.

Before, the stored baseline was used whatever ``--baseline`` named, and whatever its code had
become, without a word; ``--resume`` refused both. Now both are refused the same way (the code
check yields to ``--allow-changed-agent``), before any agent call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

SUITE = (
    "from ablation import AblationTask\n"
    "tasks = [AblationTask(task_id=f't{i:02d}', input_data=i, expected_output=i) for i in range(12)]\n"
)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, list[str], str]:
    (tmp_path / "suite.py").write_text(SUITE)
    (tmp_path / "agents.py").write_text("def base(x):\n    return x\n\ndef cand(x):\n    return x\n")
    store = tmp_path / "runs.db"
    first = run_here(["run", "suite.py", "--baseline", "agents.py:base", "--candidate", "agents.py:cand",
                      "--store", str(store), "--no-progress", "--format", "json"], cwd=tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    campaign = json.loads(first.stdout)["provenance"]["campaign_id"]
    args = ["run", "suite.py", "--candidate", "agents.py:cand", "--store", str(store), "--no-progress",
            "--reuse-baseline", campaign]  # fmt: skip
    return tmp_path, args, campaign


def test_another_baseline_agent_is_refused(project: tuple[Path, list[str], str]) -> None:
    folder, args, campaign = project
    done = run_here([*args, "--baseline", "agents.py:cand"], cwd=folder)
    assert done.returncode == 1
    line, = done.stderr.strip().splitlines()
    assert campaign in line and "its baseline is agents.py:base, not agents.py:cand" in line


def test_changed_baseline_code_is_refused_unless_allowed(project: tuple[Path, list[str], str]) -> None:
    folder, args, _ = project
    (folder / "agents.py").write_text("def base(x):\n    return -1\n\ndef cand(x):\n    return x\n")
    done = run_here([*args, "--baseline", "agents.py:base"], cwd=folder)
    assert done.returncode == 1 and "changed since that campaign ran" in done.stderr
    allowed = run_here([*args, "--baseline", "agents.py:base", "--allow-changed-agent"], cwd=folder)
    assert allowed.returncode == 0, allowed.stderr


def test_the_same_baseline_is_reused(project: tuple[Path, list[str], str]) -> None:
    folder, args, campaign = project
    done = run_here([*args, "--baseline", "agents.py:base", "--format", "json"], cwd=folder)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["provenance"]["baseline_reused_from"] == campaign
