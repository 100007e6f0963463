"""Tool calls as the SDK results record them: OpenAI custom tools under their own name in both
the ChatCompletion and the Responses form, and a pydantic-ai run's function-tool calls as its
own ``RunUsage`` counts them (never the output tool, ``final_result``, nor a retried call)."""

from __future__ import annotations

from typing import Any

from ablation.agents.sdk import sdk_output

CALLS = {"lookup": 1, "grep": 1}


def _tool_calls(raw: Any) -> dict[str, int]:
    out = sdk_output(raw)
    assert out is not raw and out.usage is not None
    return dict(out.usage.tool_calls)


def test_chat_completion_counts_a_custom_tool_under_its_name() -> None:
    from openai.types.chat import ChatCompletion

    raw = ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "x", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
                {"id": "b", "type": "custom", "custom": {"name": "grep", "input": "foo"}},
            ]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    })  # fmt: skip
    assert _tool_calls(raw) == CALLS


def test_responses_counts_a_custom_tool_call_as_the_chat_form_does() -> None:
    from openai.types.responses import Response

    raw = Response.model_validate({
        "id": "r1", "object": "response", "created_at": 0, "model": "gpt-4o-mini",
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "output": [
            {"type": "function_call", "id": "f", "call_id": "c", "name": "lookup", "arguments": "{}",
             "status": "completed"},
            {"type": "custom_tool_call", "id": "g", "call_id": "d", "name": "grep", "input": "foo"},
            {"type": "message", "id": "m", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "x", "annotations": []}]},
        ],
        "usage": {"input_tokens": 10, "output_tokens": 1, "total_tokens": 11,
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    })  # fmt: skip
    assert _tool_calls(raw) == CALLS


def _check_against_run_usage(agent: Any, expected: dict[str, int]) -> None:
    result = agent.run_sync("q")
    usage = result.usage if hasattr(result.usage, "input_tokens") else result.usage()
    counted = _tool_calls(result)
    assert counted == expected
    assert sum(counted.values()) == usage.tool_calls  # pydantic-ai's own count, in total


def test_pydantic_ai_output_tool_is_not_a_tool_call() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    _check_against_run_usage(Agent(TestModel(custom_output_args=7), output_type=int), {})
    agent = Agent(TestModel(custom_output_args=7), output_type=int)

    @agent.tool_plain
    def lookup(q: str) -> str:
        return q

    _check_against_run_usage(agent, {"lookup": 1})


def test_pydantic_ai_retried_and_skipped_calls_are_not_counted() -> None:
    from pydantic import BaseModel
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    class A(BaseModel):
        x: int

    class B(BaseModel):
        y: int

    tries = {"lookup": 0}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """``lookup`` (retried once) with an unknown tool, ``lookup`` again with an output tool
        given bad arguments (when there are output tools), then the other output tool (or text)."""
        names = [t.name for t in info.output_tools]
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"q": "a"}), ToolCallPart("nope", {})])
        if len(messages) == 3:
            bad = [ToolCallPart(names[0], {"bad": 1})] if names else []
            return ModelResponse(parts=[ToolCallPart("lookup", {"q": "a"}), *bad])
        if names:
            return ModelResponse(parts=[ToolCallPart(names[1], {"y": 2})])
        return ModelResponse(parts=[TextPart("done")])

    for output_type in ([A, B], str):
        tries["lookup"] = 0
        agent = Agent(FunctionModel(model), output_type=output_type)

        @agent.tool_plain
        def lookup(q: str) -> str:
            tries["lookup"] += 1
            if tries["lookup"] == 1:
                raise ModelRetry("again")
            return q

        _check_against_run_usage(agent, {"lookup": 1})
