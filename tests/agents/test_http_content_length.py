"""An HttpAgent reads a Content-Length header as ASCII digits only (RFC 9110 section 8.6).

A value such as ``"²"`` is a digit to :meth:`str.isdigit`, but :class:`int` refuses it: it was a
``ValueError`` traceback out of the call. A Content-Length that is not a length is now the call's
:class:`~ablation.agents.forms.AgentHttpError`, which the engine records as the trial's error; a
list of one length repeated is that length. A real local socket server sends the raw bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from helpers.raw_server import raw_servers, replying

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.agents.forms import AgentHttpError
from ablation.agents.http import HttpAgent

BODY = b'{"output": 7}'


def _answer(length: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + length + b"\r\nConnection: close\r\n\r\n" + BODY)  # fmt: skip


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    """A factory: ``serve(length)`` is the URL of a server declaring Content-Length ``length``
    (raw bytes, read by http.client as Latin-1: ``b"\\xb2"`` is ``"²"``)."""
    with raw_servers(monkeypatch) as start:
        yield lambda length: start(replying(_answer(length)))


@pytest.mark.parametrize("length", [b"\xb2", b"\xb9\xb3", b"1\xb2", b"-13", b"", b"13, 14", b"0x0d"])
def test_a_content_length_that_is_not_a_length_is_the_calls_error(serve: Callable[[bytes], str], length: bytes) -> None:
    with pytest.raises(AgentHttpError, match="bad Content-Length") as caught:
        HttpAgent(serve(length), name="svc").run(1)
    assert caught.value.status == 200 and str(caught.value).startswith("svc: HTTP 200")


@pytest.mark.parametrize("length", [b"13", b" 13 ", b"13, 13"])
def test_an_ascii_length_is_read(serve: Callable[[bytes], str], length: bytes) -> None:
    assert HttpAgent(serve(length)).run(1).output == 7


def test_the_engine_records_it_as_the_trials_error(serve: Callable[[bytes], str]) -> None:
    agent = HttpAgent(serve(b"\xb2"), name="svc")
    tasks = [AblationTask(task_id="t0", input_data=1, expected_output=7)]
    results = AblationEngine(CampaignConfig(concurrency=1)).run(agent, agent, tasks)
    assert len(results) == 2
    for r in results:
        assert r.status == "error" and r.passed is False
        assert r.error is not None and "bad Content-Length: '²'" in r.error
