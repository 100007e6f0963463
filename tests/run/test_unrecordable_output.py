"""An agent whose reported numbers no ``TaskResult`` can hold is that trial's error, never the
end of the campaign (a negative token count once ended ``ablation run`` with a pydantic error,
exit 1, no report; input + output tokens past the count limit were stored unchecked)."""

from __future__ import annotations

from typing import Any

import pytest

from ablation import AblationTask, AgentOutput, TrialUsage, run_ablation_campaign
from ablation.outputs import COUNT_LIMIT

TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]


def echo(x: int) -> int:
    return x


def negative_tokens(x: int) -> AgentOutput:
    return AgentOutput(output=x, tokens=-3)


def usage_past_the_limit(x: int) -> AgentOutput:
    half = COUNT_LIMIT - 1
    return AgentOutput(output=x, usage=TrialUsage(input_tokens=half, output_tokens=half))


@pytest.mark.parametrize(
    ("agent", "error_type", "words"),
    [
        (negative_tokens, "ValidationError", "greater than or equal to 0"),
        (usage_past_the_limit, "UnrecordableResult", "input + output tokens"),
    ],
)
def test_the_campaign_records_the_error_and_goes_on(agent: Any, error_type: str, words: str) -> None:
    report = run_ablation_campaign(echo, agent, TASKS)
    assert report.errors.completed == {"baseline": 4, "candidate": 0}
    [group] = report.errors.groups
    assert (group.arm, group.stage, group.error_type, group.count) == (
        "candidate", "agent", error_type, 4
    )
    assert words in group.example
    assert report.verdict == "fail"  # four errored trials fail the completeness gate
