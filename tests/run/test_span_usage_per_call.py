"""Usage from a trial's OpenTelemetry spans: unknown unless stated, priced call by call; error
text cut.

The agents emit spans through the OpenTelemetry API (an SDK provider, no network), as
instrumented clients do with the GenAI semantic conventions.

- A model-call span with no ``gen_ai.usage.*`` attribute (a server that stated no usage) gave 0
  tokens and a 0.0 "price-db" cost; spans of tools alone gave "0 tokens, 0 model requests".
  README: "A reply that reports no usage ... has none: its tokens and cost are unknown, never
  zero." A trial whose calls state their tokens only in part has no token total either; its
  model requests (the model-call spans the agent emitted) are still known. Tools alone: no usage.
- Two model calls on two models were priced wholly at the last one. Reference:
  ``genai_prices.calc_price`` of each call's own tokens at its own model, summed.
- A span's error text and name were not cut as its attribute values are (``MAX_VALUE_CHARS``):
  a 2e6-character exception message made the span exceed ``MAX_BYTES`` and it was dropped
  whole. Reference: the collector's own rule for an attribute value, the first
  ``MAX_VALUE_CHARS`` characters and ``...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from helpers.otel_provider import chat_span, sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")

from genai_prices import Usage, calc_price
from opentelemetry import trace

from ablation import AblationEngine, AblationTask, TaskResult
from ablation.run.spans import MAX_VALUE_CHARS

TRACER = trace.get_tracer("tests.span_usage")
CALLS = (("gpt-4o", 1_000_000, 3), ("gpt-4o-mini", 10, 2))


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def _chat(model: str, tokens: tuple[int, int] | None) -> Any:
    return chat_span(TRACER, model, tokens)


def stated(task: str) -> str:
    with _chat("gpt-4o-mini", (100, 5)):
        pass
    return task


def unstated(task: str) -> str:
    with _chat("gpt-4o-mini", None):
        pass
    return task


def tools_only(task: str) -> str:
    with TRACER.start_as_current_span("execute_tool lookup", attributes={"gen_ai.tool.name": "lookup"}):
        pass
    return task


def partly_stated(task: str) -> str:
    with _chat("gpt-4o-mini", (100, 5)):
        pass
    with _chat("gpt-4o-mini", None):
        pass
    return task


def two_models(task: str) -> str:
    for model, tokens_in, tokens_out in CALLS:
        with _chat(model, (tokens_in, tokens_out)):
            pass
    return task


def _run(agent: Any) -> TaskResult:
    tasks = [AblationTask(task_id="t0", input_data="t0", expected_output="t0")]
    [result] = AblationEngine().run(agent, agent, tasks, arms=("baseline",))
    assert result.status == "completed" and result.spans is not None
    return result


@pytest.mark.parametrize(("agent", "requests"), [(unstated, 1), (tools_only, 0), (partly_stated, 2)])
def test_spans_that_state_no_tokens_give_no_tokens_and_no_cost(agent: Any, requests: int) -> None:
    r = _run(agent)
    assert (r.tokens, r.cost, r.cost_source) == (None, None, None)
    if not requests:
        assert r.usage is None  # no model call: no usage at all
    else:
        assert r.usage is not None and r.usage.model_requests == requests
        assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.model) == (None, None, "gpt-4o-mini")
    assert r.spans is not None and r.spans.count >= 1  # the spans themselves are kept


def test_stated_tokens_are_the_usage_and_its_price() -> None:
    r = _run(stated)
    assert r.usage is not None and (r.usage.input_tokens, r.usage.output_tokens, r.tokens) == (100, 5, 105)
    price = calc_price(Usage(input_tokens=100, output_tokens=5), model_ref="gpt-4o-mini").total_price
    assert (r.cost, r.cost_source) == (float(price), "price-db")


def test_two_models_are_priced_call_by_call() -> None:
    r = _run(two_models)
    reference = sum(
        Decimal(calc_price(Usage(input_tokens=i, output_tokens=o), model_ref=m).total_price) for m, i, o in CALLS
    )
    assert r.usage is not None and r.usage.input_tokens == 1_000_010 and r.usage.model_requests == 2
    assert (r.cost, r.cost_currency, r.cost_source) == (float(reference), "USD", "price-db")


def raises_a_huge_error(task: str) -> str:
    try:
        with TRACER.start_as_current_span("n" * 10_000):
            raise ValueError("m" * 2_000_000)
    except ValueError:
        pass
    return task


def test_a_huge_error_and_name_are_cut_and_the_span_is_kept() -> None:
    r = _run(raises_a_huge_error)
    assert r.spans is not None and (r.spans.count, r.spans.dropped) == (1, 0)
    [record] = r.spans.records()
    cut = f"ValueError: {'m' * 2_000_000}"[:MAX_VALUE_CHARS] + "..."
    assert (record["status"], record["error"], record["name"]) == ("error", cut, "n" * MAX_VALUE_CHARS + "...")
