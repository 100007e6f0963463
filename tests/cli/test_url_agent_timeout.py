"""An agent given to ``ablation run`` as a URL waits for its answer as long as ``--timeout`` says.

:class:`~ablation.agents.HttpAgent` has a time limit of its own (30 s unless told), and the CLI
built the agent of an ``http(s)://`` spec without telling it the campaign's ``--timeout``: a
server that answered in 45 s under ``--timeout 300`` (the default) gave every trial
``AgentTimeoutError ... timeout_s=30``. Here the agent's own default is made short (0.3 s) so that
the test needs no 30 s wait, and a real local server answers in 0.8 s: with ``--timeout 5`` the
trials complete; with ``--timeout 0.5`` they time out, at the campaign's limit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_shared import run_here
from helpers.json_server import json_server

from ablation.agents import http as http_agent
from ablation.sources import agent_specs


def _slowly(task: dict[str, Any]) -> Any:
    time.sleep(0.8)
    return task.get("input")


@pytest.fixture
def slow_url() -> Iterator[str]:
    with json_server(_slowly) as url:
        yield url + "/"


@pytest.fixture
def short_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's own default limit, 0.3 s instead of 30 s."""

    class ShortDefault(http_agent.HttpAgent):
        def __init__(self, url: str, **options: Any) -> None:
            super().__init__(url, **{"timeout_s": 0.3, **options})

    monkeypatch.setattr(agent_specs, "HttpAgent", ShortDefault)


def _run(tmp_path: Path, url: str, timeout: str) -> tuple[list[dict[str, Any]], str]:
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"task_id": f"t{i}", "input_data": i, "expected_output": i}) + "\n"
                             for i in range(2)))  # fmt: skip
    out = tmp_path / f"report-{timeout}.json"
    done = run_here(["run", str(suite), "--baseline", url, "--candidate", url, "--timeout", timeout, "--no-store",
              "--no-progress", "--format", "json", "-o", str(out)], cwd=tmp_path)  # fmt: skip
    assert out.exists(), done.stderr  # a run whose every trial failed alike stops with no report
    report = json.loads(out.read_text())
    return [report["baseline"], report["candidate"]], done.stderr


@pytest.mark.usefixtures("short_default")
def test_the_trials_wait_for_the_campaigns_timeout(tmp_path: Path, slow_url: str) -> None:
    arms, _ = _run(tmp_path, slow_url, "5")
    assert [(a["errors"], a["timeouts"], a["passes"]) for a in arms] == [(0, 0, 2), (0, 0, 2)]


@pytest.mark.usefixtures("short_default")
def test_a_shorter_timeout_still_cuts_them(tmp_path: Path, slow_url: str) -> None:
    arms, _ = _run(tmp_path, slow_url, "0.5")
    assert [a["passes"] for a in arms] == [0, 0]
    assert all(a["errors"] + a["timeouts"] == 2 for a in arms)
