"""SDK results whose ``usage`` leaves the token counts out: unknown, never 0 tokens at $0.

The SDKs build a response from the server's JSON without validating it (``construct``, as
here), so an OpenAI-compatible server that sends ``"usage": {}`` or ``null`` counts gave a
``CompletionUsage`` without them; ablation read each missing count as 0 and priced the trial
from genai-prices at $0.00 ``price-db``, a cost no one paid. The reference is the same reply
without ``usage`` at all, which ablation already reads as tokens and cost unknown (README: "A
reply that reports no usage ... keeps its request, tool calls and model, with its tokens and cost
unknown, never zero"); a reply stating one count alone keeps that one.
"""

from __future__ import annotations

from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, TaskResult

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("genai_prices")

from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

NULLS = {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}


def _chat(usage: Any) -> Any:
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "t0"}}]}  # fmt: skip
    return ChatCompletion.construct(**body, **({} if usage is ... else {"usage": usage}))


def _response(usage: Any) -> Any:
    text = {"type": "output_text", "text": "t0", "annotations": []}
    message = {"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": [text]}
    return Response.construct(id="r", object="response", created_at=0, model="gpt-4o-mini", output=[message],
                              parallel_tool_calls=False, tool_choice="auto", tools=[], usage=usage)  # fmt: skip


def _message(usage: Any) -> Any:
    return Message.construct(id="m", type="message", role="assistant", model="claude-3-5-haiku-latest",
                             content=[{"type": "text", "text": "t0"}], stop_reason="end_turn",
                             usage=usage)  # fmt: skip


def _trial(reply: Any) -> TaskResult:
    tasks = [AblationTask(task_id="t0", input_data="t0", expected_output="t0")]
    [r] = AblationEngine().run(lambda _: reply, lambda _: reply, tasks, arms=("candidate",))
    assert (r.status, r.passed) == ("completed", True)
    assert r.usage is not None and r.usage.model_requests == 1
    return r


@pytest.mark.parametrize("reply", [_chat(...), _chat({}), _chat(NULLS), _response({}), _message({})],
                         ids=["chat-no-usage", "chat-empty", "chat-nulls", "response-empty", "message-empty"])
def test_a_usage_without_counts_is_unknown_as_no_usage(reply: Any) -> None:
    r = _trial(reply)
    assert r.usage is not None
    assert (r.usage.input_tokens, r.usage.output_tokens, r.tokens) == (None, None, None)
    assert (r.cost, r.cost_source) == (None, None)


@pytest.mark.parametrize(("reply", "counts"), [
    (_chat({"prompt_tokens": 10}), (10, None)),
    (_response({"output_tokens": 3}), (None, 3)),
    (_message({"output_tokens": 3, "cache_read_input_tokens": 5}), (None, 3)),
], ids=["chat-prompt-only", "response-output-only", "message-output-only"])  # fmt: skip
def test_a_count_left_out_is_unknown_and_the_trial_unpriced(reply: Any, counts: tuple[Any, Any]) -> None:
    r = _trial(reply)
    assert r.usage is not None and (r.usage.input_tokens, r.usage.output_tokens) == counts
    assert (r.tokens, r.cost, r.cost_source) == (None, None, None)


def test_stated_counts_are_still_priced() -> None:
    from genai_prices import Usage, calc_price

    r = _trial(_chat({"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}))
    price = calc_price(Usage(input_tokens=1000, output_tokens=10), model_ref="gpt-4o-mini").total_price
    assert (r.tokens, r.cost, r.cost_source) == (1010, float(price), "price-db")
