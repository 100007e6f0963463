"""End to end: the run store's access rules (issue 11 items 13 and 14)."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, REPO, cli_env, run_here

AGENTS = "tests/helpers/hostile_agents.py"


def _campaign(store: Path) -> None:
    """A finished 4-task campaign in ``store``, run in this process."""
    args = [
        "run", "tests/helpers/slow_suite.py", "--baseline", f"{AGENTS}:ok",
        "--candidate", f"{AGENTS}:exit3", "--format", "json", "--no-progress",
        "--store", str(store),
    ]
    proc = run_here(args, {"SLOW_SUITE_TASKS": "4", "SLOW_AGENTS_SCALE": "0"})
    assert proc.returncode in (0, 2), proc.stderr


@pytest.mark.slow
def test_report_on_a_read_only_store(tmp_path: Path) -> None:
    """Item 14: ``ablation report`` works on a store in a read-only file system.

    File modes do not bind root, so the directory is bind-mounted read-only in a private mount
    namespace (``unshare -m``; a user that is not root first maps itself to root in a new user
    namespace, ``-r``, which may mount there).
    """
    folder = tmp_path / "ro"
    folder.mkdir()
    _campaign(folder / "runs.db")
    report = shlex.join(
        [sys.executable, "-c", LAUNCH, "report", "--store", str(folder / "runs.db"),
         "--format", "json"]
    )
    script = (
        f"mount --bind {shlex.quote(str(folder))} {shlex.quote(str(folder))} && "
        f"mount -o remount,bind,ro {shlex.quote(str(folder))} && {report}"
    )
    proc = subprocess.run(
        ["unshare", *([] if os.getuid() == 0 else ["-r"]), "-m", "sh", "-c", script], cwd=REPO, env=cli_env(),
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode in (0, 2), proc.stderr
    assert json.loads(proc.stdout)["n_paired"] == 4


@pytest.mark.slow
def test_one_resumer_at_a_time(tmp_path: Path) -> None:
    """Item 13: while one ``--resume`` runs, a second exits 1 naming the holder's pid.

    The campaign to resume holds the rows a ``kill -9`` leaves (not its stale lock file), made in
    this process: a run (agents without their sleeps), then its status set back to ``running``
    and all but 10 of its trials deleted. The resumer is a process of its own (agents sleeping 20-50 ms, one at a time), so
    it holds the campaign's lock while the second one starts."""
    from helpers.cli import kill, run_args, start, stored_trials, wait_until

    store = tmp_path / "runs.db"
    args = run_args(store, extra=["--concurrency", "1"])
    done = run_here(args, {"SLOW_SUITE_TASKS": "200", "SLOW_AGENTS_SCALE": "0"})
    assert done.returncode in (0, 2), done.stderr
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM trials WHERE task_id >= 't005'")
        db.execute("UPDATE campaigns SET status = 'running'")
    db.close()
    assert stored_trials(store) == 10
    resumer = start([*args, "--resume"], cli_env(SLOW_SUITE_TASKS="200"))
    try:
        wait_until(lambda: stored_trials(store) > 10, timeout=60, proc=resumer)
        # in this process: the refusal is the lock's (the resumer holds it), not a signal's
        second = run_here(run_args(store, extra=["--resume"]), {"SLOW_SUITE_TASKS": "200"})
        assert second.returncode == 1
        assert f"pid {resumer.pid}" in second.stderr, second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        kill(resumer)
