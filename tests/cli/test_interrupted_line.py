"""The one line an interrupted ``ablation run`` prints says what was kept.

``--no-store`` keeps nothing, so "finished trials are saved" was false (a real SIGINT to a real
process here). A campaign the store already holds as complete was stopped while its report was
built: the line says every trial ran, and the resume command still writes the report.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sqlite3
import sys
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from helpers import cli
from helpers.cli_shared import run_here
from helpers.procs import processes_with_arg

from ablation.cli.resume_hint import interrupted_line
from ablation.run.campaign import CampaignRun

_WAITER = "import json, sys, time\nx = json.load(sys.stdin)\ntime.sleep(600)\nprint(json.dumps(3 * x['n']))\n"


@pytest.mark.slow
def test_ctrl_c_without_a_store_says_nothing_was_kept(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    script = tmp_path / "waiter.py"
    script.write_text(_WAITER, encoding="utf-8")
    agent = "cmd:" + shlex.join([sys.executable, str(script), tag])
    args = ["run", "tests/helpers/slow_suite.py", "--baseline", "tests/helpers/hostile_agents.py:ok",
            "--candidate", agent, "--no-store", "--concurrency", "2", "--no-progress"]  # fmt: skip
    proc = cli.start(args, cli.cli_env(SLOW_SUITE_TASKS="4"),
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    _, err = cli.interrupt(proc, when=lambda: len(processes_with_arg(tag.encode())) >= 2)
    assert proc.returncode == 1
    [line] = err.strip().splitlines()
    assert line == "ablation: interrupted; nothing was stored (--no-store), so the finished trials are lost"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one complete campaign of the arithmetic example."""
    store = tmp_path_factory.mktemp("store") / "runs.db"
    proc = run_here(["run", "tasks/arithmetic.py", "--baseline", "agents/arithmetic.py:baseline",
                     "--candidate", "agents/arithmetic.py:candidate", "--store", str(store),
                     "--no-progress", "-q", "--resamples", "200"])  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    [(campaign_id, status, _)] = cli.campaigns(store)
    assert status == "complete"
    return store, campaign_id


def _line(store: Path, campaign_id: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys, "argv", ["ablation", "run", "s.py", "--candidate", "a.py:c"])
    args = argparse.Namespace(candidate=["a.py:c"])
    return interrupted_line(args, 0, store, CampaignRun(campaign_id=campaign_id), no_store=False)


def test_a_complete_campaign_stopped_while_reporting_says_every_trial_ran(
    stored: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, campaign_id = stored
    line = _line(store, campaign_id, monkeypatch)
    assert line.startswith(f"ablation: interrupted; campaign {campaign_id} had run every trial and its report")
    assert line.endswith(f"Resume with: ablation run s.py --candidate a.py:c --store {store} --resume {campaign_id}")


def test_an_interrupted_campaign_says_its_finished_trials_are_saved(
    stored: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store, campaign_id = stored
    copy = tmp_path / "runs.db"
    with closing(sqlite3.connect(store)) as source, closing(sqlite3.connect(copy)) as target:
        source.backup(target)
        target.execute("UPDATE campaigns SET status = 'interrupted'")
        target.commit()
    assert _line(copy, campaign_id, monkeypatch).startswith("ablation: interrupted; finished trials are saved. Resume")


def test_the_resume_hint_shows_no_url_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint repeated the command line as typed, so an HTTP agent's password given in its URL
    (sent as Basic credentials) went to stderr and the CI log; it now shows them as the agent's
    name does, and says to type them again."""
    argv = ["run", "s.jsonl", "--baseline", "http://alice:s3cret@127.0.0.1:9/b",
            "--candidate=https://TOKEN123@example.test/c"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", ["ablation", *argv])
    args = argparse.Namespace(candidate=["https://TOKEN123@example.test/c"])
    info = argparse.Namespace(campaign_id="20261207-1")
    line = interrupted_line(args, 0, tmp_path / "runs.db", info, False)
    assert "s3cret" not in line and "TOKEN123" not in line, line
    command = line.split("Resume with: ", 1)[1].split(" (type the credentials", 1)[0]
    words = shlex.split(command)
    assert words[:5] == ["ablation", "run", "s.jsonl", "--baseline", "http://alice:***@127.0.0.1:9/b"]
    assert words[5] == "--candidate=https://***@example.test/c"
    assert line.endswith("(type the credentials shown as *** again)")
