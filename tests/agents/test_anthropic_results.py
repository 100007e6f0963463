"""An agent that returns the Anthropic SDK's ``Message``: the real ``anthropic`` client against a
local Messages-API server (127.0.0.1, no network).

The server counts the tokens it reports (words of the prompt) and records them with its cache
reads and writes; the trial's usage is checked against those records: every prompt token in
``input_tokens`` (Anthropic reports cache reads and writes apart from ``input_tokens``), cache
reads in ``cached_tokens``, cache writes in ``cache_write_tokens``, tool-use blocks counted by
name, the text blocks as the output.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.json_server import json_server

from ablation import AblationEngine, AblationTask

MODEL = "claude-3-5-haiku-latest"
TASKS = [AblationTask(task_id=f"q{i}", input_data=f"what is {i} plus {i}", expected_output=str(2 * i))
         for i in range(6)]  # fmt: skip


def _message(body: dict[str, Any], records: list[dict[str, int]]) -> dict[str, Any]:
    """``POST /v1/messages``: the sum in two text blocks around a ``calculator`` tool-use block."""
    user = body["messages"][-1]["content"]
    n = int(user.split()[2])
    record = {"input": len(user.split()), "read": n, "written": 2, "output": 3}
    records.append(record)
    return {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": MODEL,
        "stop_reason": "end_turn", "stop_sequence": None,
        "content": [
            {"type": "text", "text": str(2 * n)[:1]},
            {"type": "tool_use", "id": "t1", "name": "calculator", "input": {"a": n, "b": n}},
            {"type": "text", "text": str(2 * n)[1:]},
        ],
        "usage": {"input_tokens": record["input"], "output_tokens": record["output"],
                  "cache_read_input_tokens": record["read"],
                  "cache_creation_input_tokens": record["written"]},
    }  # fmt: skip


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, int]]]]:
    records: list[dict[str, int]] = []
    with json_server(lambda body: _message(body, records)) as url:
        yield url, records


def test_a_raw_anthropic_message_is_output_usage_and_tool_calls(server: tuple[str, list[dict[str, int]]]) -> None:
    anthropic = pytest.importorskip("anthropic")  # imported here: collection stays fast
    url, records = server
    client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)

    def agent(question: str) -> Any:
        return client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": question}]
        )

    results = AblationEngine().run(agent, agent, TASKS)
    assert len(records) == 2 * len(TASKS)
    by_read = {r["read"]: r for r in records}
    for r in results:
        n = int(r.task_id[1:])
        rec = by_read[n]
        assert r.status == "completed" and r.passed and r.output == str(2 * n)
        assert r.usage is not None
        assert r.usage.input_tokens == rec["input"] + rec["read"] + rec["written"]
        assert r.usage.cached_tokens == rec["read"]
        assert r.usage.cache_write_tokens == rec["written"]
        assert r.usage.output_tokens == rec["output"]
        assert r.usage.model_requests == 1 and r.usage.tool_calls == {"calculator": 1}
        assert r.usage.model == MODEL
        assert r.tokens == r.usage.input_tokens + r.usage.output_tokens
