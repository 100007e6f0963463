"""An ``http:`` agent's URL with ``user:password@`` authenticates, and the password is kept out
of everything ablation writes. Such a URL used to be sent to urllib as it was: every call failed
with "Name or service not known" (the credentials read as part of the host), and the password
was in the agent's name, its error messages, the report and the run store (a real server that
answers only HTTP Basic credentials, no mocks)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

USER, PASSWORD = "bot@ci", "s3cret:pw"
QUOTED = "bot%40ci:s3cret%3Apw"


class _Guarded(BaseHTTPRequestHandler):
    """Echoes the input to a request with the expected Basic credentials; 401 to any other."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        ok = self.headers.get("Authorization") == expected
        reply = json.dumps({"output": json.loads(body)["input"]} if ok else {"error": "who?"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Guarded)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


def test_url_credentials_authenticate_and_are_never_written(port: int, tmp_path: Path) -> None:
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"task_id": f"t{i}", "input_data": i, "expected_output": i}) + "\n" for i in range(3)))
    url = f"http://{QUOTED}@127.0.0.1:{port}/"
    store = tmp_path / "runs.db"
    done = run_here(["run", str(suite), "--baseline", url, "--candidate", url + "v2", "--format", "json", "--store", str(store)])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["table"]["both_pass"] == 3
    assert report["candidate"]["agent"] == f"http://bot%40ci:***@127.0.0.1:{port}/v2"
    written = done.stdout + done.stderr + b"".join(p.read_bytes() for p in tmp_path.glob("runs.db*")).decode("latin-1")
    assert "s3cret" not in written


def test_a_token_alone_is_hidden_and_a_given_authorization_wins() -> None:
    from ablation.agents.http import HttpAgent

    agent = HttpAgent("https://ghp_T0KEN@example.test/run")
    assert (agent.url, agent.name) == ("https://example.test/run", "https://***@example.test/run")
    assert agent.headers == {"Authorization": "Basic " + base64.b64encode(b"ghp_T0KEN:").decode()}
    given = HttpAgent("https://u:p@example.test/", headers={"authorization": "Bearer x"})
    assert given.headers == {"authorization": "Bearer x"}
