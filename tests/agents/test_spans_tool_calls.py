"""A pydantic-ai run's tool calls count alike whether its usage comes from its result or from its
spans: the calls its ``RunUsage.tool_calls`` counts, neither a call that raised ``ModelRetry``
(an ``execute_tool`` span with an error status) nor the call of an output function
(``ToolOutput``, an ``execute_tool`` span pydantic-ai marks as running it) among them.

The same instrumented agent is run by an agent returning the run (its usage read from the
result) and by one returning the text (its usage read from the spans); the reference is
pydantic-ai's own ``RunUsage`` of a direct run of the same agent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, ModelRetry, ToolOutput
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask, CampaignConfig


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    yield from sdk_provider_for_one_test()


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for ``add`` until it has answered twice (the first ask of each pair is retried)."""
    asked = len(messages)
    if asked <= 3:
        usage = RequestUsage(input_tokens=100 * asked, output_tokens=5)
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})], usage=usage, model_name="gpt-4o")
    return ModelResponse(parts=[TextPart("3")], usage=RequestUsage(input_tokens=900, output_tokens=9), model_name="gpt-4o")


def _instrumented(model: Any, **options: Any) -> Any:
    """An agent with pydantic-ai's instrumentation (``instrument=True``, or its
    ``Instrumentation`` capability where that argument is gone)."""
    try:
        return Agent(model, instrument=True, **options)
    except TypeError:
        from pydantic_ai.capabilities import Instrumentation

        return Agent(model, capabilities=[Instrumentation()], **options)


def _agent() -> Any:
    """The agent, with a tool that asks for a retry on every other call."""
    agent = _instrumented(FunctionModel(_model, model_name="gpt-4o"))
    calls = {"n": 0}

    @agent.tool_plain(retries=3)
    def add(a: int, b: int) -> int:
        calls["n"] += 1
        if calls["n"] % 2:
            raise ModelRetry("try again")
        return a + b

    return agent


def _both_ways(make: Any, expected: str) -> dict[str, Any]:
    """The trials of an agent returning its run (baseline) and its text (candidate)."""

    async def returns_run(question: str) -> Any:
        return await make().run(question)

    async def returns_text(question: str) -> str:
        return str((await make().run(question)).output)

    tasks = [AblationTask(task_id="t0", input_data="add", expected_output=expected)]
    results = AblationEngine(CampaignConfig(concurrency=1)).run(returns_run, returns_text, tasks)
    return {r.arm: r for r in results}


def test_span_tool_calls_are_the_run_usages() -> None:
    reference = _agent().run_sync("add").usage
    assert reference.tool_calls == 1  # the retried call is not one of its calls
    by_arm = _both_ways(_agent, "3")
    from_result, from_spans = by_arm["baseline"].usage, by_arm["candidate"].usage
    assert from_result is not None and from_spans is not None
    assert from_spans.tool_calls == from_result.tool_calls == {"add": reference.tool_calls}
    assert from_spans.model_requests == from_result.model_requests == reference.requests
    assert from_spans.input_tokens == from_result.input_tokens == reference.input_tokens
    spans = by_arm["candidate"].spans
    assert spans is not None and spans.summary().tools == ["add", "add"]  # both calls still shown


def _final(value: int) -> str:
    return str(value)


def _with_output_function() -> Any:
    agent = _instrumented(TestModel(model_name="gpt-4o"), output_type=[ToolOutput(_final)])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    return agent


def test_an_output_functions_call_is_no_tool_call() -> None:
    reference = _with_output_function().run_sync("add").usage
    by_arm = _both_ways(_with_output_function, "0")
    from_result, from_spans = by_arm["baseline"].usage, by_arm["candidate"].usage
    assert from_result is not None and from_spans is not None
    assert from_spans.tool_calls == from_result.tool_calls == {"add": reference.tool_calls}
    spans = by_arm["candidate"].spans
    assert spans is not None and spans.summary().tools == ["add", "final_result"]
