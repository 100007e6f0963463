"""What an agent returns cannot exhaust memory, fail a store write or block a resume.

End to end through the command line, with the peak RSS of the ``ablation`` process itself
(``helpers/rss.py``): a Python agent returning or raising with 64 MiB of text, and an HTTP agent
whose server answers 64 MiB (declared, chunked, or as the body of a 500), against the default
8 MiB cap. Each costs one trial, recorded with its reason, and the process holds at most the agent's
own allocation on top of a small campaign's. The HTTP agent is also driven directly: a body past
the cap closes the connection at once, and a server trickling bytes cannot hold the call past its
``timeout_s``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from helpers.cli import cli_env
from helpers.rss import run_measured

from ablation.agents import AgentHttpError, AgentTimeoutError, HttpAgent

#: One worker runs the module: the small campaign of ``small_peak`` is measured once.
pytestmark = pytest.mark.xdist_group("faults-output-caps")

MIB = 1024 * 1024
BIG = 64 * MIB
_BLOCK = b"z" * (64 * 1024)

_AGENTS = f'''
def ok(x):
    return 3 * x["n"]


def big_both(x):
    if x["n"] == 1:
        return "x" * {BIG}
    if x["n"] == 2:
        raise ValueError("y" * {BIG})
    return 3 * x["n"]
'''


class _Server(BaseHTTPRequestHandler):
    """``/ok`` answers ``3 * n``; for ``n == 1`` the other paths misbehave with 64 MiB, and
    ``/each`` misbehaves as ``/declared`` for ``n == 1``, ``/chunked`` for 2 and ``/error`` for 3."""

    closed_at: ClassVar[list[float]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        n = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]["n"]
        path = self.path if n == 1 else "/ok"
        if self.path == "/each":
            path = {1: "/declared", 2: "/chunked", 3: "/error"}.get(n, "/ok")
        if path == "/ok":
            body = json.dumps(3 * n).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self._send_slowly(b"1", 0.2, 1000)
            return
        chunked = path in ("/chunked", "/endless")
        self.send_response(500 if path == "/error" else 200)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(BIG))
        self.end_headers()
        if path == "/endless":
            self._send_slowly(b"%x\r\n%s\r\n" % (len(_BLOCK), _BLOCK), 0.005, 10**9)
            return
        for _ in range(BIG // len(_BLOCK)):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(_BLOCK), _BLOCK) if chunked else _BLOCK)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _send_slowly(self, piece: bytes, pause: float, times: int) -> None:
        try:
            for _ in range(times):
                self.wfile.write(piece)
                self.wfile.flush()
                time.sleep(pause)
        except OSError:  # the client closed the connection
            _Server.closed_at.append(time.monotonic())


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def _campaign(tmp_path: Path, baseline: str, candidate: str, name: str, *extra: str):
    store = tmp_path / f"{name}.db"
    measured = run_measured(
        ["run", "tests/helpers/slow_suite.py", "--baseline", baseline, "--candidate", candidate,
         "--store", str(store), "--no-progress", "--format", "json", *extra],
        cli_env(SLOW_SUITE_TASKS="4"),
    )  # fmt: skip
    assert measured.returncode in (0, 2), measured.stderr
    assert json.loads(measured.stdout)["n_paired"] == 4
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "select task_id, arm, result_json from trials order by task_id, arm"
        ).fetchall()
    assert len(rows) == 8  # every trial stored, the faulty one with its reason
    trials = {(t, a): json.loads(r) for t, a, r in rows}
    return measured, trials


@pytest.fixture(scope="module")
def small_peak(tmp_path_factory: pytest.TempPathFactory) -> float:
    """Peak RSS in MiB of the same small campaign where nothing is large."""
    tmp = tmp_path_factory.mktemp("small")
    agents = tmp / "agents.py"
    agents.write_text(_AGENTS)
    measured, _ = _campaign(tmp, f"{agents}:ok", f"{agents}:ok", "small")
    return measured.peak_mib


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_python_agent_output_and_error_are_capped(
    tmp_path: Path, small_peak: float, isolation: str
) -> None:
    """Under process isolation the worker applies the cap before anything crosses the pipe.

    One campaign a mode: the candidate returns 64 MiB on task 1 and raises with 64 MiB on task 2,
    one trial at a time (``--concurrency 1``), so the peak is that of the larger of the two."""
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    measured, trials = _campaign(
        tmp_path, f"{agents}:ok", f"{agents}:big_both", "big_both", "--isolation", isolation,
        "--concurrency", "1",
    )  # fmt: skip
    output, error = trials["t001", "candidate"], trials["t002", "candidate"]
    assert output["status"] == error["status"] == "error"
    assert output["error_type"] == "OutputTooLarge"
    assert "max_output_bytes=8388608" in output["error_message"]
    assert output["output"] is None
    assert error["error_type"] == "ValueError"
    assert len(error["error_message"]) < 70_000
    assert len(error["error_traceback"]) < 70_000
    assert "more characters cut" in error["error_message"]
    # The agent's own 64 MiB string plus at most 48 MiB of copies (the old code held 4 to 12
    # copies), in the run or in its worker (the children's ru_maxrss covers their children).
    assert measured.peak_mib < small_peak + 64 + 48, (measured.peak_mib, small_peak)


@pytest.mark.slow
def test_http_bodies_are_read_up_to_the_cap(tmp_path: Path, server: str, small_peak: float) -> None:
    """One campaign, one call at a time: task 1's body declares 64 MiB, task 2's is 64 MiB
    chunked, task 3's is the 64 MiB body of a 500."""
    measured, trials = _campaign(
        tmp_path, f"{server}/ok", f"{server}/each", "each", "--concurrency", "1"
    )
    for task, path in (("t001", "/declared"), ("t002", "/chunked"), ("t003", "/error")):
        trial = trials[task, "candidate"]
        assert trial["status"] == "error", path
        if path == "/error":
            assert trial["error_type"] == "AgentConnectionError"
            assert "HTTP 500" in trial["error_message"]
        else:
            assert trial["error_type"] == "AgentHttpError", path
            assert "max_output_bytes=8388608" in trial["error_message"], path
        assert len(trial["error_message"]) < 1000, path
    # Nothing near the 64 MiB body is held (the old code read it whole, and decoded it).
    assert measured.peak_mib < small_peak + 32, (measured.peak_mib, small_peak)


def _call(agent: HttpAgent) -> tuple[BaseException | None, float]:
    """Run one call in a thread (a hang must not hang the test); its error and duration."""
    box: list[BaseException | None] = []
    began = time.monotonic()

    def target() -> None:
        try:
            agent.run({"n": 1})
            box.append(None)
        except BaseException as exc:
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(20)
    assert box, "the call did not end"
    return box[0], time.monotonic() - began


def test_an_endless_download_stops_at_the_cap_and_closes(server: str) -> None:
    _Server.closed_at.clear()
    exc, _ = _call(HttpAgent(f"{server}/endless", max_output_bytes=MIB))
    assert isinstance(exc, AgentHttpError), exc
    assert "max_output_bytes=1048576" in str(exc)
    deadline = time.monotonic() + 5
    while not _Server.closed_at and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _Server.closed_at, "the server kept sending: the connection was not closed"


def test_a_trickling_server_cannot_hold_the_call_past_its_timeout(server: str) -> None:
    # a byte every 0.2 s: each read is quick, only a deadline on the whole call can end it
    exc, took = _call(HttpAgent(f"{server}/trickle", timeout_s=0.5))
    assert isinstance(exc, AgentTimeoutError), exc
    assert took < 3.0
