"""A trial priced from its spans is priced at the provider its model-call span names, as an SDK's
result is: ``gen_ai.provider.name`` (else the older ``gen_ai.system``) picks the price where
the price database lists the model under that provider; a name it does not know leaves the
model id alone to pick it. The references are genai-prices' own prices.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("genai_prices")

from opentelemetry import trace

from ablation import AblationEngine, AblationTask

TRACER = trace.get_tracer("tests.provider_price")
MODEL = "gpt-oss-120b"
TOKENS = (100_000, 20_000)


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    yield from sdk_provider_for_one_test()


def _agent(attribute: str, provider: str) -> Any:
    async def agent(question: str) -> str:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL, attribute: provider,
                      "gen_ai.usage.input_tokens": TOKENS[0], "gen_ai.usage.output_tokens": TOKENS[1]}  # fmt: skip
        with TRACER.start_as_current_span(f"chat {MODEL}", attributes=attributes):
            pass
        return question

    return agent


def _price(**provider: str) -> float:
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=TOKENS[0], output_tokens=TOKENS[1])
    return float(calc_price(usage, model_ref=MODEL, **provider).total_price)


@pytest.mark.parametrize(
    ("attribute", "provider", "reference"),
    [
        ("gen_ai.provider.name", "cerebras", {"provider_id": "cerebras"}),
        ("gen_ai.system", "cerebras", {"provider_id": "cerebras"}),  # the older conventions' name
        ("gen_ai.provider.name", "function", {}),  # a test model's: the model id alone
    ],
)
def test_a_span_priced_at_the_provider_it_names(attribute: str, provider: str, reference: dict[str, str]) -> None:
    tasks = [AblationTask(task_id="t0", input_data="q", expected_output="q")]
    [r] = AblationEngine().run(_agent(attribute, provider), _agent(attribute, provider), tasks, arms=("baseline",))
    assert r.cost == pytest.approx(_price(**reference), rel=1e-12) and r.cost_source == "price-db"
