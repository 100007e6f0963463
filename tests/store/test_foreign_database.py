"""A SQLite file of another program is not made a run store: ``ablation run --store`` on it is
one line naming the file, exit 1, and the file keeps exactly its own tables (read back with
``sqlite3``); an empty file is still a new store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ablation.errors import StoreError
from ablation.store.run_store import RunStore


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))


def test_a_database_of_another_program_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('ada')")
    before = _tables(path)
    with pytest.raises(StoreError, match=f"{path} is a SQLite database of another program"):
        RunStore(path)
    assert _tables(path) == before


def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.touch()
    RunStore(path).close()
    assert "campaigns" in _tables(path)
