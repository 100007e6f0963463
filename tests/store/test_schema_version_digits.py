"""A run store's schema version is read as ASCII digits only.

``"²"`` is a digit to :meth:`str.isdigit` but :class:`int` refuses it (a ``ValueError``
traceback), and ``"١"`` (ARABIC-INDIC DIGIT ONE) is one that :class:`int` reads as 1 (a store
taken for schema version 1 and migrated). Either is a version this ablation does not know: one
:class:`~ablation.errors.StoreError` line naming the store, opened read-write or read-only, and
exit 1 from ``ablation report``.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.errors import StoreError
from ablation.store import RunStore
from ablation.store.format import SCHEMA_VERSION

VERSIONS = ["²", "١", "1²", f"{SCHEMA_VERSION}\u00b9"]


def _store(path: Path, version: str) -> None:
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
        conn.commit()


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize("version", VERSIONS)
def test_a_version_not_in_ascii_digits_is_refused(tmp_path: Path, version: str, read_only: bool) -> None:
    path = tmp_path / "runs.db"
    _store(path, version)
    with pytest.raises(StoreError, match=f"run store {path} has schema version {version}, but"):
        RunStore(path, read_only=read_only)
    with closing(sqlite3.connect(path)) as conn:  # left as it was: nothing migrated
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (version,)


@pytest.mark.parametrize("version", VERSIONS[:2])
def test_report_says_it_in_one_line(tmp_path: Path, version: str) -> None:
    path = tmp_path / "runs.db"
    _store(path, version)
    done = run_here(["report", "latest", "--store", str(path)])
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"has schema version {version}" in lines[0], done.stderr


def test_the_current_version_in_ascii_digits_opens(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, str(SCHEMA_VERSION))
    with RunStore(path, read_only=True) as store:
        assert store.schema_version == SCHEMA_VERSION
