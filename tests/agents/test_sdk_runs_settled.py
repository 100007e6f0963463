"""pydantic-ai runs whose usage the trial lost: a ``FallbackModel``'s rejected response, and
streamed or iterated runs.

- A ``FallbackModel`` whose ``fallback_on`` response handler rejected the first model's answer:
  pydantic-ai bills that response (its tokens and cost are in the run's ``RunUsage``, the attempt
  in the next response's ``failed_attempts``), so the responses alone fell short of the run's
  total and the trial had no cost, its model naming only the model that answered. Reference:
  pydantic-ai's own ``RunUsage.cost`` of the run, and genai-prices' ``calc_price`` of each
  attempt and response at its model.
- A run returned as ``Agent.run_stream`` or ``Agent.iter`` leave it (``StreamedRunResult``,
  ``AgentRun``) was not read at all: no usage, and the object itself as the output. Reference:
  the ``RunUsage`` (with its own ``cost``) and output of the ``AgentRunResult`` it settled into.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from genai_prices import calc_price
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from ablation import AblationEngine, AblationTask
from ablation.agents.pricing import priced
from ablation.agents.sdk import sdk_output
from ablation.outputs import AgentOutput


def _answer(text: str, inputs: int, outputs: int) -> Any:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)], usage=RequestUsage(input_tokens=inputs, output_tokens=outputs))

    return model


def _empty(response: ModelResponse) -> bool:
    return not any(getattr(p, "content", "") for p in response.parts)


def test_a_rejected_fallback_response_is_priced_with_the_run() -> None:
    agent = Agent(FallbackModel(FunctionModel(_answer("", 100_000, 500), model_name="gpt-4o"),
                                FunctionModel(_answer("ok", 1000, 10), model_name="gpt-4o-mini"),
                                fallback_on=_empty))  # fmt: skip
    result = agent.run_sync("q")
    [response] = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
    [attempt] = response.failed_attempts or []
    assert attempt.outcome == "rejected" and attempt.usage is not None
    each = sum(Decimal(calc_price(u, model_ref=name).total_price)
               for u, name in ((attempt.usage, attempt.model_name), (response.usage, response.model_name)))  # fmt: skip
    assert result.usage.cost == each  # pydantic-ai's own accounting of the run
    out = sdk_output(result)
    assert isinstance(out, AgentOutput) and out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens) == (101_000, 510)
    assert (out.usage.model_requests, out.usage.model) == (result.usage.requests, "gpt-4o+gpt-4o-mini")
    assert priced(out, {}) == {"cost": float(each), "cost_currency": "USD", "cost_source": "price-db"}


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for word in ("o", "k"):
        yield word


STREAMING = Agent(FunctionModel(_answer("ok", 10, 2), stream_function=_stream, model_name="gpt-4o-mini"))
RUNS: list[Any] = []  # the runs the agents returned, for their own RunUsage


async def _streamed(question: str) -> Any:
    async with STREAMING.run_stream(question) as run:
        await run.get_output()
    RUNS.append(run)
    return run


async def _iterated(question: str) -> Any:
    async with STREAMING.iter(question) as run:
        async for _ in run:
            pass
    RUNS.append(run)
    return run


async def _unfinished(question: str) -> Any:
    async with STREAMING.run_stream(question) as run:
        return run


@pytest.mark.parametrize("agent", [_streamed, _iterated])
def test_a_streamed_or_iterated_run_is_read_as_the_run_it_settled_into(agent: Any) -> None:
    RUNS.clear()
    [trial] = AblationEngine().run(agent, agent, [AblationTask(task_id="t", input_data="q")], arms=("baseline",))
    [run] = RUNS
    reference = run.result  # the AgentRunResult it settled into: pydantic-ai's RunUsage and output
    assert (trial.status, trial.output) == ("completed", reference.output)
    usage = reference.usage
    assert trial.usage is not None
    assert (trial.usage.input_tokens, trial.usage.output_tokens, trial.usage.model_requests) == (
        usage.input_tokens, usage.output_tokens, usage.requests
    )  # fmt: skip
    assert (trial.cost, trial.cost_source) == (float(usage.cost or 0), "price-db") and usage.cost


def test_a_run_returned_before_it_finished_is_the_trials_error() -> None:
    [trial] = AblationEngine().run(_unfinished, _unfinished, [AblationTask(task_id="t", input_data="q")],
                                   arms=("baseline",))  # fmt: skip
    assert (trial.status, trial.error_type) == ("error", "AgentProcessError")
    assert "had not finished" in (trial.error_message or "")
