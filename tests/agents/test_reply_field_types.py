"""A number in a command or HTTP reply's fields given as JSON text or a boolean is refused, named.

``{"output": "x", "cost": "0.5"}`` was read as the cost 0.5 (pydantic's lax mode parses numeric
text and takes ``true`` as 1), while ``"cost": "cheap"`` was refused: the same wrong type, two
outcomes. Each member below is, as the standard JSON decoder reads it, a string or a boolean
where the reply convention wants a number; each must be the agent's error naming the field and
the value, recorded on its trial, and the campaign must go on. The replies come from real
processes and a real socket server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.raw_server import raw_servers, replying

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.agents import AgentProcessError, CommandAgent, HttpAgent

#: (reply, the field as the error names it, the path to the member in the decoded reply)
REPLIES = [
    (b'{"output": "x", "cost": "0.5"}', "cost.float", ("cost",)),
    (b'{"output": "x", "cost": true}', "cost.float", ("cost",)),
    (b'{"output": "x", "cost": {"amount": "0.5", "currency": "EUR"}}', "cost.TrialCost.amount", ("cost", "amount")),
    (b'{"output": "x", "tokens": "12"}', "tokens", ("tokens",)),
    (b'{"output": "x", "tokens": false}', "tokens", ("tokens",)),
    (b'{"output": "x", "metrics": {"steps": "3"}}', "metrics.steps", ("metrics", "steps")),
    (b'{"output": "x", "metrics": {"steps": true}}', "metrics.steps", ("metrics", "steps")),
    (b'{"output": "x", "usage": {"input_tokens": "7"}}', "usage.input_tokens", ("usage", "input_tokens")),
    (b'{"output": "x", "usage": {"model_requests": true}}', "usage.model_requests", ("usage", "model_requests")),
    (b'{"output": "x", "usage": {"tool_calls": {"search": "2"}}}', "usage.tool_calls.search", ("usage", "tool_calls", "search")),
]  # fmt: skip


def _member(reply: bytes, path: tuple[str, ...]) -> object:
    value = json.loads(reply)
    for key in path:
        value = value[key]
    return value


@pytest.mark.parametrize(("reply", "field", "path"), REPLIES)
def test_the_member_is_no_json_number(reply: bytes, field: str, path: tuple[str, ...]) -> None:
    """The premise, by the standard decoder: the member is text or a boolean, not a number."""
    assert type(_member(reply, path)) in (str, bool)


def _printer(tmp_path: Path, reply: bytes) -> CommandAgent:
    """A real process that reads its input and prints ``reply`` on stdout."""
    path = tmp_path / "reply.json"
    path.write_bytes(reply)
    return CommandAgent(["sh", "-c", 'cat >/dev/null; cat "$0"', str(path)], name="printer", timeout_s=20)


def _answer(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    """``serve(body)``: the URL of a server answering every request with ``body`` (HTTP 200)."""
    with raw_servers(monkeypatch) as start:
        yield lambda body: start(replying(_answer(body), linger=True))


def _named(message: str, reply: bytes, field: str, path: tuple[str, ...]) -> None:
    assert "returned an 'output' object with invalid fields" in message
    assert f"field {field!r}: " in message and f"(got {_member(reply, path)!r})" in message


@pytest.mark.parametrize(("reply", "field", "path"), REPLIES)
def test_a_command_reply_is_refused(tmp_path: Path, reply: bytes, field: str, path: tuple[str, ...]) -> None:
    with pytest.raises(AgentProcessError) as caught:
        asyncio.run(_printer(tmp_path, reply).run(1))
    _named(str(caught.value), reply, field, path)


@pytest.mark.parametrize(("reply", "field", "path"), REPLIES)
def test_an_http_reply_is_refused(serve: Callable[[bytes], str], reply: bytes, field: str, path: tuple[str, ...]) -> None:
    with pytest.raises(AgentProcessError) as caught:
        HttpAgent(serve(reply), name="svc", timeout_s=10).run(1)
    _named(str(caught.value), reply, field, path)


def test_numbers_are_still_read(tmp_path: Path, serve: Callable[[bytes], str]) -> None:
    """Numbers, a whole one written with a fraction among them (JSON has one number type), are
    read as the standard decoder reads them."""
    reply = (b'{"output": "x", "cost": 1, "tokens": 12.0, "metrics": {"steps": 3},'
             b' "usage": {"input_tokens": 7.0, "output_tokens": 5, "tool_calls": {"search": 2.0}}}')  # fmt: skip
    expected = json.loads(reply)
    for got in (asyncio.run(_printer(tmp_path, reply).run(1)), HttpAgent(serve(reply), timeout_s=10).run(1)):
        assert (got.output, got.cost, got.tokens, got.metrics) == (
            expected["output"], expected["cost"], expected["tokens"], expected["metrics"],
        )  # fmt: skip
        usage = got.usage
        assert usage is not None
        assert (usage.input_tokens, usage.output_tokens, usage.tool_calls) == (
            expected["usage"]["input_tokens"], expected["usage"]["output_tokens"], expected["usage"]["tool_calls"],
        )  # fmt: skip
        assert type(got.tokens) is int and type(usage.input_tokens) is int


def test_the_engine_records_the_reply_as_the_trials_error(tmp_path: Path, serve: Callable[[bytes], str]) -> None:
    """Every trial is an error naming the field; no text is stored as a number, and the campaign
    runs to its end (a few of the replies: one of each field)."""
    chosen = [REPLIES[i] for i in (0, 3, 6, 9)]
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="x") for i in range(len(chosen))]
    for i, (reply, field, path) in enumerate(chosen):
        (tmp_path / str(i)).mkdir()
        for agent in (_printer(tmp_path / str(i), reply), HttpAgent(serve(reply), name="svc", timeout_s=10)):
            results = AblationEngine(CampaignConfig(concurrency=1)).run(agent, agent, tasks[i : i + 1])
            assert len(results) == 2
            for r in results:
                assert (r.status, r.passed, r.output, r.cost, r.tokens, r.usage, r.metrics) == (
                    "error", False, None, None, None, None, {},
                )
                assert r.error_stage == "agent" and r.error_type == "AgentProcessError"
                _named(r.error or "", reply, field, path)
