"""A trial's spans, and the usage and cost they give, are its agent's: a setup hook or a verifier
that calls a model (an LLM judge checking the answer) adds no model call, token or cost to the
agent's.

The agent states its one call's tokens in its span; the judge's calls state other counts, so a
usage that took them in differs from the agent's own call. The cost is checked against
genai-prices' own price of the agent's call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.otel_provider import chat_span, sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("genai_prices")

from opentelemetry import trace

from ablation import AblationEngine, AblationTask, CampaignConfig, TrialUsage

TRACER = trace.get_tracer("tests.judge")
MODEL = "gpt-4o"
AGENT_TOKENS = (120, 30)
JUDGE_TOKENS = (5000, 400)


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    yield from sdk_provider_for_one_test()


async def async_agent(question: str) -> str:
    with chat_span(TRACER, MODEL, AGENT_TOKENS):
        pass
    return question


def sync_agent(question: str) -> str:
    with chat_span(TRACER, MODEL, AGENT_TOKENS):
        pass
    return question


def judged(output: Any, task: AblationTask) -> bool:
    """A sync verifier asking a model whether the answer is right (run in a thread)."""
    with chat_span(TRACER, MODEL, JUDGE_TOKENS):
        pass
    return bool(output == task.expected_output)


async def judged_async(output: Any, task: AblationTask) -> bool:
    return judged(output, task)


def judged_inline(output: Any, task: AblationTask) -> bool:
    return judged(output, task)


judged_inline.inline = True  # type: ignore[attr-defined]


def model_setup(task: AblationTask) -> None:
    """A setup hook that asks a model to prepare the task."""
    with chat_span(TRACER, MODEL, JUDGE_TOKENS):
        pass


def _tasks() -> list[AblationTask]:
    return [
        AblationTask(task_id=f"t{i}", input_data=f"q{i}", expected_output=f"q{i}", verifier=verifier, setup=model_setup)
        for i, verifier in enumerate((judged, judged_async, judged_inline))
    ]


def test_a_model_judged_verifier_and_a_setup_hook_are_not_the_agents_usage() -> None:
    from genai_prices import Usage, calc_price

    agent_cost = float(
        calc_price(Usage(input_tokens=AGENT_TOKENS[0], output_tokens=AGENT_TOKENS[1]), model_ref=MODEL).total_price
    )
    results = AblationEngine(CampaignConfig(concurrency=8)).run(async_agent, sync_agent, _tasks())
    assert len(results) == 6
    for r in results:
        assert r.passed, r.error_message
        assert r.usage == TrialUsage(
            input_tokens=AGENT_TOKENS[0], output_tokens=AGENT_TOKENS[1], model_requests=1, model=MODEL
        ), (r.task_id, r.arm)
        assert r.cost == pytest.approx(agent_cost, rel=1e-12) and r.cost_source == "price-db"
        assert r.spans is not None
        assert [s["attributes"]["gen_ai.usage.input_tokens"] for s in r.spans.records()] == [AGENT_TOKENS[0]]
