"""A command or HTTP reply holding a number JSON has no value for is the trial's error, named.

Python's decoder reads ``NaN``, ``Infinity`` and ``-Infinity``, which RFC 8259 (section 6) leaves
out of JSON, and reads ``1e400`` as an infinity; such a reply was stored with ``nan``/``inf`` in
its cost or usage fields' place or as the text ``"nan"`` in its output. A reply holding one must
be the agent's error naming the member it stands at, recorded on the trial, and the campaign must
go on. References: ``pydantic_core.from_json(allow_inf_nan=False)``, a strict JSON parser, refuses
the literals; IEEE binary64 has no finite value past ``sys.float_info.max``. The replies come from
real processes and a real socket server.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pydantic_core
import pytest
from helpers.raw_server import raw_servers, replying

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.agents import AgentHttpError, AgentProcessError, CommandAgent, HttpAgent

#: (reply, the number as written, where it stands as the error names it)
REPLIES = [
    (b"NaN", "NaN", "as the whole text"),
    (b'{"output": 1, "cost": NaN}', "NaN", "at member cost"),
    (b'{"output": 1, "cost": 1e400}', "1e400", "at member cost"),
    (b'{"output": 1, "cost": {"amount": Infinity, "currency": "USD"}}', "Infinity", "at member cost.amount"),
    (b'{"output": 1, "tokens": -1E+400}', "-1E+400", "at member tokens"),
    (b'{"output": 1, "metrics": {"m": -Infinity}}', "-Infinity", "at member metrics.m"),
    (b'{"output": 1, "usage": {"input_tokens": 2.5e999}}', "2.5e999", "at member usage.input_tokens"),
    (b'{"output": [1, {"score": NaN}]}', "NaN", "at member output[1].score"),
    (b'{"answer": 4, "latency s": 1e400}', "1e400", 'at member ["latency s"]'),
    (b"[0, Infinity]", "Infinity", "at item [1]"),
]


@pytest.mark.parametrize(("reply", "literal", "where"), REPLIES)
def test_the_references_refuse_the_number(reply: bytes, literal: str, where: str) -> None:
    json.loads(reply)  # the standard decoder reads it: the defect's premise
    if literal.lstrip("-") in ("NaN", "Infinity"):
        with pytest.raises(ValueError):
            pydantic_core.from_json(reply, allow_inf_nan=False)
    else:
        assert abs(float(literal)) > sys.float_info.max and math.isinf(float(literal))


def _printer(tmp_path: Path, reply: bytes) -> CommandAgent:
    """A real process that reads its input and prints ``reply`` on stdout (``-S``: the bare
    interpreter, no site-packages set up for a printer)."""
    (tmp_path / "reply.json").write_bytes(reply)
    code = f"import sys; sys.stdin.read(); sys.stdout.buffer.write(open({str(tmp_path / 'reply.json')!r}, 'rb').read())"
    return CommandAgent([sys.executable, "-S", "-c", code], name="printer", timeout_s=20)


@pytest.mark.parametrize(("reply", "literal", "where"), REPLIES)
def test_a_command_reply_is_the_agents_error(tmp_path: Path, reply: bytes, literal: str, where: str) -> None:
    with pytest.raises(AgentProcessError) as caught:
        asyncio.run(_printer(tmp_path, reply).run(1))
    message = str(caught.value)
    assert message.startswith("printer printed a number JSON has no value for on stdout")
    assert f"({literal} {where}: " in message and caught.value.returncode == 0


def _answer(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    """``serve(body)``: the URL of a server answering every request with ``body`` (HTTP 200)."""
    with raw_servers(monkeypatch) as start:
        yield lambda body: start(replying(_answer(body), linger=True))


@pytest.mark.parametrize(("reply", "literal", "where"), REPLIES)
def test_an_http_reply_is_the_agents_error(
    serve: Callable[[bytes], str], reply: bytes, literal: str, where: str
) -> None:
    with pytest.raises(AgentHttpError) as caught:
        HttpAgent(serve(reply), name="svc", timeout_s=10).run(1)
    assert caught.value.status == 200
    assert str(caught.value).startswith(f"svc: HTTP 200 response is not JSON ({literal} {where}: ")


@pytest.mark.parametrize(
    "reply",
    [b'{"output": 1.5e308, "cost": 0.25}', b"-0.0", b"1e-400", b"123456789012345678901234567890", b'"NaN"'],
)
def test_finite_numbers_are_still_read(tmp_path: Path, serve: Callable[[bytes], str], reply: bytes) -> None:
    """A number within a float's range (one that rounds to 0 included), an integer of any size
    the decoder allows, and the text ``"NaN"`` read as the standard decoder reads them."""
    expected = json.loads(reply)
    from_command = asyncio.run(_printer(tmp_path, reply).run(1))
    from_http = HttpAgent(serve(reply), timeout_s=10).run(1)
    for got in (from_command, from_http):
        if isinstance(expected, dict):
            assert (got.output, got.cost) == (expected["output"], expected["cost"])
        else:
            assert got == expected and repr(got) == repr(expected)


def test_the_engine_records_each_reply_as_the_trials_error(tmp_path: Path, serve: Callable[[bytes], str]) -> None:
    """Every trial of both agents is an error naming the member; nothing is stored as a number,
    and the campaign runs to its end."""
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=1) for i in range(len(REPLIES))]
    for make in (
        lambda reply, i: _printer(tmp_path / str(i), reply),
        lambda reply, i: HttpAgent(serve(reply), name="svc", timeout_s=10),
    ):
        for i, (reply, literal, where) in enumerate(REPLIES):
            (tmp_path / str(i)).mkdir(exist_ok=True)
            agent = make(reply, i)
            results = AblationEngine(CampaignConfig(concurrency=1)).run(agent, agent, tasks[i : i + 1])
            assert len(results) == 2
            for r in results:
                assert (r.status, r.passed, r.output, r.cost, r.tokens, r.usage, r.metrics) == (
                    "error", False, None, None, None, None, {},
                )
                assert r.error_stage == "agent" and r.error is not None
                assert f"({literal} {where}: " in r.error
