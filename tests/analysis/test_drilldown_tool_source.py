"""The drill-down's tool sequence when a trial's spans record model calls but no tool: an
uninstrumented pydantic-ai ``Agent`` over an ``AsyncOpenAI`` client that
``opentelemetry-instrumentation-openai-v2`` instruments (model-call spans only). The tools come
from the trial's trace then; spans that record tool calls still win, and a trial without spans
shows its trace's tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.otel_provider import sdk_provider_for_one_test

from ablation import AblationTask, CampaignConfig, TaskResult, run_ablation_campaign
from ablation.analysis.details import _view
from ablation.spans import TrialSpans

TRACE = [
    {"kind": "request", "parts": [{"kind": "user-prompt", "content": "q"}]},
    {"kind": "response", "parts": [{"kind": "tool-call", "tool": "lookup"}]},
    {"kind": "request", "parts": [{"kind": "tool-return", "tool": "lookup", "content": "a"}]},
]


def _span(i: int, attributes: dict[str, Any]) -> dict[str, Any]:
    return {"name": f"s{i}", "id": f"{i:016x}", "parent": None, "start_s": float(i), "duration_s": 0.1,
            "status": "ok", "error": None, "attributes": attributes}  # fmt: skip


MODEL_CALL = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}


def _tools(spans: list[dict[str, Any]] | None) -> list[str] | None:
    result = TaskResult(task_id="t", passed=True, trace=TRACE,
                        spans=TrialSpans.of(spans) if spans is not None else None)  # fmt: skip
    view = _view(result)
    return view.tools if view is not None else None


def test_model_call_spans_without_tools_leave_the_trace_tools() -> None:
    assert _tools([_span(0, MODEL_CALL), _span(1, MODEL_CALL)]) == ["lookup"]


def test_spans_with_tool_calls_win_and_no_spans_mean_the_trace() -> None:
    spans = [_span(0, MODEL_CALL), _span(1, {"gen_ai.tool.name": "search"}), _span(2, MODEL_CALL)]
    assert _tools(spans) == ["search"]
    assert _tools(None) == ["lookup"]
    assert _tools([]) == ["lookup"]


@pytest.fixture
def instrumented_openai() -> Iterator[None]:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    for _ in sdk_provider_for_one_test():
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument()
        try:
            yield
        finally:
            instrumentor.uninstrument()


def _agent(prompt: str) -> Any:
    """A pydantic-ai agent over a mocked OpenAI endpoint: the ``please-lookup`` one calls
    ``lookup`` once and answers ``right``, the other answers ``wrong`` without a tool."""
    import httpx
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        tools = bool(body.get("tools")) and "please-lookup" in json.dumps(body["messages"][0])
        if tools and not any(m.get("role") == "tool" for m in body["messages"]):
            call = {"id": "x", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "a"}'}}
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        else:
            message = {"role": "assistant", "content": "right" if tools else "wrong"}
        return httpx.Response(200, json={
            "id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        })  # fmt: skip

    client = AsyncOpenAI(api_key="x", base_url="http://mock/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))  # fmt: skip
    agent = Agent(OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client)),
                  system_prompt=prompt)  # fmt: skip

    @agent.tool_plain
    def lookup(q: str) -> str:
        return q

    return agent


def test_an_instrumented_client_under_an_agent_shows_the_agents_tools(instrumented_openai: None) -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=f"q{i}", expected_output="right") for i in range(3)]
    report = run_ablation_campaign(_agent("please-lookup"), _agent("answer directly"), tasks,
                                   config=CampaignConfig(n_resamples=200, concurrency=1))  # fmt: skip
    assert report.regressions == ["t0", "t1", "t2"]
    for detail in report.details:
        assert detail.baseline is not None and detail.candidate is not None
        spans = detail.baseline.spans
        assert spans is not None and spans.model_calls == 2 and spans.tools == []  # as the repro
        assert detail.baseline.tools == ["lookup"]
        assert detail.candidate.tools == []
