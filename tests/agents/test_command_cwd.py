"""A command agent runs where it was made, whoever changes the process's working directory later
(a Python agent of the same run that ``cd``s into a checkout): ``cmd:python3 agent.py`` used to
run in the new directory and fail with "can't open file" there, a regression of its arm."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.sources.agent_specs import load_agent


def test_a_command_agent_keeps_the_directory_it_was_made_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    (home / "agent.py").write_text("import json, sys; print(json.dumps(json.load(sys.stdin)))\n")
    monkeypatch.chdir(home)
    command = load_agent(f"cmd:{sys.executable} agent.py")

    def wanderer(x: int) -> int:
        monkeypatch.chdir(elsewhere)
        return x

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(2)]
    results = AblationEngine(CampaignConfig(concurrency=1)).run(wanderer, command, tasks)
    got = sorted((r.arm, r.status, r.passed) for r in results)
    assert got == [(arm, "completed", True) for arm in ("baseline", "candidate") for _ in tasks]
