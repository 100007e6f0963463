"""A tiny HTTP agent for ``tasks/arithmetic.py``, built on the standard library only.

Start it and give its URL to ablation as an agent::

    python agents/http_server.py --port 0          # prints http://127.0.0.1:PORT/
    ablation run tasks/arithmetic.py --baseline agents/arithmetic.py:baseline \\
        --candidate http://127.0.0.1:PORT/

Protocol (what :class:`ablation.agents.HttpAgent` speaks): ``POST`` a JSON body
``{"input": {"expression": "2 + 3 * 4"}}``, receive ``{"output": 14}``. A body that is not
valid JSON, or an input without an expression, gets HTTP 400 with ``{"error": "..."}``.
``GET /health`` answers ``{"status": "ok"}``. The expression is parsed with the usual operator
precedence and computed exactly with fractions; nothing is evaluated as code.

The first line on stdout is the URL (flushed at once), so a test or a script can start the
server with ``--port 0`` and read the port it got. The server stops on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["AgentHandler", "evaluate", "main", "make_server"]

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
_MAX_BODY = 1 << 20


def evaluate(expression: str) -> int | float:
    """Value of a space-separated ``+ - * /`` expression with the usual precedence.

    Args:
        expression: E.g. ``"2 + 3 * 4"``; numbers may be negative (``"-6 * -6"``).

    Returns:
        An ``int`` when the value is whole, else the nearest ``float``.

    Raises:
        ValueError: for a malformed expression or a division by zero.
    """
    values: list[Fraction] = []
    ops: list[str] = []

    def reduce() -> None:
        op = ops.pop()
        if len(values) < 2:
            raise ValueError("malformed expression")
        right, left = values.pop(), values.pop()
        if op == "+":
            values.append(left + right)
        elif op == "-":
            values.append(left - right)
        elif op == "*":
            values.append(left * right)
        elif right == 0:
            raise ValueError("division by zero")
        else:
            values.append(left / right)

    for token in expression.split():
        if token in _PRECEDENCE:
            while ops and _PRECEDENCE[ops[-1]] >= _PRECEDENCE[token]:
                reduce()
            ops.append(token)
        else:
            try:
                values.append(Fraction(int(token)))
            except ValueError:
                raise ValueError(f"not an integer: {token!r}") from None
    while ops:
        reduce()
    if len(values) != 1:
        raise ValueError("malformed expression")
    value = values[0]
    return int(value) if value.denominator == 1 else float(value)


class AgentHandler(BaseHTTPRequestHandler):
    """Answers ``POST {"input": {...}}`` with ``{"output": ...}``."""

    server_version = "ablation-example-agent/1.0"
    protocol_version = "HTTP/1.1"

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        """Health check on ``/health``; 404 elsewhere."""
        if self.path.rstrip("/") == "/health":
            self._send(200, {"status": "ok"})
        else:
            self._send(404, {"error": "POST a JSON body {\"input\": ...} to this server"})

    def do_POST(self) -> None:
        """Evaluate the expression of the posted input."""
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= _MAX_BODY:
            self._send(400, {"error": "a Content-Length up to 1 MiB is required"})
            return
        try:
            request = json.loads(self.rfile.read(length).decode("utf-8"))
            expression = request["input"]["expression"]
            if not isinstance(expression, str):
                raise TypeError("'expression' must be a string")
            output = evaluate(expression)
        except (ValueError, KeyError, TypeError) as exc:
            self._send(400, {"error": f"{type(exc).__name__}: {exc}"})
            return
        self._send(200, {"output": output})

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the console quiet (stdout carries only the URL)."""


def make_server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """Create (but do not start) the server; ``port=0`` picks a free port.

    Args:
        host: Interface to bind.
        port: Port to bind (0: any free port).

    Returns:
        The server; call ``serve_forever()`` to run it.
    """
    server = ThreadingHTTPServer((host, port), AgentHandler)
    server.daemon_threads = True
    return server


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGINT or SIGTERM.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``).

    Returns:
        The exit code (0).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port)
    print(f"http://{args.host}:{server.server_port}/", flush=True)

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
