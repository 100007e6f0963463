"""An HttpAgent reads a Content-Length header as ASCII digits only (RFC 9110 section 8.6).

A value such as ``"²"`` is a digit to :meth:`str.isdigit`, but :class:`int` refuses it: it was a
``ValueError`` traceback out of the call. A Content-Length that is not a length is now the call's
:class:`~ablation.agents.forms.AgentHttpError`, which the engine records as the trial's error; a
list of one length repeated is that length. A real local socket server sends the raw bytes.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.agents.forms import AgentHttpError
from ablation.agents.http import HttpAgent

BODY = b'{"output": 7}'


def _request(conn: socket.socket) -> None:
    """Read the whole request (headers, then the body its Content-Length declares): a socket
    closed with unread bytes sends a reset, which the client may see before the response."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    declared = [line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    need = int(declared[0]) if declared else 0
    while len(body) < need and (chunk := conn.recv(65536)):
        body += chunk


def _answer(conn: socket.socket, length: bytes) -> None:
    with conn:
        conn.settimeout(5)
        try:
            _request(conn)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + length + b"\r\nConnection: close\r\n\r\n" + BODY)  # fmt: skip
        except OSError:
            return


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], str]]:
    """A factory: ``serve(length)`` is the URL of a server declaring Content-Length ``length``
    (raw bytes, read by http.client as Latin-1: ``b"\\xb2"`` is ``"²"``)."""
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(var, "*")
    listeners: list[socket.socket] = []

    def start(length: bytes) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)

        def accept() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                threading.Thread(target=_answer, args=(conn, length), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/"

    yield start
    for listener in listeners:
        listener.close()


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
