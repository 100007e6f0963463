"""Replies the standard JSON decoder refuses without a ``JSONDecodeError``, and truncated bodies.

``json.loads`` raises a bare :class:`RecursionError` for nesting deeper than the recursion limit
and a plain :class:`ValueError` for an integer of more than ``sys.get_int_max_str_digits()``
digits. A command or HTTP agent replying so must fail with the agent's own error naming the agent
(:class:`AgentProcessError`, :class:`AgentHttpError`), not with the decoder's bare exception.

An HTTP response whose connection closes before its declared ``Content-Length`` is a dropped
response (:class:`AgentConnectionError`, retried by default), never an answer: the first bytes of
``12345`` are the valid JSON ``12``. Nor is a body framed by the first of two Content-Length lines
that disagree. The replies come from real processes and a real socket server.
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
from ablation.agents import (
    AgentConnectionError,
    AgentHttpError,
    AgentProcessError,
    CommandAgent,
    HttpAgent,
)

#: Replies the decoder refuses with its own limits, and the phrase the error names them by.
LIMITS = [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"1" * (sys.get_int_max_str_digits() + 1), "number too large"),
]


def _decoder_refuses(reply: bytes) -> type[BaseException]:
    """The exception the standard decoder itself raises for ``reply`` (the reference)."""
    try:
        json.loads(reply.decode())
    except (RecursionError, ValueError) as exc:
        return type(exc)
    raise AssertionError("the decoder read it")


def _printer(tmp_path: Path, reply: bytes) -> CommandAgent:
    """A real process that reads its input and prints ``reply`` on stdout (``-S``: the bare
    interpreter, no site-packages set up for a printer)."""
    (tmp_path / "reply.json").write_bytes(reply)
    code = f"import sys; sys.stdin.read(); sys.stdout.buffer.write(open({str(tmp_path / 'reply.json')!r}, 'rb').read())"
    return CommandAgent([sys.executable, "-S", "-c", code], name="printer", timeout_s=20)


@pytest.mark.parametrize(("reply", "phrase"), LIMITS)
def test_a_command_reply_past_the_decoders_limits_is_the_agents_error(
    tmp_path: Path, reply: bytes, phrase: str
) -> None:
    assert not issubclass(_decoder_refuses(reply), json.JSONDecodeError)
    with pytest.raises(AgentProcessError, match=phrase) as caught:
        asyncio.run(_printer(tmp_path, reply).run(1))
    assert str(caught.value).startswith("printer printed ") and caught.value.returncode == 0


def _answer(length: int, body: bytes) -> bytes:
    """Declare ``length`` bytes and send ``body``."""
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(length).encode() + b"\r\n\r\n" + body)  # fmt: skip


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int, bytes], str]]:
    """``serve(length, body)``: the URL of a server declaring ``length`` and sending ``body``."""
    with raw_servers(monkeypatch) as start:
        yield lambda length, body: start(replying(_answer(length, body), linger=True))


@pytest.mark.parametrize(("reply", "phrase"), LIMITS)
def test_an_http_reply_past_the_decoders_limits_is_the_agents_error(
    serve: Callable[[int, bytes], str], reply: bytes, phrase: str
) -> None:
    with pytest.raises(AgentHttpError, match=phrase) as caught:
        HttpAgent(serve(len(reply), reply), name="svc").run(1)
    assert caught.value.status == 200 and str(caught.value).startswith("svc: HTTP 200")


def test_a_body_cut_before_its_content_length_is_a_dropped_response(serve: Callable[[int, bytes], str]) -> None:
    whole = b"12345"
    assert json.loads(whole[:2]) == 12  # what the cut body would have been read as
    with pytest.raises(AgentConnectionError, match="IncompleteRead") as caught:
        HttpAgent(serve(len(whole), whole[:2]), name="svc").run(1)
    assert str(caught.value).startswith("svc: ")


def test_a_whole_body_is_still_read(serve: Callable[[int, bytes], str]) -> None:
    assert HttpAgent(serve(5, b"12345")).run(1) == 12345
    with pytest.raises(AgentHttpError, match="not JSON"):
        HttpAgent(serve(0, b"")).run(1)


def test_the_engine_records_a_cut_body_as_the_trials_error(serve: Callable[[int, bytes], str]) -> None:
    agent = HttpAgent(serve(5, b"12"), name="svc")
    tasks = [AblationTask(task_id="t0", input_data=1, expected_output=12)]
    results = AblationEngine(CampaignConfig(concurrency=1)).run(agent, agent, tasks)
    assert len(results) == 2
    for r in results:
        assert r.status == "error" and r.passed is False and r.output is None
        assert r.error is not None and r.error.startswith("AgentConnectionError: svc: ")


@pytest.fixture
def serve_raw(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    """``serve_raw(response)``: the URL of a server answering every request with ``response``."""
    with raw_servers(monkeypatch) as start:
        yield lambda response: start(replying(response, linger=True))


def test_content_length_lines_that_disagree_are_the_calls_error(serve_raw: Callable[[bytes], str]) -> None:
    """Two Content-Length lines are one list (RFC 9110 sections 5.3, 8.6): 2 and 5 frame no body;
    by the first line alone the body was ``12`` of ``12345``."""
    response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n12345"
    with pytest.raises(AgentHttpError, match="bad Content-Length") as caught:
        HttpAgent(serve_raw(response), name="svc").run(1)
    assert caught.value.status == 200


def test_content_length_lines_that_agree_are_that_length(serve_raw: Callable[[bytes], str]) -> None:
    response = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n12345"
    assert HttpAgent(serve_raw(response)).run(1) == 12345


@pytest.mark.parametrize("charset", ["undefined", "punycode"])
def test_a_charset_whose_codec_fails_is_not_json(serve_raw: Callable[[bytes], str], charset: str) -> None:
    """These codecs raise a bare UnicodeError (no UnicodeDecodeError) for any body."""
    with pytest.raises(UnicodeError) as reference:
        b'"ok"'.decode(charset)
    assert not isinstance(reference.value, UnicodeDecodeError)
    response = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=" + charset.encode()
                + b'\r\nContent-Length: 4\r\n\r\n"ok"')  # fmt: skip
    with pytest.raises(AgentHttpError, match=f"not JSON .*'{charset}' codec") as caught:
        HttpAgent(serve_raw(response), name="svc").run(1)
    assert caught.value.status == 200
