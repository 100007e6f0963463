"""End to end: agents that exit, interrupt, hang or block the loop cost one trial, not the campaign.

Issue 11 items 1, 3 and 5. Each test runs the real command line on a 4-task suite where the
hostile candidate misbehaves on task ``t001`` only: in a subprocess where the process is the point
(the exit code ``sys.exit(3)`` leaves, a hang or a blocked loop that must not hold the exit), in
this process (``helpers.cli.run_here``) where only the stored trials and the reports are checked.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from helpers.cli import cli_env, run, run_here

AGENTS = "tests/helpers/hostile_agents.py"
ENV = {"SLOW_SUITE_TASKS": "4", "SLOW_AGENTS_SCALE": "0"}


def _run(tmp_path: Path, candidate: str, *extra: str, timeout: float = 60, here: bool = False):
    return _run_with(tmp_path, f"{AGENTS}:{candidate}", *extra, timeout=timeout, here=here)


def _run_with(tmp_path: Path, candidate: str, *extra: str, timeout: float = 60, here: bool = False):
    """The campaign's finished command and its duration; ``here``: in this process, where a
    ``BaseException`` that escapes the command fails the test instead of ending the test run."""
    args = [
        "run", "tests/helpers/slow_suite.py", "--baseline", f"{AGENTS}:ok",
        "--candidate", candidate, "--format", "json", "--no-progress",
        "--store", str(tmp_path / "runs.db"), *extra,
    ]
    start = time.monotonic()
    if here:
        try:
            proc = run_here(args, {**ENV, "SLOW_SUITE_CHANGE": None})
        except BaseException as exc:  # SystemExit, KeyboardInterrupt... escaped the command
            raise AssertionError(f"{type(exc).__name__} escaped the command: {exc!r}") from exc
    else:
        proc = run(args, cli_env(**ENV), timeout=timeout)
    return proc, time.monotonic() - start


def _trials(store: Path) -> dict[tuple[str, str], tuple[str, int, str | None]]:
    """``(task_id, arm) -> (status, passed, error_type)`` of every stored trial."""
    with sqlite3.connect(store) as db:
        rows = db.execute("select task_id, arm, status, passed, error_type from trials")
        return {(t, a): (s, p, e) for t, a, s, p, e in rows}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "error_type", "here"),
    [
        ("exit0", "SystemExit", True),
        ("exit3", "SystemExit", False),  # a process: its exit code is ablation's, not the 3
        ("ctrl_c", "KeyboardInterrupt", True),
        ("custom_base", "CustomBase", True),
        ("generator_exit", "GeneratorExit", True),
    ],
)
def test_base_exceptions_are_the_trials_error(
    tmp_path: Path, agent: str, error_type: str, here: bool
) -> None:
    """Item 1: ``sys.exit``/``KeyboardInterrupt``/``BaseException`` are recorded, exit code ours."""
    proc, _ = _run(tmp_path, agent, here=here)
    assert proc.returncode in (0, 2), proc.stderr
    json.loads(proc.stdout)
    trials = _trials(tmp_path / "runs.db")
    assert len(trials) == 8
    assert trials["t001", "candidate"] == ("error", 0, error_type)
    assert trials["t002", "candidate"] == ("completed", 1, None)


@pytest.mark.slow
def test_hung_sync_agent_does_not_hold_the_exit(tmp_path: Path) -> None:
    """Item 3: a sync agent sleeping forever is a timeout and the process exits promptly."""
    proc, elapsed = _run(tmp_path, "hang", "--timeout", "1", timeout=45)
    assert proc.returncode in (0, 2), proc.stderr
    json.loads(proc.stdout)
    assert _trials(tmp_path / "runs.db")["t001", "candidate"][0] == "timeout"
    assert elapsed < 30


@pytest.mark.slow
def test_async_busy_loop_stops_the_campaign(tmp_path: Path) -> None:
    """Item 5: an async agent that never awaits stops the run: one line, exit 1, interrupted."""
    proc, elapsed = _run(tmp_path, "busy", "--timeout", "1", timeout=45)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "hostile_agents.py:busy" in lines[0] and "'t001'" in lines[0]
    assert "blocked the event loop" in lines[0]
    with sqlite3.connect(tmp_path / "runs.db") as db:
        assert db.execute("select status from campaigns").fetchall() == [("interrupted",)]
    assert elapsed < 30


@pytest.mark.slow
def test_flooding_command_agent_is_capped(tmp_path: Path) -> None:
    """Item 4: ``exec yes`` as a command agent is killed at the output cap; the run finishes."""
    proc, elapsed = _run_with(tmp_path, "cmd:tests/helpers/yes_agent.sh", "--timeout", "3", here=True)
    assert proc.returncode in (0, 2), proc.stderr
    trials = _trials(tmp_path / "runs.db")
    assert {trials[f"t00{n}", "candidate"] for n in range(4)} == {
        ("error", 0, "AgentProcessError")
    }
    assert "Traceback" not in proc.stderr
    assert elapsed < 30


@pytest.mark.slow
@pytest.mark.parametrize(
    "candidate", ["cmd:tests/helpers/surrogate_agent.sh", f"{AGENTS}:surrogate"]
)
def test_lone_surrogates_are_stored_escaped(tmp_path: Path, candidate: str) -> None:
    """Item 6: an output holding ``"\\ud800"`` is stored and exported, escaped visibly."""
    proc, _ = _run_with(tmp_path, candidate, here=True)
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_paired"] == 4
    with sqlite3.connect(tmp_path / "runs.db") as db:
        (stored,) = db.execute(
            "select result_json from trials where task_id = 't001' and arm = 'candidate'"
        ).fetchone()
    assert json.loads(stored)["output"] == "bad \\ud800 text"


@pytest.mark.slow
def test_unrepresentable_output_is_the_trials_error(tmp_path: Path) -> None:
    """An output whose ``__repr__`` raises is that trial's error, not the campaign's (an object of
    a custom class has no JSON form, so its ``repr`` is never taken)."""
    proc, _ = _run(tmp_path, "bad_repr", here=True)
    assert proc.returncode in (0, 2), proc.stderr
    trials = _trials(tmp_path / "runs.db")
    assert len(trials) == 8
    assert trials["t001", "candidate"] == ("error", 0, "UnrepresentableOutput")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_control_characters_are_escaped_in_reports(tmp_path: Path, fmt: str) -> None:
    """Item 9: ESC, OSC 8, BEL, RLO and NUL in an output never reach Markdown or HTML raw."""
    out = tmp_path / f"report.{fmt}"
    proc, _ = _run(tmp_path, "escapes", "--format", fmt, "--details", "--output", str(out), here=True)
    assert proc.returncode in (0, 2), proc.stderr
    text = out.read_text(encoding="utf-8")
    assert "ALL TESTS PASSED" in text  # the output is shown...
    for raw in ("\x1b", "\x07", "\x00", "\u202e"):  # ...with its control characters escaped
        assert raw not in text
    assert "\\x1b" in text
