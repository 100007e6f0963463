"""A command or HTTP reply whose object names one member twice is the agent's error, named.

``{"output": "a", "output": "b"}`` was read as ``"b"`` without a word: Python's decoder keeps
the last value, where other readers keep the first or refuse (RFC 8259 section 4 leaves it to
each). Result files already refuse such an object (``tests/sources/test_repeated_members.py``);
agents' replies now pass through the same decoder (``ablation.strict_json``). Reference: the
objects' pairs as ``json.loads(..., object_pairs_hook=list)`` sees them, where the member stands
twice. The replies come from a real process and a real socket server.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.raw_server import raw_servers, replying

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.agents import AgentHttpError, AgentProcessError, CommandAgent, HttpAgent

#: (reply, the member named twice)
REPLIES = [
    (b'{"output": "a", "output": "b"}', "output"),
    (b'{"output": 1, "cost": 0.5, "cost": 0.1}', "cost"),
    (b'{"output": [{"k": 1, "k": 2}]}', "k"),
    (b'{"output": 1, "usage": {"input_tokens": 5, "input_tokens": 50}}', "input_tokens"),
]


def _twice(value: object, name: str) -> bool:
    """Whether an object of the decoded pairs names ``name`` twice (the reference)."""
    if isinstance(value, list) and all(isinstance(p, tuple) for p in value):
        keys = [k for k, _ in value]
        return keys.count(name) > 1 or any(_twice(v, name) for _, v in value)
    if isinstance(value, list):
        return any(_twice(v, name) for v in value)
    return False


@pytest.mark.parametrize(("reply", "name"), REPLIES)
def test_the_reference_sees_the_member_twice(reply: bytes, name: str) -> None:
    assert _twice(json.loads(reply, object_pairs_hook=list), name)


def _printer(tmp_path: Path, reply: bytes) -> CommandAgent:
    (tmp_path / "reply.json").write_bytes(reply)
    code = f"import sys; sys.stdin.read(); sys.stdout.buffer.write(open({str(tmp_path / 'reply.json')!r}, 'rb').read())"
    return CommandAgent([sys.executable, "-S", "-c", code], name="printer", timeout_s=20)


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    def answer(body: bytes) -> bytes:
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip

    with raw_servers(monkeypatch) as start:
        yield lambda body: start(replying(answer(body), linger=True))


@pytest.mark.parametrize(("reply", "name"), REPLIES)
def test_a_command_reply_is_the_agents_error(tmp_path: Path, reply: bytes, name: str) -> None:
    with pytest.raises(AgentProcessError) as caught:
        asyncio.run(_printer(tmp_path, reply).run(1))
    assert str(caught.value).startswith(f"printer printed malformed JSON (member {name!r} given twice")


@pytest.mark.parametrize(("reply", "name"), REPLIES)
def test_an_http_reply_is_the_agents_error(serve: Callable[[bytes], str], reply: bytes, name: str) -> None:
    with pytest.raises(AgentHttpError) as caught:
        HttpAgent(serve(reply), name="svc", timeout_s=10).run(1)
    assert str(caught.value).startswith(f"svc: HTTP 200 response is not JSON (malformed JSON (member {name!r} given twice")


def test_the_engine_records_the_reply_as_the_trials_error(tmp_path: Path) -> None:
    """Each trial is an agent error naming the member; no value is kept, the campaign ends."""
    reply, name = REPLIES[0]
    tasks = [AblationTask(task_id="t", input_data=1, expected_output="b")]
    agent = _printer(tmp_path, reply)
    results = AblationEngine(CampaignConfig(concurrency=1)).run(agent, agent, tasks)
    assert [(r.status, r.output, r.error_stage) for r in results] == [("error", None, "agent")] * 2
    assert all(f"member {name!r} given twice" in (r.error or "") for r in results)
