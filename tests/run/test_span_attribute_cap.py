"""A span with more attributes than a record keeps still gives its usage: the attributes a
summary reads (usage, models, operation, tool) are kept first, then the first of the others.

OpenLLMetry-style instrumentations record each prompt message as attributes
(``gen_ai.prompt.N.role``/``content``) before the response's usage; a cut that kept the first
attributes alone dropped the usage, leaving the call's tokens unknown and the trial unpriced.
The reference is the span's own stated counts and genai-prices' price of them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("genai_prices")

from opentelemetry import trace

import ablation.run.spans as collection
from ablation import AblationEngine, AblationTask, TrialUsage

TRACER = trace.get_tracer("tests.attribute_cap")
MESSAGES = 40  # two attributes each: more than a record keeps
TOKENS = (1000, 50)


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    yield from sdk_provider_for_one_test()


async def chatty_agent(question: str) -> str:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    for i in range(MESSAGES):
        attributes |= {f"gen_ai.prompt.{i}.role": "user", f"gen_ai.prompt.{i}.content": f"message {i}"}
    with TRACER.start_as_current_span("openai.chat", attributes=attributes) as span:
        span.set_attribute("gen_ai.response.model", "gpt-4o")
        span.set_attribute("gen_ai.usage.prompt_tokens", TOKENS[0])
        span.set_attribute("gen_ai.usage.completion_tokens", TOKENS[1])
    return question


def test_a_span_past_the_attribute_cap_keeps_its_usage() -> None:
    from genai_prices import Usage, calc_price

    assert 2 + 2 * MESSAGES + 3 > collection.MAX_ATTRIBUTES
    tasks = [AblationTask(task_id="t0", input_data="q", expected_output="q")]
    [r] = AblationEngine().run(chatty_agent, chatty_agent, tasks, arms=("baseline",))
    assert r.usage == TrialUsage(input_tokens=TOKENS[0], output_tokens=TOKENS[1], model_requests=1, model="gpt-4o")
    price = calc_price(Usage(input_tokens=TOKENS[0], output_tokens=TOKENS[1]), model_ref="gpt-4o").total_price
    assert r.cost == pytest.approx(float(price), rel=1e-12)
    assert r.spans is not None
    [record] = r.spans.records()
    kept = list(record["attributes"])
    assert len(kept) == collection.MAX_ATTRIBUTES
    assert kept[:2] == ["gen_ai.operation.name", "gen_ai.request.model"]  # in the span's order
    assert kept[-3:] == ["gen_ai.response.model", "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens"]
