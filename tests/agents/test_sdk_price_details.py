"""A model call costs what the SDK's own accounting makes of it, beyond its four token counts.

Before, every call was priced from its input, output, cache-read and cache-write tokens and its
model id alone, so:

- an Anthropic reply's one-hour cache writes were priced at the five-minute rate and its web
  searches not at all (the raw ``Message`` and a pydantic-ai run alike: 0.02235 USD where
  genai-prices and pydantic-ai say 0.05685);
- an OpenAI reply served in the ``flex`` or ``priority`` tier was priced at the standard rate
  (half, or about 0.57 times, what pydantic-ai prices it);
- a pydantic-ai response served by Cerebras was priced at the model's price under the provider the
  database guesses from the model id (OpenAI's ``gpt-oss-120b``: 0.000129 USD where pydantic-ai
  says 0.000725).

References are the libraries' own: pydantic-ai's ``ModelResponse.cost()`` of each response of the
run, and genai-prices' ``extract_usage`` of the raw reply priced by its ``calc_price``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

import genai_prices
from anthropic.types import Message
from helpers.json_server import json_server
from openai import AsyncOpenAI, OpenAI
from openai.types.responses import Response
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.cerebras import CerebrasProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask
from ablation.agents.pricing import priced
from ablation.agents.sdk import sdk_output
from ablation.config import ModelPrice
from ablation.outputs import AgentOutput

ANTHROPIC_REPLY: dict[str, Any] = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 1000, "output_tokens": 500, "cache_read_input_tokens": 2000,
              "cache_creation_input_tokens": 3000,
              "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
              "server_tool_use": {"web_search_requests": 3, "web_fetch_requests": 0}},
}  # fmt: skip


def _chat_reply(model: str, tier: str | None) -> dict[str, Any]:
    return {
        "id": "c1", "object": "chat.completion", "created": 1_700_000_000, "model": model, "service_tier": tier,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500,
                  "prompt_tokens_details": {"cached_tokens": 400}},
    }  # fmt: skip


def _cost(out: Any) -> Any:
    return priced(sdk_output(out) if not isinstance(out, AgentOutput) else out, {})


def _own_cost(result: Any) -> Decimal:
    """pydantic-ai's own price of a run: each of its responses' ``cost()``, summed."""
    return sum(
        (Decimal(m.cost().total_price) for m in result.new_messages() if isinstance(m, ModelResponse)), Decimal(0)
    )


def test_a_raw_anthropic_message_prices_one_hour_writes_and_web_searches() -> None:
    reference = genai_prices.extract_usage(ANTHROPIC_REPLY, provider_id="anthropic").calc_price().total_price
    assert _cost(Message.model_validate(ANTHROPIC_REPLY)) == {
        "cost": float(reference), "cost_currency": "USD", "cost_source": "price-db"
    }  # fmt: skip


def test_a_pydantic_ai_response_prices_one_hour_writes_and_web_searches() -> None:
    """The response's usage as pydantic-ai extracts it from the same Anthropic reply."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage.extract(ANTHROPIC_REPLY, provider="anthropic", provider_url="https://api.anthropic.com",
                                     provider_fallback="anthropic")  # fmt: skip
        return ModelResponse(parts=[TextPart("ok")], usage=usage, provider_name="anthropic")

    result = Agent(FunctionModel(model, model_name="claude-sonnet-4-5-20250929")).run_sync("q")
    reference = _own_cost(result)
    assert reference == genai_prices.extract_usage(ANTHROPIC_REPLY, provider_id="anthropic").calc_price().total_price
    assert _cost(result)["cost"] == float(reference)
    # an override still prices the four token counts (a one-hour write at its cache-write rate)
    price = ModelPrice(input_per_mtok=3, output_per_mtok=15, cached_input_per_mtok=0.3, cache_write_per_mtok=3.75)
    fields = priced(sdk_output(result), {"claude-sonnet-4-5-20250929": price})
    assert fields["cost"] == float((1000 * 3 + 2000 * Decimal("0.3") + 3000 * Decimal("3.75") + 500 * 15) / 10**6)


@pytest.fixture(scope="module")
def openai_server() -> Iterator[tuple[str, dict[str, Any]]]:
    """An OpenAI-compatible server answering with ``reply["body"]`` (set by each test; one server
    for the module, as its shutdown takes half a second)."""
    reply: dict[str, Any] = {}
    with json_server(lambda body: reply["body"]) as url:
        yield url + "/v1", reply


@pytest.mark.parametrize("tier", ["flex", "priority", None])
def test_an_openai_reply_is_priced_in_its_service_tier(openai_server: Any, tier: str | None) -> None:
    """The same reply through pydantic-ai (its own cost is the reference) and the raw client."""
    url, reply = openai_server
    reply["body"] = _chat_reply("o3-2025-04-16", tier)
    client = AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    result = Agent(OpenAIChatModel("o3", provider=OpenAIProvider(openai_client=client))).run_sync("q")
    reference = float(_own_cost(result))
    raw = OpenAI(base_url=url, api_key="x", max_retries=0).chat.completions.create(
        model="o3", messages=[{"role": "user", "content": "q"}]
    )
    assert (_cost(result)["cost"], _cost(raw)["cost"]) == (reference, reference)
    if tier in ("flex", "priority"):  # the tiers are priced apart from the standard rate
        standard = genai_prices.calc_price(genai_prices.Usage(input_tokens=1000, cache_read_tokens=400,
                                                              output_tokens=500), "o3-2025-04-16")  # fmt: skip
        assert reference != float(standard.total_price)


def test_a_responses_reply_in_the_flex_tier_is_priced_in_it() -> None:
    body = {
        "id": "r1", "object": "response", "created_at": 1, "model": "o3-2025-04-16", "service_tier": "flex",
        "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 1000, "output_tokens": 500, "total_tokens": 1500,
                  "input_tokens_details": {"cached_tokens": 400, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 100}},
    }  # fmt: skip
    extracted = genai_prices.extract_usage(body, provider_id="openai", api_flavor="responses")
    reference = extracted.calc_price(price_context={"service_tier": "flex"}).total_price
    assert reference != extracted.calc_price().total_price
    assert _cost(Response.model_validate(body))["cost"] == float(reference)


def test_a_pydantic_ai_run_is_priced_at_the_provider_that_served_it(openai_server: Any) -> None:
    url, reply = openai_server
    reply["body"] = _chat_reply("gpt-oss-120b", None)
    client = AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
    agent = Agent(OpenAIChatModel("gpt-oss-120b", provider=CerebrasProvider(openai_client=client)))
    result = agent.run_sync("q")
    reference = _own_cost(result)
    assert [m.provider_name for m in result.new_messages() if isinstance(m, ModelResponse)] == ["cerebras"]
    assert _cost(result) == {"cost": float(reference), "cost_currency": "USD", "cost_source": "price-db"}
    # through a campaign too
    [trial] = AblationEngine().run(agent, agent, [AblationTask(task_id="t", input_data="q")], arms=("baseline",))
    assert (trial.cost, trial.cost_source) == (float(reference), "price-db")
