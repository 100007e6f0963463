"""A pydantic-ai run's usage: unknown when its provider stated none, and priced call by call.

- A pydantic-ai agent on an OpenAI-compatible server that leaves ``usage`` out of its replies
  (an httpx ``MockTransport``, no network): before, its ``RunUsage`` of zeros became 0 tokens and
  a 0.0 "price-db" cost. README: "A reply that reports no usage ... has none: its tokens and cost
  are unknown, never zero." The same agent on a server that states usage is the reference for
  the known case: the tokens the server sent, priced by ``genai_prices.calc_price``.
- A run whose responses came from two models (pydantic-ai's ``FallbackModel`` falling back after
  a rate limit) was priced wholly at the last model. Reference: ``genai_prices.calc_price`` of
  each ``ModelResponse.usage`` at its ``model_name``, summed (the library's own per-request
  prices; pydantic-ai itself prices each request).
- A delegated run (``child.run(q, usage=ctx.usage)``, as pydantic-ai's docs show) adds the
  child's tokens on another model to the parent's ``RunUsage`` but not to its messages: the
  tokens are the run's own total, and the cost is unknown rather than a partial sum.
- Pricing itemized calls: a call priced by a ``[tool.ablation.prices]`` override and one by the
  database sum exactly (``Fraction`` of each part); two currencies, or a call no price knows,
  leave the trial without a cost.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

import httpx
from genai_prices import Usage, calc_price
from openai import AsyncOpenAI
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask, TrialUsage
from ablation.agents.pricing import override_price, priced
from ablation.agents.sdk import sdk_output
from ablation.config import ModelPrice
from ablation.outputs import AgentOutput

STATED = {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}


def _server_agent(usage: dict[str, int] | None) -> Agent[None, str]:
    """A pydantic-ai agent on a mocked OpenAI-compatible endpoint, ``usage`` in its replies or not."""

    async def handler(request: httpx.Request) -> httpx.Response:
        body: dict[str, Any] = {
            "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
        }  # fmt: skip
        if usage is not None:
            body["usage"] = usage
        return httpx.Response(200, json=body)

    client = AsyncOpenAI(api_key="x", base_url="http://mock/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))  # fmt: skip
    return Agent(OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client)))


def _tasks(n: int = 2) -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i}", input_data=f"q{i}", expected_output="ok") for i in range(n)]


def _db(usage: TrialUsage) -> Decimal:
    """genai-prices' own price of one call."""
    return Decimal(calc_price(
        Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
              cache_read_tokens=usage.cached_tokens, cache_write_tokens=usage.cache_write_tokens),
        model_ref=str(usage.model),
    ).total_price)  # fmt: skip


def test_a_reply_without_usage_has_unknown_tokens_and_no_cost() -> None:
    results = AblationEngine().run(_server_agent(STATED), _server_agent(None), _tasks())
    for r in results:
        assert r.status == "completed" and r.passed is True, r.error_message
        if r.arm == "candidate":  # the server stated no usage: no tokens known, nothing priced
            assert (r.tokens, r.cost, r.cost_source) == (None, None, None)
            assert r.usage is not None and (r.usage.input_tokens, r.usage.output_tokens) == (None, None)
            assert (r.usage.model_requests, r.usage.model) == (1, "gpt-4o-mini-2024-07-18")  # one request made
        else:  # the reference: what the server stated, at genai-prices' price
            assert r.usage is not None
            assert (r.usage.input_tokens, r.usage.output_tokens) == (1000, 10)
            expected = _db(TrialUsage(input_tokens=1000, output_tokens=10, model="gpt-4o-mini-2024-07-18"))
            assert (r.cost, r.cost_source) == (float(expected), "price-db")


