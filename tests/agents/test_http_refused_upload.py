"""A server that answers before reading the whole request: the answer is the call's outcome.

A server refusing a large input answers (413 Payload Too Large, say) and closes without reading
the rest of the request. Sending the rest then fails (a broken pipe or a reset); that used to be
the call's ``AgentConnectionError`` ("cannot connect", retried as transient) and the server's
answer was never read. It is now read: a 413 is the call's :class:`AgentHttpError` with that
status (not retried), and a server that closed with no answer is a dropped connection. A real
local socket server reads the request's headers only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from helpers.raw_server import raw_servers, replying

from ablation.agents import AgentConnectionError, AgentHttpError, HttpAgent
from ablation.run.transient import is_transient

#: Far more than the socket buffers of both ends hold, so the client is still sending.
LARGE = "x" * (16 << 20)


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    """``serve(answer)``: the URL of a server that reads the headers, sends ``answer`` and closes."""
    with raw_servers(monkeypatch) as start:
        yield lambda answer: start(replying(answer, body=False))


REFUSAL = b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!"


def test_a_refusal_sent_before_the_input_was_read_is_the_calls_error(serve: Callable[[bytes], str]) -> None:
    with pytest.raises(AgentHttpError, match="HTTP 413 Payload Too Large: 'too big!'") as caught:
        HttpAgent(serve(REFUSAL), name="svc", timeout_s=10).run(LARGE)
    assert caught.value.status == 413 and not is_transient(caught.value)


def test_a_small_input_gets_the_same_answer(serve: Callable[[bytes], str]) -> None:
    with pytest.raises(AgentHttpError, match="HTTP 413") as caught:
        HttpAgent(serve(REFUSAL), name="svc", timeout_s=10).run("x")
    assert caught.value.status == 413


def test_a_server_that_closed_without_an_answer_dropped_the_connection(serve: Callable[[bytes], str]) -> None:
    with pytest.raises(AgentConnectionError) as caught:
        HttpAgent(serve(b""), name="svc", timeout_s=10).run(LARGE)
    assert "cannot connect" not in str(caught.value) and str(caught.value).startswith("svc: connection failed")
