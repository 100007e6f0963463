"""A local TCP server (127.0.0.1, no network) that hands each connection to a function: for
HTTP answers no well-behaved server library would send (a cut body, two Content-Length lines,
an answer before the request is read)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import pytest


@contextmanager
def raw_server(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """Run ``handle(conn)`` on a thread of its own for every connection; yields
    ``http://127.0.0.1:PORT/``. The listener is closed on exit (a handler still running ends
    with its connection)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        listener.close()


@contextmanager
def raw_servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """A factory for a fixture: ``start(handle)`` is the URL of a new :func:`raw_server`, all
    closed on exit; no proxy is asked for ``127.0.0.1``."""
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(var, "*")
    with ExitStack() as stack:
        yield lambda handle: stack.enter_context(raw_server(handle))


def read_request(conn: socket.socket, *, body: bool = True) -> None:
    """Read the request's headers and, with ``body``, the body its Content-Length declares: a
    socket closed with unread bytes sends a reset, which the client may see before the answer."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    declared = [line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    need = int(declared[0]) if declared and body else 0
    while len(rest) < need and (chunk := conn.recv(65536)):
        rest += chunk


def replying(response: bytes, *, body: bool = True, linger: bool = False) -> Callable[[socket.socket], None]:
    """A handler for :func:`raw_server`: read the request (its headers only without ``body``),
    send ``response`` and close; with ``linger``, half-close first and wait for the client to
    close its end (the client reads every byte sent before it sees the end)."""

    def handle(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                read_request(conn, body=body)
                conn.sendall(response)
                if linger:
                    conn.shutdown(socket.SHUT_WR)
                    conn.recv(1)
            except OSError:
                return

    return handle
