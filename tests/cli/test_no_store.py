"""``ablation run --no-store`` keeps its results in memory only: no store file, not even a
temporary one, while the campaign runs or after it.

The reference is the file system itself: the agents list the temporary directory and the
working directory while their trials run (the command's ``TMPDIR`` is an empty directory of the
test's own), and both are listed again once the command has exited.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.cli import LAUNCH, cli_env

AGENTS = """\
import os
import tempfile


def seen(x):
    # every file and folder under the temporary directory and the working directory, now
    found = []
    for top in (tempfile.gettempdir(), os.getcwd()):
        for root, dirs, files in os.walk(top):
            found += [os.path.relpath(os.path.join(root, n), top) for n in dirs + files]
    return sorted(n for n in found if not n.endswith((".py", ".pyc", "__pycache__")))
"""

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=[]) for i in range(4)]
"""


def test_no_store_writes_no_file_while_running_or_after(tmp_path: Path) -> None:
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    (work / "agents.py").write_text(AGENTS, encoding="utf-8")
    (work / "suite.py").write_text(SUITE, encoding="utf-8")
    args = ["run", "suite.py", "--baseline", "agents.py:seen", "--candidate", "agents.py:seen",
            "--candidate", "agents.py:seen", "--no-store", "--no-progress", "--format", "json",
            "--resamples", "200"]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], cwd=work, capture_output=True, text=True,
        env=cli_env(TMPDIR=tmp, SQLITE_TMPDIR=tmp), timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    rows = [(r["n_paired"], r["baseline_pass_rate"], r["candidate_pass_rate"])
            for r in out["summary"]["rows"]]  # fmt: skip
    assert rows == [(4, 1.0, 1.0)] * 2  # every agent saw no file at all, on every task
    first, second = (c["report"]["provenance"] for c in out["candidates"])
    assert second["baseline_reused_from"] == first["campaign_id"]  # one store, in memory
    left = sorted(p.name for p in work.iterdir() if p.name != "__pycache__")
    assert left == ["agents.py", "suite.py"]
    assert list(tmp.iterdir()) == []
