"""Agents that return what their SDK gave them: the OpenAI client against a local
OpenAI-compatible server (127.0.0.1, no network), and pydantic-ai run results.

The server counts the tokens it reports (words of the prompt and of the answer) and records
them; the report's usage is checked against those records, and its cost against
``genai-prices`` called here on the same counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.json_server import json_server

from ablation import AblationTask, CampaignConfig, TaskResult, run_ablation_campaign
from ablation.agents.sdk import sdk_output

openai = pytest.importorskip("openai")

MODEL = "gpt-4o-mini"
TASKS = [
    AblationTask(task_id=f"q{i}", input_data=f"what is {i} plus {i}", expected_output=str(2 * i))
    for i in range(8)
]


def _completion(body: dict[str, Any], records: list[dict[str, int]]) -> dict[str, Any]:
    """``POST /v1/chat/completions``: answers the sum asked for (wrong for a ``sloppy`` system
    prompt on odd numbers), with usage counted in words and one tool call for a ``tools``
    prompt."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    n = int(user.split()[2])
    answer = str(2 * n + (1 if "sloppy" in system and n % 2 else 0))
    prompt_tokens = len(system.split()) + len(user.split())
    records.append({"prompt": prompt_tokens, "tools": int("tools" in system)})
    calls = [{"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}]
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{
            "index": 0, "finish_reason": "stop", "logprobs": None,
            "message": {"role": "assistant", "content": answer,
                        **({"tool_calls": calls} if "tools" in system else {})},
        }],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1,
                  "total_tokens": prompt_tokens + 1,
                  "prompt_tokens_details": {"cached_tokens": 1}},
    }  # fmt: skip


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, int]]]]:
    records: list[dict[str, int]] = []
    with json_server(lambda body: _completion(body, records)) as url:
        yield f"{url}/v1", records


def _agent(base_url: str, system: str) -> Any:
    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)

    def support_agent(question: str) -> Any:
        return client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
        )  # the raw ChatCompletion

    return support_agent


def test_raw_chat_completion_gives_output_usage_and_priced_cost(server: Any) -> None:
    from genai_prices import Usage, calc_price

    url, records = server
    report = run_ablation_campaign(
        _agent(url, "you answer with tools"), _agent(url, "you are sloppy"), TASKS,
        config=CampaignConfig(n_resamples=200, concurrency=1),
    )  # fmt: skip
    assert report.regressions == ["q1", "q3", "q5", "q7"]  # the text was the verified output
    assert report.baseline.errors == report.candidate.errors == 0
    prompts = {"baseline": [], "candidate": []}  # type: dict[str, list[int]]
    for r in records:  # the baseline's system prompt asks for tools
        prompts["baseline" if r["tools"] else "candidate"].append(r["prompt"])
    assert report.metrics["input_tokens"].baseline_mean == sum(prompts["baseline"]) / 8
    assert report.metrics["input_tokens"].candidate_mean == sum(prompts["candidate"]) / 8
    assert report.metrics["output_tokens"].baseline_mean == 1.0
    assert report.metrics["cached_tokens"].candidate_mean == 1.0
    assert report.metrics["tool_calls.calculator"].baseline_mean == 1.0
    assert report.metrics["tool_calls.calculator"].candidate_mean == 0.0
    expected = sum(
        float(calc_price(Usage(input_tokens=p, cache_read_tokens=1, output_tokens=1), model_ref=MODEL).total_price)
        for p in prompts["candidate"]
    )
    assert report.candidate.cost_total == pytest.approx(expected, rel=1e-12)
    assert (report.candidate.cost_currency, report.candidate.cost_source) == ("USD", "price-db")


def test_a_responses_api_result_is_read_as_text_and_usage() -> None:
    from openai.types.responses import Response

    raw = Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 0, "model": MODEL, "status": "completed",
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "output": [
            {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "lookup_order",
             "arguments": "{}", "status": "completed"},
            {"type": "message", "id": "m1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "order 7 shipped", "annotations": []}]},
        ],
        "usage": {"input_tokens": 40, "output_tokens": 5, "total_tokens": 45,
                  "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    })  # fmt: skip
    out = sdk_output(raw)
    assert out.output == "order 7 shipped"
    usage = out.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens) == (40, 5, 8)
    assert usage.tool_calls == {"lookup_order": 1} and usage.model == MODEL
    assert TaskResult(task_id="x", usage=usage).tokens == 45


def test_objects_of_other_packages_are_outputs_unchanged() -> None:
    class ChatCompletion:  # same name, not the SDK's class
        pass

    value = ChatCompletion()
    assert sdk_output(value) is value
    assert sdk_output({"choices": []}) == {"choices": []}
