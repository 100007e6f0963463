"""Spans of instrumented SDKs, per trial: the OpenAI client under
``opentelemetry-instrumentation-openai-v2`` against the local OpenAI-compatible server (no
network), and a pydantic-ai agent with its OpenTelemetry instrumentation under ``FunctionModel``.

The token counts the spans give are checked against the ChatCompletion's own usage and the
server's records; the tool order against what the stand-in model asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.instrumentation.openai_v2")
pytest.importorskip("pydantic_ai")

from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ablation import AblationEngine, AblationTask, CampaignConfig
from tests.agents import test_sdk_results as local_server

MODEL, TASKS, _agent = local_server.MODEL, local_server.TASKS, local_server._agent


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    yield from sdk_provider_for_one_test()


server = local_server.server  # the local OpenAI-compatible server (a fixture)


@pytest.fixture
def instrumented_openai() -> Iterator[None]:
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument()
    try:
        yield
    finally:
        instrumentor.uninstrument()


def _text_only(base_url: str, system: str) -> Any:
    """The same agent returning only the answer's text: its usage is known only from spans."""
    call = _agent(base_url, system)

    def text_agent(question: str) -> Any:
        return call(question).choices[0].message.content

    return text_agent


def test_openai_spans_give_the_chat_completions_token_counts(server: Any, instrumented_openai: None) -> None:
    from genai_prices import Usage, calc_price

    url, records = server
    raw = AblationEngine(CampaignConfig(concurrency=4)).run(
        _agent(url, "you answer"), _text_only(url, "you answer"), TASKS
    )
    by_arm = {arm: sorted((r for r in raw if r.arm == arm), key=lambda r: r.task_id) for arm in ("baseline", "candidate")}
    for reported, from_spans in zip(by_arm["baseline"], by_arm["candidate"], strict=True):
        assert reported.usage is not None and reported.spans is not None  # the ChatCompletion's usage
        summary = reported.spans.summary()
        assert (summary.input_tokens, summary.output_tokens) == (reported.usage.input_tokens, reported.usage.output_tokens)
        assert summary.model_calls == 1 and summary.models == [MODEL]
        assert from_spans.usage is not None  # the text agent's usage comes from its spans alone
        assert (from_spans.usage.input_tokens, from_spans.usage.output_tokens, from_spans.usage.model_requests) == (
            reported.usage.input_tokens, reported.usage.output_tokens, 1,
        )  # fmt: skip
        assert from_spans.usage.model == MODEL
        expected = calc_price(
            Usage(input_tokens=from_spans.usage.input_tokens, output_tokens=from_spans.usage.output_tokens,
                  cache_read_tokens=from_spans.usage.cached_tokens), model_ref=MODEL,
        ).total_price  # fmt: skip
        assert from_spans.cost == pytest.approx(float(expected), rel=1e-12)
        assert (from_spans.cost_currency, from_spans.cost_source) == ("USD", "price-db")
    # and both equal what the server counted: the same prompt for both arms of a task
    assert sorted(r["prompt"] for r in records) == sorted(
        r.usage.input_tokens for r in raw if r.usage is not None
    )


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Look the order up, read the refund policy when it is cancelled, then answer."""
    returned = {p.tool_name: str(p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    if "lookup_order" not in returned:
        return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "7"})])
    if returned["lookup_order"] == "cancelled" and "refund_policy" not in returned:
        return ModelResponse(parts=[ToolCallPart("refund_policy", {})])
    return ModelResponse(parts=[TextPart(returned["lookup_order"])])


def _instrumented_agent(status: str) -> Any:
    """A pydantic-ai agent with OpenTelemetry instrumentation (``instrument=True`` where the
    installed version has that argument, else its ``Instrumentation`` capability)."""
    model = FunctionModel(_model, model_name="stand-in")
    try:
        agent: Any = Agent(model, instrument=True)  # type: ignore[call-arg]
    except TypeError:
        from pydantic_ai.capabilities import Instrumentation

        agent = Agent(model, capabilities=[Instrumentation()])

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        return status

    @agent.tool_plain
    def refund_policy() -> str:
        return "refund in 5 days"

    return agent


def test_pydantic_ai_spans_give_each_trial_its_model_calls_and_tool_order() -> None:
    tasks = [AblationTask(task_id=f"o{i}", input_data=f"order {i}", expected_output="x") for i in range(6)]
    results = AblationEngine(CampaignConfig(concurrency=6)).run(
        _instrumented_agent("shipped"), _instrumented_agent("cancelled"), tasks
    )
    assert len(results) == 12
    for r in results:
        assert r.spans is not None and r.usage is not None
        summary = r.spans.summary()
        tools = ["lookup_order"] if r.arm == "baseline" else ["lookup_order", "refund_policy"]
        assert summary.tools == tools
        assert summary.model_calls == len(tools) + 1 == r.usage.model_requests
        assert summary.models == ["stand-in"]
        # the run's own usage (pydantic-ai's) and the spans' agree: one count, never two
        assert (summary.input_tokens, summary.output_tokens) == (r.usage.input_tokens, r.usage.output_tokens)
        assert r.output == ("shipped" if r.arm == "baseline" else "cancelled")
