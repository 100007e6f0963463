"""A retried trial's usage: from its spans, every attempt's model calls (a failed attempt's calls
were billed too); reported by the agent, its successful attempt's alone, as it says.

Each attempt of the agents below makes one model call stating ``TOKENS``; the first attempt of
every task then fails with a transient error and the second answers. The cost is checked
against genai-prices' own price of the calls counted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from helpers.otel_provider import chat_span, sdk_provider_for_one_test

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("genai_prices")

from opentelemetry import trace

from ablation import (
    AblationEngine,
    AblationTask,
    AgentOutput,
    CampaignConfig,
    RetryPolicy,
    TrialUsage,
)

TRACER = trace.get_tracer("tests.retries")
MODEL = "gpt-4o"
TOKENS = (300, 40)
_seen: set[tuple[str, str]] = set()
_lock = threading.Lock()


@pytest.fixture(autouse=True)
def sdk_provider() -> Iterator[None]:
    """The global SDK provider an instrumented application sets (a library call never sets it)."""
    _seen.clear()
    yield from sdk_provider_for_one_test()


def _attempt(arm: str, question: str) -> None:
    """One model call; the first attempt of each task and arm then drops the connection."""
    with chat_span(TRACER, MODEL, TOKENS):
        pass
    with _lock:
        first = (arm, question) not in _seen
        _seen.add((arm, question))
    if first:
        raise ConnectionError("connection reset after the reply")


async def text_agent(question: str) -> str:
    _attempt("text", question)
    return question


async def reporting_agent(question: str) -> AgentOutput:
    _attempt("reporting", question)
    usage = TrialUsage(input_tokens=TOKENS[0], output_tokens=TOKENS[1], model_requests=1, model=MODEL)
    return AgentOutput(output=question, usage=usage)


def _price(calls: int) -> float:
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=calls * TOKENS[0], output_tokens=calls * TOKENS[1])
    return float(calc_price(usage, model_ref=MODEL).total_price)


def test_span_usage_counts_every_attempt_and_a_reported_one_its_own() -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=f"q{i}", expected_output=f"q{i}") for i in range(3)]
    retry = RetryPolicy(max_attempts=2, initial_wait_s=0, max_wait_s=0, jitter_s=0)
    results = AblationEngine(CampaignConfig(concurrency=8, retry=retry)).run(text_agent, reporting_agent, tasks)
    assert len(results) == 6
    for r in results:
        assert r.passed and r.attempts == 2, (r.error_message, r.attempts)
        calls = 2 if r.arm == "baseline" else 1  # the spans' count: both attempts; the agent's: its own
        assert r.usage == TrialUsage(
            input_tokens=calls * TOKENS[0], output_tokens=calls * TOKENS[1], model_requests=calls, model=MODEL
        ), r.arm
        assert r.cost == pytest.approx(_price(calls), rel=1e-12)
        assert r.spans is not None and r.spans.summary().model_calls == 2  # kept either way
