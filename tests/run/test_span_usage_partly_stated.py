"""Usage from a trial's spans when only some model calls state tokens, and when two models ran.

The agents emit spans through the OpenTelemetry API (an SDK provider, no network), as
instrumented clients do with the GenAI semantic conventions; what each trial did (its model
calls, its tool calls, the models and tokens of each call) is known from the agents themselves.

- A trial whose second model-call span states no ``gen_ai.usage.*`` had no usage at all: its
  model requests and tool calls (which its spans record) were lost, and the report's
  ``model_requests`` and ``tool_calls.*`` metrics read it as missing. Reference: the agent's own
  two model calls and one ``lookup`` call; its tokens are unknown (``None``), never the first
  call's alone, and it has no cost. The drill-down's span line says the tokens are unknown.
- A trial calling two models named only the last. Reference: the agent's models in order of
  first use; the cost stays ``genai_prices.calc_price`` of each call at its own model, summed.
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

from ablation import AblationEngine, AblationTask, TaskResult, compare_results
from ablation.render import render

TRACER = trace.get_tracer("tests.span_usage_partly_stated")
CALLS = (("gpt-4o", 1_000_000, 3), ("gpt-4o-mini", 10, 2))


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def _chat(model: str, tokens: tuple[int, int] | None) -> Any:
    return chat_span(TRACER, model, tokens)


def _lookup() -> Any:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
    return TRACER.start_as_current_span("execute_tool lookup", attributes=attributes)


def _loop(task: str, second: tuple[int, int] | None) -> str:
    """Two model calls with a tool call between them; the second states ``second`` as tokens."""
    with _chat("gpt-4o-mini", (100, 5)):
        pass
    with _lookup():
        pass
    with _chat("gpt-4o-mini", second):
        pass
    return task


def stated(task: str) -> str:
    return _loop(task, (120, 7))


def partly_stated(task: str) -> str:
    return _loop(task, None)


def two_models(task: str) -> str:
    for model, tokens_in, tokens_out in CALLS:
        with _chat(model, (tokens_in, tokens_out)):
            pass
    return task


def _tasks(n: int) -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i}", input_data=f"t{i}", expected_output=f"t{i}") for i in range(n)]


def _split(results: list[TaskResult]) -> tuple[list[TaskResult], list[TaskResult]]:
    return [r for r in results if r.arm == "baseline"], [r for r in results if r.arm == "candidate"]


def test_a_trial_with_an_unstated_call_keeps_its_requests_and_tool_calls() -> None:
    base, cand = _split(AblationEngine().run(stated, partly_stated, _tasks(3)))
    for r in cand:
        assert r.status == "completed" and r.spans is not None
        u = r.usage
        assert u is not None and (u.model_requests, u.tool_calls, u.model) == (2, {"lookup": 1}, "gpt-4o-mini")
        assert (u.input_tokens, u.output_tokens, u.cached_tokens, u.cache_write_tokens) == (None,) * 4
        assert (r.tokens, r.cost, r.cost_source) == (None, None, None)
        summary = r.spans.summary()
        assert (summary.model_calls, summary.input_tokens, summary.output_tokens) == (2, None, None)
    for r in base:
        assert r.usage is not None and r.usage.input_tokens == 220 and r.tokens == 232
        assert r.cost is not None
    report = compare_results(base, cand)
    assert report.metrics["model_requests"].n_pairs == 3
    assert report.metrics["tool_calls.lookup"].n_pairs == 3
    assert report.metrics["input_tokens"].n_pairs == 0  # unknown, never 0


def test_the_drill_down_says_the_spans_tokens_are_unknown() -> None:
    base, cand = _split(AblationEngine().run(stated, partly_stated, _tasks(1)))
    report = compare_results(base, [r.model_copy(update={"passed": False}) for r in cand])
    assert report.regressions == ["t0"]
    text = render(report, "terminal", details=True, width=400)
    assert "candidate spans: 2 model calls (gpt-4o-mini), 1 tool calls, tokens unknown" in text
    assert "baseline spans: 2 model calls (gpt-4o-mini), 1 tool calls, 220 in / 12 out tokens" in text


def test_two_models_are_both_named_and_priced_call_by_call() -> None:
    [r] = AblationEngine().run(two_models, two_models, _tasks(1), arms=("baseline",))
    reference = sum(
        Decimal(calc_price(Usage(input_tokens=i, output_tokens=o), model_ref=m).total_price) for m, i, o in CALLS
    )
    assert r.usage is not None and r.usage.model == "+".join(m for m, _, _ in CALLS)
    assert (r.usage.input_tokens, r.usage.model_requests) == (1_000_010, 2)
    assert (r.cost, r.cost_currency, r.cost_source) == (float(reference), "USD", "price-db")


def many_calls(task: str) -> str:
    """More model-call spans than a trial keeps (:data:`ablation.run.spans.MAX_SPANS`)."""
    from ablation.run.spans import MAX_SPANS

    for _ in range(MAX_SPANS + 50):
        with _chat("gpt-4o-mini", (10, 1)):
            pass
    return task


def test_spans_dropped_over_the_cap_give_no_usage_rather_than_an_undercount() -> None:
    """Every call states its tokens, but 50 spans were not kept: the kept ones once gave 2000
    model requests and 20000 input tokens as the trial's usage, and its cost from them."""
    from ablation.run.spans import MAX_SPANS

    [r] = AblationEngine().run(many_calls, many_calls, _tasks(1), arms=("baseline",))
    assert r.spans is not None and r.spans.count == MAX_SPANS and r.spans.dropped == 50
    assert (r.usage, r.tokens, r.cost) == (None, None, None)


def _completion(model: str) -> Any:
    """An OpenAI ``ChatCompletion`` as an OpenAI-compatible server that states no usage sends it."""
    import openai

    return openai.types.chat.ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
    })  # fmt: skip


def reply_without_usage(task: str) -> Any:
    return _completion("gpt-4o-mini")


def reply_without_usage_under_a_span(task: str) -> Any:
    """The agent's own instrumentation states the call's tokens; the reply does not."""
    with _chat("gpt-4o-mini", (100, 5)):
        return _completion("gpt-4o-mini")


def test_a_reply_without_usage_keeps_its_request_and_its_span_s_tokens_win() -> None:
    """The reply once gave no usage at all (its one request lost). Now it has unknown tokens and
    its request; when the trial's span states the call's tokens, the span's usage is the
    trial's, priced (reference: genai-prices' price of those tokens)."""
    pytest.importorskip("openai")
    [bare] = AblationEngine().run(reply_without_usage, reply_without_usage, _tasks(1), arms=("baseline",))
    assert bare.usage is not None and (bare.usage.model_requests, bare.usage.model) == (1, "gpt-4o-mini")
    assert (bare.usage.input_tokens, bare.tokens, bare.cost) == (None, None, None)
    [spanned] = AblationEngine().run(
        reply_without_usage_under_a_span, reply_without_usage_under_a_span, _tasks(1), arms=("baseline",)
    )
    assert spanned.usage is not None and (spanned.usage.input_tokens, spanned.usage.output_tokens) == (100, 5)
    reference = calc_price(Usage(input_tokens=100, output_tokens=5), model_ref="gpt-4o-mini").total_price
    assert (spanned.cost, spanned.cost_source) == (float(Decimal(reference)), "price-db")
