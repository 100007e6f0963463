"""Bad pairs and broken agents at the command line: one line and exit 1, or the trial's own error.

- ``compare`` of two files with no task id in common is bad input, not a report of zero pairs.
- An agent output with no JSON form (a lock, an instance of a custom class) is that trial's error,
  naming the type, instead of a ``repr`` judged silently.
- Connection, time-out and 429/5xx errors of the common SDKs and HTTP clients are recognised by
  class hierarchy and status: fail-fast stops a broken arm (exit 1, one line) and the default
  retries retry them. The SDK hierarchies are mimicked in ``tests/helpers/sdk_agents.py``; the
  HTTP clients (httpx, requests, aiohttp, urllib) make real calls to a closed localhost port.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from helpers.cli_shared import run_here

from ablation.cli import main

AGENTS = "tests/helpers/sdk_agents.py"
N_TASKS = 12  # more than the default fail-fast K (10)


def _suite(tmp: Path) -> str:
    path = tmp / "suite.py"
    path.write_text(
        "from ablation import AblationTask\n"
        f"tasks = [AblationTask(task_id=f't{{n:03d}}', input_data={{'n': n}}, expected_output=3 * n)"
        f" for n in range({N_TASKS})]\n",
        encoding="utf-8",
    )
    return str(path)


def _run(tmp: Path, candidate: str, *extra: str, baseline: str = "answer") -> tuple[int, str, str]:
    """``ablation run`` of the candidate against the baseline, in this process (each run imports
    the agents' file afresh, so an agent's module state starts empty every time)."""
    # A port bound but not listening refuses every connection, and no other process can take it
    # while the socket is held (a port merely closed again could be reused by a parallel test).
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        args = ["run", _suite(tmp), "--baseline", f"{AGENTS}:{baseline}", "--candidate",
                f"{AGENTS}:{candidate}", "--no-store", "--no-progress", "--format", "json", *extra]
        done = run_here(args, {"CLOSED_PORT": str(closed.getsockname()[1])})
    return done.returncode, done.stdout, done.stderr


def test_compare_with_no_id_in_common_is_one_line_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text('{"id": "a", "passed": true}\n{"id": "b", "passed": false}\n')
    after.write_text('{"task": "a", "id": "x-1", "passed": true}\n{"task": "b", "id": "x-2", "passed": true}\n')
    code = main(["compare", str(before), str(after)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "no task id in common" in err
    assert str(before) in err and str(after) in err


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "type_name"), [
    ("lock_output", "_thread.lock"),
    ("custom_output", ".Answer"),  # module: the name the agent file was imported under
])  # fmt: skip
def test_an_output_without_a_json_form_is_the_trials_error(tmp_path: Path, agent: str, type_name: str) -> None:
    code, out, err = _run(tmp_path, agent)
    assert code == 2, err
    report = json.loads(out)
    assert report["candidate"]["errors"] == N_TASKS
    assert report["candidate"]["passes"] == 0
    text = json.dumps(report)
    assert f"{type_name}, which has no JSON form" in text and "UnrepresentableOutput" in text
    assert "object at 0x" not in text


@pytest.mark.slow
@pytest.mark.parametrize("agent", [
    "openai_connection_error", "internal_server_error", "httpx_down", "requests_down",
    "urllib_down", "aiohttp_down",
])  # fmt: skip
def test_a_down_service_is_a_broken_arm_one_line_exit_1(tmp_path: Path, agent: str) -> None:
    code, out, err = _run(tmp_path, agent)
    assert (code, out) == (1, ""), err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "candidate agent" in lines[0] and "is broken" in lines[0], err


@pytest.mark.slow
def test_a_permanent_status_is_not_a_broken_arm(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, "not_found")  # a 404 is an answer, not a service that is down
    assert code == 2, err
    assert json.loads(out)["candidate"]["errors"] == N_TASKS


@pytest.mark.slow
def test_the_default_retries_retry_an_sdk_connection_error(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, "flaky_connection", "--max-attempts", "2")
    assert code == 0, err
    report = json.loads(out)
    assert report["candidate"]["passes"] == N_TASKS and report["candidate"]["errors"] == 0
    assert report["candidate"]["retried"] == N_TASKS  # each task failed once, then answered
