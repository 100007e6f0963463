"""A reply starting with a UTF-8 byte-order mark is read, as suites and result files are.

RFC 8259 section 8.1: a JSON text sent over a network must not start with a byte-order mark, and
a parser may ignore one rather than treat it as an error. Tools on some systems write one (a
PowerShell script, a .NET service); the command and HTTP agents read such a reply as "not JSON",
while ablation's own readers accept the mark. The reference is Python's ``utf-8-sig`` codec.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator

import pytest
from helpers.raw_server import raw_servers, replying

from ablation.agents import CommandAgent, HttpAgent

BOM = b"\xef\xbb\xbf"
REPLY = b'"ok"'


def test_the_reference_codec_drops_the_mark() -> None:
    assert (BOM + REPLY).decode("utf-8-sig") == REPLY.decode()


def test_a_command_reply() -> None:
    code = f"import sys; sys.stdin.read(); sys.stdout.buffer.write({BOM + REPLY!r})"
    assert asyncio.run(CommandAgent([sys.executable, "-S", "-c", code]).run("task")) == "ok"


def _answer(content_type: bytes) -> bytes:
    body = BOM + REPLY
    return (b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)  # fmt: skip


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    with raw_servers(monkeypatch) as start:
        yield lambda content_type: start(replying(_answer(content_type)))


@pytest.mark.parametrize("content_type", [b"application/json", b"application/json; charset=utf-8",
                                          b"application/json; charset=UTF8"])  # fmt: skip
def test_an_http_reply(serve: Callable[[bytes], str], content_type: bytes) -> None:
    assert HttpAgent(serve(content_type), timeout_s=10).run("task") == "ok"
