"""An ``http:`` agent that never answers is a timeout of its trial, every time, under ``ablation
run``: the URL's own limit is the trial's ``--timeout``, and the agent's socket timeout, which
can reach the engine before the loop runs the trial's expiry, is the trial overrunning its
deadline, not an agent error (a real listening socket that never accepts, no mocks)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import run_here

TASKS = 24


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A server whose connections are queued by the kernel and never answered."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=4 * TASKS)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        listener.close()


def test_a_silent_http_agent_times_out_every_trial(silent_url: str, tmp_path: Path) -> None:
    suite = tmp_path / "suite.jsonl"
    suite.write_text(
        "".join(json.dumps({"task_id": f"t{i}", "input_data": i, "expected_output": i}) + "\n" for i in range(TASKS))
    )
    done = run_here([
        "run", str(suite), "--baseline", silent_url, "--candidate", silent_url, "--timeout", "0.1",
        "--concurrency", "8", "--fail-fast", "0", "--format", "json", "--store", str(tmp_path / "runs.db"),
    ])  # fmt: skip
    assert done.returncode == 2, done.stderr
    groups = json.loads(done.stdout)["errors"]["groups"]
    got = {(g["arm"], g["stage"], g["error_type"], g["count"]) for g in groups}
    assert got == {("baseline", "timeout", "Timeout", TASKS), ("candidate", "timeout", "Timeout", TASKS)}
