"""What an ``AgentOutput`` carries beside its output (trace, metrics, usage) is bounded as the
output is, and one that cannot be stored is its trial's error, never the campaign's end.

A Python agent's ``AgentOutput(trace=...)`` was stored as given: a trace nested 2000 lists deep
raised ``RecursionError`` from ``TaskResult`` validation out of ``AblationEngine.run`` (every
other trial lost with it), and a 100 MB trace, or 100,000 tool names of a kilobyte in its usage,
went whole into the trial's row past ``max_output_bytes``, the bound SECURITY.md promises of
"a Python agent's output". The reference is the output itself: the same value returned as the
output is the trial's ``RecursionError`` or ``OutputTooLarge``.
"""

from __future__ import annotations

from typing import Any

from ablation import (
    AblationEngine,
    AblationTask,
    AgentOutput,
    CampaignConfig,
    TaskResult,
    TrialUsage,
)

CAP = 100_000


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _run(reply: Any) -> dict[str, TaskResult]:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(2)]

    def agent(x: int) -> Any:
        return reply(x) if x == 0 else x

    engine = AblationEngine(CampaignConfig(max_output_bytes=CAP))
    return {r.task_id: r for r in engine.run(agent, agent, tasks, arms=("candidate",))}


def _error_of(reply: Any) -> tuple[str | None, str | None]:
    results = _run(reply)
    assert (results["t1"].status, results["t1"].passed) == ("completed", True)  # the campaign went on
    r = results["t0"]
    assert (r.status, r.error_stage) == ("error", "agent")
    return r.error_type, r.error_message


def test_a_trace_too_deep_is_the_trials_error_as_the_same_output_is() -> None:
    assert _error_of(lambda x: AgentOutput(output=x, trace=_nested(2000)))[0] == "RecursionError"
    assert _error_of(lambda x: AgentOutput(output=_nested(2000)))[0] == "RecursionError"  # the reference


def test_a_trace_past_the_cap_is_too_large_as_the_same_output_is() -> None:
    error_type, message = _error_of(lambda x: AgentOutput(output=x, trace=["x" * (CAP + 1)]))
    assert error_type == "OutputTooLarge" and message is not None and "trace" in message
    assert _error_of(lambda x: AgentOutput(output=["x" * (CAP + 1)]))[0] == "OutputTooLarge"


def test_usage_names_past_the_cap_are_too_large() -> None:
    tools = {f"{'t' * 100}{i}": 1 for i in range(2000)}
    usage = TrialUsage(input_tokens=1, output_tokens=1, tool_calls=tools)
    assert _error_of(lambda x: AgentOutput(output=x, usage=usage))[0] == "OutputTooLarge"


def test_a_trace_within_the_cap_is_kept() -> None:
    trace = [{"kind": "request", "parts": [{"kind": "text", "content": "hi"}]}]
    r = _run(lambda x: AgentOutput(output=x, trace=trace))["t0"]
    assert (r.status, r.passed, r.trace) == ("completed", True, trace)
