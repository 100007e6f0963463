"""``ablation view`` takes the store as ``report``, ``run`` and ``list`` take it, ``--store PATH``,
beside the positional ``STORE``; both naming different files is a usage error (exit 1, one line).

The served store is checked over HTTP: the page names the file the server opened.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.config import CampaignConfig
from ablation.store.run_store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


def _store(path: Path) -> str:
    with RunStore(path) as store:
        return store.create_campaign(
            config=CampaignConfig(), suite_fingerprint="f" * 64, task_digests={"t": "d"},
            baseline_agent="b", candidate_agent="c",
        )  # fmt: skip


@contextmanager
def _served(*args: str) -> Iterator[str]:
    """``ablation view ARGS`` on a free port; yields its URL."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view", *args,
         "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://\S+/", line)
        assert found is not None, (line, proc.stderr.read() if proc.stderr else "")
        yield found.group(0).rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("how", ["flag", "positional", "both"])
def test_the_store_is_given_as_a_flag_or_positionally(tmp_path: Path, how: str) -> None:
    path = tmp_path / "runs.db"
    cid = _store(path)
    args = {"flag": ["--store", str(path)], "positional": [str(path)],
            "both": [str(path), "--store", str(tmp_path / "." / "runs.db")]}[how]  # fmt: skip
    with _served(*args) as url, urllib.request.urlopen(url + "/") as reply:
        page = html.unescape(reply.read().decode())
    assert str(path) in page and f'href="/campaign/{cid}"' in page


def test_a_missing_store_named_by_the_flag_is_named_in_the_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.db"
    done = run_here(["view", "--store", str(missing), "--no-browser"])
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line == f"ablation: error: {missing}: no run store here (run a campaign first, or name the store)"


def test_two_different_stores_are_a_usage_error_naming_both(tmp_path: Path) -> None:
    path, other = tmp_path / "runs.db", tmp_path / "other.db"
    _store(path)
    _store(other)
    done = run_here(["view", str(path), "--store", str(other), "--no-browser"])
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("ablation: error: ablation view: ") and str(path) in line and str(other) in line
