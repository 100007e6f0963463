"""A trial's usage from its spans counts the responses pydantic-ai's ``FallbackModel`` rejected.

pydantic-ai records a failed attempt at a model request as a ``model request attempt`` span
inside the request's ``chat`` span; a response its ``fallback_on`` handler rejected was billed,
and the attempt span states its usage. Before, a model-call span inside another counted as the
same call seen twice, so the rejected response's tokens were dropped: a trial whose agent
returned only its text had 1000 input tokens and a cost of 0.000156 USD where pydantic-ai's own
``RunUsage`` says 101000 tokens and 0.255156 USD. An attempt that raised states no usage (nothing
was billed) and still counts for nothing. An attempt is a call, not a request: the trial's model requests
are the run's ``RunUsage.requests`` (the spans once counted the rejected response as a second
request). Reference: the run's ``RunUsage`` (tokens, requests and its own ``cost``), taken from
the same runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk")

from helpers.otel_provider import sdk_provider_for_one_test
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask, CampaignConfig


@pytest.fixture
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def _raises(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(429, "gpt-4.1", "rate limited")


def _empty_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("")], usage=RequestUsage(input_tokens=100_000, output_tokens=500))


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok")], usage=RequestUsage(input_tokens=1000, output_tokens=10))


def _empty(response: ModelResponse) -> bool:
    return not any(getattr(p, "content", "") for p in response.parts)


def _instrumented(model: Any) -> Agent[None, str]:
    try:  # the argument of the installed version: ``instrument=True``, or its capability
        return Agent(model, instrument=True)  # type: ignore[call-arg]
    except TypeError:
        from pydantic_ai.capabilities import Instrumentation

        return Agent(model, capabilities=[Instrumentation()])


def test_a_rejected_response_in_the_spans_is_counted_and_priced(sdk_provider: None) -> None:
    agent = _instrumented(FallbackModel(
        FunctionModel(_raises, model_name="gpt-4.1"), FunctionModel(_empty_answer, model_name="gpt-4o"),
        FunctionModel(_answer, model_name="gpt-4o-mini"), fallback_on=[ModelHTTPError, _empty],
    ))  # fmt: skip
    runs: list[Any] = []

    async def text_only(prompt: str) -> str:
        result = await agent.run(prompt)
        runs.append(result)
        return str(result.output)

    [trial] = AblationEngine(CampaignConfig(concurrency=1)).run(
        text_only, text_only, [AblationTask(task_id="t", input_data="q", expected_output="ok")], arms=("baseline",)
    )  # fmt: skip
    [run] = runs
    usage = run.usage
    assert (usage.input_tokens, usage.output_tokens) == (101_000, 510) and usage.cost
    assert trial.spans is not None and trial.usage is not None
    steps = [s["name"] for s in trial.spans.steps()]
    assert "model request attempt gpt-4o" in steps and "model request attempt gpt-4.1" in steps
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (usage.input_tokens, usage.output_tokens)
    # the rejected response is a billed call inside the one request gpt-4o-mini answered
    assert trial.usage.model_requests == usage.requests == 1
    assert (trial.cost, trial.cost_source) == (float(usage.cost), "price-db")
    assert set(str(trial.usage.model).split("+")) == {"gpt-4o", "gpt-4o-mini"}  # the raised attempt billed nothing
