"""A command or HTTP agent's reply may carry a trace, as a Python agent's ``AgentOutput`` does.

A reply object was read as an ``AgentOutput`` only with the keys ``output``, ``cost``,
``tokens``, ``metrics`` and ``usage``: one that also sent its ``trace`` (the model messages, for
the drill-down) was the output as a whole, so every such trial failed its verifier. A real
command, run by the engine, no mocks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.agents.command import CommandAgent
from ablation.agents.forms import AgentProcessError, interpret_agent_json

TRACE = [{"kind": "request", "parts": [{"kind": "text", "content": "2 + 2? \ud800"}]}]
REPLY = json.dumps({"output": 4, "tokens": 7, "trace": TRACE})


def test_a_commands_trace_is_kept_with_its_trial(tmp_path: Path) -> None:
    agent = CommandAgent([sys.executable, "-c", f"print({REPLY!r})"])
    tasks = [AblationTask(task_id="t", input_data=1, expected_output=4)]
    (result,) = AblationEngine(CampaignConfig()).run(agent, agent, tasks, arms=("candidate",))
    assert (result.status, result.passed, result.output, result.tokens) == ("completed", True, 4, 7)
    assert result.trace is not None and result.trace[0]["parts"][0]["content"].startswith("2 + 2? ")


def test_a_trace_that_is_no_list_is_the_replys_error() -> None:
    with pytest.raises(AgentProcessError, match="trace"):
        interpret_agent_json({"output": 4, "trace": "not a list"}, "agent")
