"""The JSON decoder's limits are worded once, for the agents' replies and the sources' files alike.

The standard decoder refuses a text nested past the recursion limit (a bare
:class:`RecursionError`) and an integer of more than ``sys.get_int_max_str_digits()`` digits (a
plain :class:`ValueError`). A command agent, an HTTP agent and a suite file holding such a text
must name the limit in the same words, which :func:`ablation.strict_json.json_decoder_limit` gives,
and the digit limit must be read in one place of the package. The reference for each limit is the
exception the standard decoder itself raises.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.raw_server import raw_servers, replying

from ablation.agents import AgentHttpError, AgentProcessError, CommandAgent, HttpAgent
from ablation.errors import InputError
from ablation.sources.text import load_json

PACKAGE = Path(__file__).resolve().parents[2] / "ablation"
TEXTS = [b"[" * 100_000 + b"]" * 100_000, b"1" * (sys.get_int_max_str_digits() + 1)]


def _decoder_refuses(text: bytes) -> RecursionError | ValueError:
    """The exception the standard decoder raises for ``text`` (the reference)."""
    try:
        json.loads(text)
    except (RecursionError, ValueError) as exc:
        assert not isinstance(exc, json.JSONDecodeError)
        return exc
    raise AssertionError("the decoder read it")


def _source_problem(text: bytes) -> str:
    with pytest.raises(InputError) as caught:
        load_json(text.decode(), "suite.jsonl", line=3)
    prefix = "suite.jsonl:3: "
    assert str(caught.value).startswith(prefix)
    return str(caught.value)[len(prefix) :]


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    def answer(body: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body

    with raw_servers(monkeypatch) as start:
        yield lambda body: start(replying(answer(body), linger=True))


@pytest.mark.parametrize("text", TEXTS, ids=["nesting", "digits"])
def test_agents_and_sources_say_the_same(tmp_path: Path, serve: Callable[[bytes], str], text: bytes) -> None:
    from ablation.strict_json import json_decoder_limit

    wording = json_decoder_limit(_decoder_refuses(text))
    assert _source_problem(text) == wording

    (tmp_path / "reply.json").write_bytes(text)
    code = f"import sys; sys.stdin.read(); sys.stdout.buffer.write(open({str(tmp_path / 'reply.json')!r}, 'rb').read())"
    with pytest.raises(AgentProcessError) as by_command:
        asyncio.run(CommandAgent([sys.executable, "-S", "-c", code], name="printer", timeout_s=20).run(1))
    assert str(by_command.value).startswith(f"printer printed {wording} on stdout: ")

    with pytest.raises(AgentHttpError) as by_http:
        HttpAgent(serve(text), name="svc", timeout_s=10).run(1)
    assert str(by_http.value).startswith(f"svc: HTTP 200 response is not JSON ({wording}): ")


def test_the_digit_limit_is_read_in_one_place() -> None:
    readers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"get_int_max_str_digits|\b4300\b", path.read_text(encoding="utf-8"))
    )
    assert readers == ["strict_json.py"]
