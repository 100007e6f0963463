"""A run store path that names a directory is one line saying so, exit 1, from every command
that opens a store (``run``, ``report``, ``list``, the viewer's catalog) and from both ways of
opening one (read-write and read-only): the check lives in the store's connection alone.
SQLite's own word for it ("unable to open database file") names no cause.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import AGENTS, SUITE, run_here

from ablation.errors import StoreError
from ablation.store import RunStore

FAST = {"SLOW_SUITE_TASKS": "2", "SLOW_AGENTS_SCALE": "0", "SLOW_SUITE_CHANGE": None}


@pytest.mark.parametrize("read_only", [False, True])
def test_opening_a_directory_says_it_is_one(tmp_path: Path, read_only: bool) -> None:
    with pytest.raises(StoreError) as caught:
        RunStore(tmp_path, read_only=read_only)
    assert str(caught.value) == f"{tmp_path} is a directory, not a run store file"


@pytest.mark.parametrize(
    "args",
    [
        ["run", SUITE, "--baseline", f"{AGENTS}:baseline", "--candidate", f"{AGENTS}:candidate_b",
         "--no-progress", "--quiet", "--store"],
        ["report", "latest", "--store"],
        ["list"],
    ],
    ids=["run", "report", "list"],
)  # fmt: skip
def test_each_command_says_the_store_is_a_directory(tmp_path: Path, args: list[str]) -> None:
    folder = tmp_path / "store-dir"
    folder.mkdir()
    done = run_here([*args, str(folder)], FAST)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{folder} is a directory, not a run store file" in lines[0], done.stderr
    assert "unable to open database file" not in done.stderr
    assert list(folder.iterdir()) == []  # nothing was created inside it
