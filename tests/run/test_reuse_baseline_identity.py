"""``--reuse-baseline`` takes stored trials for the baseline given: the same agent, the same code.

Before, the stored baseline was used whatever ``--baseline`` named, and whatever its code had
become, without a word; ``--resume`` refused both. Now both are refused the same way (the code
check yields to ``--allow-changed-agent``), before any agent call.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.cli import run_here

pytestmark = pytest.mark.xdist_group("run-reuse-baseline-identity")  # one worker runs the first campaign

SUITE = (
    "from ablation import AblationTask\n"
    "tasks = [AblationTask(task_id=f't{i:02d}', input_data=i, expected_output=i) for i in range(12)]\n"
)


@pytest.fixture(scope="module")
def first_campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder with the suite, the agents and a store holding one campaign, and its id."""
    folder = tmp_path_factory.mktemp("project")
    (folder / "suite.py").write_text(SUITE)
    (folder / "agents.py").write_text("def base(x):\n    return x\n\ndef cand(x):\n    return x\n")
    first = run_here(["run", "suite.py", "--baseline", "agents.py:base", "--candidate", "agents.py:cand",
                      "--store", "runs.db", "--no-progress", "--format", "json"], cwd=folder)  # fmt: skip
    assert first.returncode == 0, first.stderr
    return folder, json.loads(first.stdout)["provenance"]["campaign_id"]


@pytest.fixture
def project(first_campaign: tuple[Path, str], tmp_path: Path) -> tuple[Path, list[str], str]:
    """A copy of that folder for this test (which may edit the agents and add campaigns)."""
    built, campaign = first_campaign
    folder = tmp_path / "project"
    shutil.copytree(built, folder)
    args = ["run", "suite.py", "--candidate", "agents.py:cand", "--store", str(folder / "runs.db"),
            "--no-progress", "--reuse-baseline", campaign]  # fmt: skip
    return folder, args, campaign


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