def _rate_limited_first(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
        raise ModelHTTPError(429, "gpt-4o", "rate limited")
    return ModelResponse(parts=[ToolCallPart("lookup", {"q": "x"})],
                         usage=RequestUsage(input_tokens=1_000_000, output_tokens=20))  # fmt: skip


def _fallback(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok")],
                         usage=RequestUsage(input_tokens=1000, output_tokens=10, cache_read_tokens=500))  # fmt: skip


def _two_model_agent() -> Agent[None, str]:
    agent = Agent(FallbackModel(FunctionModel(_rate_limited_first, model_name="gpt-4o"),
                                FunctionModel(_fallback, model_name="gpt-4o-mini")))  # fmt: skip

    @agent.tool_plain
    def lookup(q: str) -> str:
        return q

    return agent


def test_a_run_on_two_models_is_priced_response_by_response() -> None:
    agent = _two_model_agent()
    result = agent.run_sync("q")
    responses = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
    assert [m.model_name for m in responses] == ["gpt-4o", "gpt-4o-mini"]
    reference = sum(
        Decimal(calc_price(m.usage, model_ref=str(m.model_name)).total_price) for m in responses
    )
    out = sdk_output(result)
    assert isinstance(out, AgentOutput) and out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.cached_tokens) == (1_001_000, 30, 500)
    assert priced(out, {}) == {"cost": float(reference), "cost_currency": "USD", "cost_source": "price-db"}
    # through a campaign too
    [r] = AblationEngine().run(agent, agent, _tasks(1), arms=("baseline",))
    assert (r.cost, r.cost_source) == (float(reference), "price-db")


child = Agent(FunctionModel(
    lambda m, i: ModelResponse(parts=[TextPart("42")], usage=RequestUsage(input_tokens=1_000_000)),
    model_name="gpt-4o",
))  # fmt: skip


def _parent_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
        return ModelResponse(parts=[ToolCallPart("ask_expert", {"q": "x"})], usage=RequestUsage(input_tokens=5))
    return ModelResponse(parts=[TextPart("ok")], usage=RequestUsage(input_tokens=5))


parent = Agent(FunctionModel(_parent_model, model_name="gpt-4o-mini"))


@parent.tool
async def ask_expert(ctx: RunContext[None], q: str) -> str:
    return (await child.run(q, usage=ctx.usage)).output


def test_a_delegated_run_keeps_its_total_and_has_no_partial_cost() -> None:
    result = parent.run_sync("q")
    out = sdk_output(result)
    assert isinstance(out, AgentOutput) and out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens) == (result.usage.input_tokens, result.usage.output_tokens)
    assert out.usage.input_tokens == 1_000_010
    assert priced(out, {})["cost"] is None  # the child's gpt-4o call is not among the messages


def test_itemized_calls_sum_exactly_and_any_unpriceable_call_leaves_no_cost() -> None:
    from ablation.outputs import ItemizedUsage  # new with per-call pricing

    mini = TrialUsage(input_tokens=1234, output_tokens=56, cached_tokens=200, model_requests=1, model="gpt-4o-mini")
    big = TrialUsage(input_tokens=10**6, output_tokens=7, model_requests=1, model="gpt-4o")
    total = TrialUsage(input_tokens=mini.input_tokens + big.input_tokens, output_tokens=63, cached_tokens=200,
                       model_requests=2, model="gpt-4o")  # fmt: skip
    both = ItemizedUsage.of(total, [mini, big])
    assert both == total and TrialUsage.model_validate_json(both.model_dump_json()) == total
    assert priced(AgentOutput(usage=both), {})["cost"] == float(_db(mini) + _db(big))

    price = ModelPrice(input_per_mtok=0.3, output_per_mtok=1.1)
    fields = priced(AgentOutput(usage=both), {"gpt-4o-mini": price})
    exact = Fraction(_db(big)) + Fraction(1034 * Fraction("0.3") + 200 * Fraction("0.3") + 56 * Fraction("1.1"), 10**6)
    assert fields == {"cost": float(exact), "cost_currency": "USD", "cost_source": "override"}
    assert override_price(mini, price) == float(exact - Fraction(_db(big)))

    euro = ModelPrice(input_per_mtok=0.3, output_per_mtok=1.1, currency="EUR")
    assert priced(AgentOutput(usage=both), {"gpt-4o-mini": euro})["cost"] is None  # EUR + USD
    unknown = ItemizedUsage.of(total, [mini, big.model_copy(update={"model": "no-such-model-xyz"})])
    assert priced(AgentOutput(usage=unknown), {})["cost"] is None
    assert priced(AgentOutput(usage=ItemizedUsage.of(total, [mini, None])), {})["cost"] is None
