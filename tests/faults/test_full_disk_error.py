"""A run stopped by a full disk says so: the write that failed, then what failed after it.

When the store cannot write a trial (a full disk), the run stops and tries to mark its campaign
interrupted, which fails on the same disk. Only that second failure reached the user ("cannot set
a campaign status: disk I/O error"), hiding the write that stopped the run. The line now starts
with the first error and names the later one after it.

The disk is made full two ways: a real ``RLIMIT_FSIZE`` on a real ``ablation run`` process (with
``SIGXFSZ`` ignored, SQLite gets ``EFBIG``; whether the status update still fits in the file's
pages depends on timing, so that run checks the order only), and the store's two writes failing
as SQLite fails them, in process, where the status update fails every time.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation.errors import StoreError
from ablation.store.run_store import RunStore

LIMIT = 150_000  # bytes a file of the run may reach: the store is created, the trials do not fit


def _project(tmp_path: Path) -> None:
    (tmp_path / "suite.jsonl").write_text("".join(
        json.dumps({"task_id": f"t{i}", "input_data": "x" * 200 + str(i), "expected_output": "x" * 200 + str(i)}) + "\n"
        for i in range(400)))  # fmt: skip
    (tmp_path / "agents.py").write_text("def baseline(x):\n    return x\n\n\ndef candidate(x):\n    return x\n")


ARGS = ["run", "suite.jsonl", "--baseline", "agents.py:baseline", "--candidate", "agents.py:candidate",
        "--store", "s.db", "--no-progress"]  # fmt: skip


def _capped() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_a_real_file_size_limit(tmp_path: Path) -> None:
    _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", *ARGS],
        capture_output=True, text=True, cwd=tmp_path, preexec_fn=_capped, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"ablation: error: run store {tmp_path / 's.db'}: cannot append trials: "), line


def test_the_failed_write_comes_first_and_the_status_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path)
    set_status = RunStore.set_status

    def append_many(self: RunStore, campaign_id: str, results: Any) -> int:
        raise StoreError(f"run store {self.path}: cannot append trials: disk I/O error")

    def status(self: RunStore, campaign_id: str, value: str) -> None:
        if value in ("interrupted", "aborted"):
            raise StoreError(f"run store {self.path}: cannot set a campaign status: disk I/O error")
        set_status(self, campaign_id, value)

    monkeypatch.setattr(RunStore, "append_many", append_many)
    monkeypatch.setattr(RunStore, "set_status", status)
    done = run_here(ARGS, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    store = tmp_path / "s.db"
    assert line.startswith(f"ablation: error: run store {store}: cannot append trials: disk I/O error"), line
    assert line.endswith(f"; then StoreError: run store {store}: cannot set a campaign status: disk I/O error"), line
