"""An async agent whose ``loop.run_in_executor(None, fn)`` call never returns costs its trial a
timeout; the campaign reports, and the process exits.

The loop's default executor was asyncio's ``ThreadPoolExecutor``: Python 3.11's
``loop.shutdown_default_executor`` joins its threads with no time limit, and so does the
interpreter at exit, so the command printed nothing and never ended (a stopping signal did not
end it either). The loops ablation starts now run such calls in daemon workers
(``ablation.daemon_pool``). The command runs in a subprocess with a bound of its own: a hang is
this test's failure, never a hung test run.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.cli import REPO, cli_env

AGENTS = '''
import asyncio
import time


def never():
    while True:
        time.sleep(0.05)


async def baseline(x):
    return x


async def candidate(x):
    if x == 1:
        await asyncio.get_running_loop().run_in_executor(None, never)
    return x
'''

SUITE = '''
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
'''


@pytest.mark.slow
def test_an_executor_call_that_never_returns_holds_neither_the_report_nor_the_exit(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(textwrap.dedent(AGENTS))
    (tmp_path / "suite.py").write_text(textwrap.dedent(SUITE))
    store = tmp_path / "runs.db"
    args = [
        "run", str(tmp_path / "suite.py"), "--baseline", f"{tmp_path / 'agents.py'}:baseline",
        "--candidate", f"{tmp_path / 'agents.py'}:candidate", "--timeout", "1",
        "--format", "json", "--no-progress", "--store", str(store),
    ]
    code = "from ablation.cli import main_entry; main_entry()"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, *args], cwd=REPO, env=cli_env(), capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the command did not end within 60 s; it printed {exc.stdout!r}") from None
    report = json.loads(proc.stdout)
    assert (report["n_tasks"], report["table"]["regressions"]) == (4, 1), proc.stderr
    with sqlite3.connect(store) as db:
        rows = dict(db.execute("select task_id || '/' || arm, status from trials").fetchall())
    assert rows["t1/candidate"] == "timeout"
    assert {k: v for k, v in rows.items() if k != "t1/candidate"} == dict.fromkeys(
        [f"t{i}/{arm}" for i in range(4) for arm in ("baseline", "candidate") if (i, arm) != (1, "candidate")], "completed"
    )
