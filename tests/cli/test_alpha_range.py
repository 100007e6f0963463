"""alpha is refused outside (0, 0.5) before anything runs.

Every gate tests one side, and the non-inferiority and equivalence tests use the 1 - 2 alpha
interval, so alpha >= 0.5 has no test. The range was (0, 1): ``run --alpha 0.6 --margin 0.05``
called every agent and then ended in a bare ``ValueError`` from the statistics, leaving a stored
campaign no later ``report`` could judge.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import cli
from helpers.cli_shared import run_here
from pydantic import ValidationError

from ablation import CampaignConfig

AGENTS = """
from pathlib import Path

def agent(task):
    Path(__file__).with_name("called").write_text("yes")
    return task["expression"]
"""


@pytest.mark.parametrize("value", ["0.5", "0.6", "1"])
def test_a_flag_outside_the_range_is_refused_before_any_agent_call(tmp_path: Path, value: str) -> None:
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    proc = run_here(["run", str(cli.REPO / "tasks" / "arithmetic.py"), "--baseline", "agents.py:agent",
                     "--candidate", "agents.py:agent", "--no-store", "--alpha", value, "--margin", "0.05"],
                    cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert line.endswith(f"argument --alpha: --alpha must be a number in (0, 0.5), got '{value}'")
    assert not (tmp_path / "called").exists()


def test_a_project_value_outside_the_range_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nalpha = 0.5\nmargin = 0.05\n", encoding="utf-8")
    before = tmp_path / "b.jsonl"
    before.write_text('{"id": "a", "passed": true}\n', encoding="utf-8")
    proc = run_here(["compare", str(before), str(before)], cwd=tmp_path)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert "pyproject.toml" in line and "alpha" in line and "0.5" in line


@pytest.mark.parametrize("alpha", [0.5, 0.7, 0.0])
def test_the_configuration_refuses_it(alpha: float) -> None:
    with pytest.raises(ValidationError, match="alpha"):
        CampaignConfig(alpha=alpha)
    assert CampaignConfig(alpha=0.49).alpha == 0.49
