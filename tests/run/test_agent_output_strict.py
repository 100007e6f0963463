"""A Python agent's ``AgentOutput`` reads its numbers by the rule a JSON reply is read by.

Pydantic's lax mode turned ``AgentOutput(cost="0.5")`` into 0.5, ``tokens="12"`` into 12 and
``cost=True`` into 1.0, while the same values in a command or HTTP agent's reply were refused.
Now one rule holds for both (``ablation.outputs``): a ``bool`` or a text is refused for every
number, an ``int`` is a fine cost or metric, and a count is what :func:`ablation.outputs.as_count`
takes (an ``int`` or a whole ``float``). A refused value is the trial's error naming the field.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from ablation import AblationEngine, AblationTask, AgentOutput, CampaignConfig
from ablation.agents.forms import AgentProcessError, interpret_agent_json
from ablation.outputs import TrialCost, TrialUsage, as_count

VALUES = ["0.5", "12", True, False, 12, 12.0, 12.5, 0, -1.0, b"3", None]

#: (field path as pydantic names it, how to build the keyword arguments of AgentOutput)
FIELDS = {
    "cost": lambda v: {"cost": v},
    "tokens": lambda v: {"tokens": v},
    "metrics.m": lambda v: {"metrics": {"m": v}},
    "usage.input_tokens": lambda v: {"usage": {"input_tokens": v}},
    "usage.model_requests": lambda v: {"usage": {"model_requests": v}},
    "usage.tool_calls.search": lambda v: {"usage": {"tool_calls": {"search": v}}},
    "cost.amount": lambda v: {"cost": {"amount": v}},
}
COUNTS = {"tokens", "usage.input_tokens", "usage.model_requests", "usage.tool_calls.search"}
OPTIONAL = {"cost", "tokens", "usage.input_tokens"}


def _accepted(field: str, value: Any) -> bool:
    """The rule, stated apart from the models: counts by ``as_count``, the other numbers any
    ``int`` or ``float`` from 0 (a metric may be negative); never a ``bool`` or a text."""
    if value is None:
        return field in OPTIONAL
    if field in COUNTS:
        return as_count(value) is not None
    if type(value) not in (int, float):
        return False
    return field == "metrics.m" or value >= 0


def _built(kwargs: dict[str, Any]) -> bool:
    try:
        AgentOutput(**kwargs)
    except ValidationError:
        return False
    return True


def _replied(kwargs: dict[str, Any]) -> bool:
    try:
        interpret_agent_json({"output": 1, **kwargs}, "cmd:agent")
    except AgentProcessError:
        return False
    return True


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("field", list(FIELDS))
def test_one_rule_for_python_and_json_agents(field: str, value: Any) -> None:
    kwargs = FIELDS[field](value)
    expected = _accepted(field, value)
    assert _built(kwargs) is expected
    if not isinstance(value, bytes):  # JSON has no bytes
        assert _replied(kwargs) is expected


def test_whole_float_count_is_the_int_it_is() -> None:
    out = AgentOutput(tokens=12.0, usage=TrialUsage(input_tokens=3.0, tool_calls={"s": 2.0}))  # type: ignore[arg-type]
    assert (type(out.tokens), out.tokens) == (int, 12)
    assert out.usage is not None and out.usage.input_tokens == 3 and out.usage.tool_calls == {"s": 2}
    assert TrialCost(amount=2).amount == 2.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"cost": "0.5"}, "cost"), ({"tokens": "12"}, "tokens"), ({"cost": True}, "cost"),
     ({"metrics": {"m": True}}, "metrics.m")],
)  # fmt: skip
def test_python_agents_refused_number_is_the_trials_error(kwargs: dict[str, Any], field: str) -> None:
    def agent(inp: Any) -> AgentOutput:
        return AgentOutput(output=1, **kwargs)

    tasks = [AblationTask(task_id="t", input_data={}, expected_output=1)]
    (trial,) = AblationEngine(CampaignConfig()).run(agent, agent, tasks, arms=("candidate",))
    assert (trial.status, trial.error_stage, trial.error_type) == ("error", "agent", "ValidationError")
    assert field in trial.error_message
    assert trial.cost is None and trial.tokens is None
