"""A campaign whose creation fails on a full disk leaves no lock file and nothing half-created.

``ablation run`` locks a new campaign's id before writing its row. When the disk is full, either
the lock file's pid does not fit, or the row does not: both used to leave the lock file beside the
store (the first as a bare ``OSError`` naming nothing), and within one process the lock stayed
held. The disk is made full three ways: a real ``RLIMIT_FSIZE`` on a real ``ablation run``
process (SQLite gets ``EFBIG`` writing the row's task digests: 1000 tasks whose ids are 100
characters long, so that the run that follows with room again is 2000 trials), and, in process,
the lock's write and the row's (or a reused baseline's) insert failing as the system and SQLite
fail them.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation import AblationTask, CampaignRun, run_ablation_campaign
from ablation.config import CampaignConfig
from ablation.errors import StoreError
from ablation.store.locks import CampaignLock, campaign_running
from ablation.store.run_store import RunStore

LIMIT = 150_000  # bytes a file of the run may reach: the store opens, the campaign row does not fit
ARGS = ["run", "suite.jsonl", "--baseline", "agents.py:baseline", "--candidate", "agents.py:candidate",
        "--store", "s.db", "--no-progress", "--quiet"]  # fmt: skip


def _project(tmp_path: Path) -> None:
    (tmp_path / "suite.jsonl").write_text("".join(
        json.dumps({"task_id": f"t{i:04d}-{'x' * 95}", "input_data": i, "expected_output": i}) + "\n"
        for i in range(1000)
    ))  # fmt: skip
    (tmp_path / "agents.py").write_text("def baseline(x):\n    return x\n\n\ndef candidate(x):\n    return x\n")
    RunStore(tmp_path / "s.db").close()


def _capped() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _capped_ablation(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``ablation ARGS`` in a process whose files may not grow past :data:`LIMIT`."""
    return subprocess.run(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", *ARGS],
        capture_output=True, text=True, cwd=tmp_path, preexec_fn=_capped, timeout=120, check=False,
    )  # fmt: skip


def _locks(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".lock"))


def test_a_real_file_size_limit_at_creation_leaves_no_lock_and_no_campaign(tmp_path: Path) -> None:
    _project(tmp_path)
    done = _capped_ablation(tmp_path)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"ablation: error: run store {tmp_path / 's.db'}: cannot create a campaign: "), line
    assert _locks(tmp_path) == []
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM campaigns").fetchone() == (0,)
    again = run_here(ARGS, cwd=tmp_path)  # the disk has room again: the next run is whole
    assert again.returncode == 0, again.stderr
    assert _locks(tmp_path) == []


def test_a_lock_whose_pid_does_not_fit_is_one_error_naming_the_store_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.db"

    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patched:
        patched.setattr(os, "pwrite", full)
        with pytest.raises(StoreError) as caught:
            CampaignLock(store, "c1")
    assert str(caught.value).startswith(f"run store {store}: cannot take the run lock of campaign c1")
    assert os.strerror(errno.ENOSPC) in str(caught.value)
    assert _locks(tmp_path) == [] and not campaign_running(store, "c1")
    CampaignLock(store, "c1").release()  # this process does not hold it: it can be taken again


def _create(store: RunStore, campaign_id: str) -> str:
    return store.create_campaign(
        config=CampaignConfig(), suite_fingerprint="f", task_digests={"t": "d"},
        baseline_agent="b", candidate_agent="c", campaign_id=campaign_id,
    )  # fmt: skip


def _full(*args: Any, **kwargs: Any) -> Any:
    raise sqlite3.OperationalError("database or disk is full")


def _tasks() -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]


def _echo(x: int) -> int:
    return x


def test_a_row_that_does_not_fit_releases_the_lock_the_run_took_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.db"
    with monkeypatch.context() as patched:
        patched.setattr(RunStore, "_insert_campaign", _full)
        with pytest.raises(StoreError, match="cannot create a campaign: database or disk is full"):
            run_ablation_campaign(_echo, _echo, _tasks(), store=store)
    assert _locks(tmp_path) == []
    report = run_ablation_campaign(_echo, _echo, _tasks(), store=store)  # room again: a whole run
    assert report.n_tasks == 4 and _locks(tmp_path) == []


def test_a_reused_baseline_that_does_not_fit_leaves_no_campaign_without_it(tmp_path: Path) -> None:
    """The campaign and the baseline trials it reuses are written together or not at all: a
    campaign stored without them would, resumed, run only its candidate. SQLite itself refuses
    the trials (a trigger aborting every trial insert once a second campaign is in the store)."""
    store = tmp_path / "s.db"
    first = CampaignRun()
    run_ablation_campaign(_echo, _echo, _tasks(), store=store, run_info=first)
    with sqlite3.connect(store) as conn:
        conn.execute(
            "CREATE TRIGGER full BEFORE INSERT ON trials WHEN (SELECT COUNT(*) FROM campaigns) > 1 "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    with pytest.raises(StoreError):
        run_ablation_campaign(None, _echo, _tasks(), store=store, reuse_baseline=first.campaign_id)
    with RunStore(store, read_only=True) as s:
        assert [r.campaign_id for r in s.list_campaigns()] == [first.campaign_id]
    assert _locks(tmp_path) == []
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TRIGGER full")
    reused = run_ablation_campaign(None, _echo, _tasks(), store=store, reuse_baseline=first.campaign_id)
    assert reused.n_tasks == 4 and _locks(tmp_path) == []


def test_an_id_already_taken_keeps_the_lock_of_the_campaign_running_under_it(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        lock = CampaignLock(store.path, "c1")
        _create(store, "c1")
        with pytest.raises(StoreError, match="already exists"):
            _create(store, "c1")
        assert _locks(tmp_path) == ["s.db.c1.lock"] and campaign_running(store.path, "c1")
        lock.release()
