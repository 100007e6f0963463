"""What ``ablation view`` leaves on disk (docs/SECURITY.md, the viewer): after a session over a
WAL store copied alone, ended by Ctrl-C (exit 0), the database file is unchanged byte for byte,
and the only new files are SQLite's ``-wal`` (empty) and ``-shm`` beside it."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


def test_the_viewer_never_writes_the_database_file(tmp_path: Path, store: Path,
                                                   campaigns: dict[str, str]) -> None:
    copy = tmp_path / "runs.db"
    with sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True) as src, \
            sqlite3.connect(copy) as dst:  # fmt: skip
        src.backup(dst)
    src.close()
    dst.close()
    check = sqlite3.connect(copy)
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    check.close()  # the last connection to close removes the -wal and -shm files
    before = copy.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.db"]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view",
         str(copy), "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[2].rstrip("/")
        cid = campaigns["candidate_a"]
        for path in ("/", f"/campaign/{cid}", f"/campaign/{cid}/tasks", f"/campaign/{cid}/task?id=t01",
                     "/compare", f"/compare?baseline={cid}:baseline&candidate={cid}"):
            with urllib.request.urlopen(url + path) as r:
                assert r.status == 200
        proc.send_signal(signal.SIGINT)  # Ctrl-C stops the viewer with exit 0
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert copy.read_bytes() == before
    assert {p.name for p in tmp_path.iterdir()} <= {"runs.db", "runs.db-shm", "runs.db-wal"}
    wal = tmp_path / "runs.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
