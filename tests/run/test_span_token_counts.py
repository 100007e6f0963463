"""Token counts a trial's spans give that no count can be: unknown, never the campaign's end.

A model-call span whose ``gen_ai.usage.input_tokens`` was ``inf`` or past 2**52 (an
instrumentation's attribute; OpenTelemetry takes any float or int) raised ``OverflowError`` or a
``TrialUsage`` validation error out of ``run_ablation_campaign``: the whole campaign ended on
one span. ``-5``, ``NaN`` and ``"100"`` were taken as 0 tokens and ``2.5`` as 2, and priced so:
a cost made of a count the span did not state. Each is now a call whose tokens are unknown, so
the trial keeps its verdict and its model request, with no tokens and no cost (the reference:
what a span that states no usage gives, ``test_span_usage_per_call.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry import trace

from ablation import AblationEngine, AblationTask
from ablation.spans import TrialSpans

TRACER = trace.get_tracer("tests.span_token_counts")
UNUSABLE = [float("inf"), 1e300, 2**60, -5, 2.5, float("nan"), "100", True]


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def _agent(input_tokens: Any) -> Any:
    def agent(task: str) -> str:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                      "gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": 10}  # fmt: skip
        with TRACER.start_as_current_span("chat gpt-4o-mini", attributes=attributes):
            pass
        return task

    return agent


@pytest.mark.parametrize("count", UNUSABLE, ids=repr)
def test_an_unusable_span_count_leaves_the_tokens_and_cost_unknown(count: Any) -> None:
    tasks = [AblationTask(task_id="t0", input_data="t0", expected_output="t0")]
    [r] = AblationEngine().run(_agent(count), _agent(count), tasks, arms=("candidate",))
    assert (r.status, r.passed) == ("completed", True)
    assert r.usage is not None and r.usage.model_requests == 1 and r.usage.model == "gpt-4o-mini"
    assert (r.usage.input_tokens, r.usage.output_tokens, r.tokens, r.cost) == (None, None, None, None)
    assert r.spans is not None and r.spans.summary().input_tokens is None  # the drill-down's too


def test_sums_past_the_count_limit_are_unknown() -> None:
    half = 2**51
    records = [
        {"name": f"chat {i}", "id": f"{i:016x}", "parent": None, "start_s": float(i), "status": "ok",
         "attributes": {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": half,
                        "gen_ai.usage.output_tokens": 1}}
        for i in range(2)
    ]  # fmt: skip
    summary = TrialSpans.of(records).summary()
    assert (summary.model_calls, summary.input_tokens, summary.output_tokens) == (2, None, 2)
