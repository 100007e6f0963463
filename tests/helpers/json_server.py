"""A local HTTP server (127.0.0.1, no network) that answers POSTs with JSON, for SDK clients
and ablation's own HTTP agent."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class Reply(NamedTuple):
    """An answer other than ``200`` with a JSON body: its status, body and extra headers
    (``(name, value)`` pairs)."""

    status: int
    body: Any
    headers: tuple[tuple[str, str], ...] = ()


@contextmanager
def json_server(answer: Callable[[Any], Any]) -> Iterator[str]:
    """Serve ``answer(request body) -> reply body`` (or a :class:`Reply`) for every POST; yields
    ``http://127.0.0.1:PORT``. ``answer`` runs on the server's thread for each request."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep the test output clean
            return None

        def do_POST(self) -> None:
            got = answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            reply = got if isinstance(got, Reply) else Reply(200, got)
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            for name, value in (("Content-Type", "application/json"), *reply.headers):
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
