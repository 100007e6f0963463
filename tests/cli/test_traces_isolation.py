"""``traces="on"`` (spans required) with ``isolation="process"`` is refused: spans are collected
from agents in this process only, so the run collected nothing and said nothing (exit 0).

Refused where the configuration is built (``CampaignConfig``), so the library and the command
line say the same thing: one line, exit 1, before any agent is called.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli_shared import run_here
from pydantic import ValidationError

from ablation import CampaignConfig

WHY = "'on' requires spans from agents in this process, and isolation='process' runs them in worker processes"


def test_the_configuration_refuses_required_traces_in_workers() -> None:
    with pytest.raises(ValidationError, match=WHY):
        CampaignConfig(traces="on", isolation="process")
    for traces in ("auto", "off"):  # spans wanted where available: allowed
        assert CampaignConfig(traces=traces, isolation="process").traces == traces
    assert CampaignConfig(traces="on").isolation == "thread"


def test_the_command_refuses_it_in_one_line_before_any_call(tmp_path: Path) -> None:
    marker = tmp_path / "called"
    (tmp_path / "suite.py").write_text(
        "from ablation import AblationTask\ntasks = [AblationTask(task_id='t', input_data=1, expected_output=1)]\n"
    )
    (tmp_path / "agent.py").write_text(f"def agent(x):\n    open({str(marker)!r}, 'w').close()\n    return x\n")
    done = run_here(["run", "suite.py", "--baseline", "agent.py:agent", "--candidate", "agent.py:agent",
                     "--traces", "on", "--isolation", "process", "--no-store"], cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"ablation: error: invalid option: --traces: {WHY}, where none is collected\n"
    assert not marker.exists()
