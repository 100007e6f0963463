"""An HttpAgent call ends within ``timeout_s`` however slowly the server sends its status line or
headers, not only its body (a real local socket server trickling bytes, no mocks)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from ablation.agents.forms import AgentTimeoutError
from ablation.agents.http import HttpAgent


def _trickle(conn: socket.socket, head: bytes, lines: list[bytes], stop: threading.Event) -> None:
    with conn:
        try:
            conn.recv(65536)
            conn.sendall(head)
            for line in lines:
                if stop.wait(0.25):
                    return
                conn.sendall(line)
        except OSError:
            return


def _serve(head: bytes, lines: list[bytes]) -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_trickle, args=(conn, head, lines, stop), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        listener.close()


@pytest.fixture
def header_trickler() -> Iterator[str]:
    """A server sending one header line every 0.25 s for 10 s, then a 1-byte body."""
    yield from _serve(b"HTTP/1.1 200 OK\r\n", [b"X-A: b\r\n"] * 40 + [b"Content-Length: 1\r\n\r\n1"])


@pytest.fixture
def status_trickler() -> Iterator[str]:
    """A server sending its status line one byte every 0.25 s."""
    line = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"
    yield from _serve(b"", [line[i : i + 1] for i in range(len(line))])


@pytest.mark.parametrize("fixture", ["header_trickler", "status_trickler"])
def test_trickled_response_head_times_out_within_timeout_s(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(fixture)
    agent = HttpAgent(url, timeout_s=1)
    started = time.monotonic()
    with pytest.raises(AgentTimeoutError, match="timeout_s=1"):
        agent.run(1)
    assert time.monotonic() - started < 2.0
