"""``ablation view`` takes the store as ``report``, ``run`` and ``list`` take it, ``--store PATH``,
beside the positional ``STORE``; both naming different files is a usage error (exit 1, one line).

The served store is checked over HTTP: the page names the file the server opened.
"""

from __future__ import annotations

import html
import urllib.request
from pathlib import Path

import pytest
from helpers.cli_shared import run_here
from helpers.view_server import served

from ablation.config import CampaignConfig
from ablation.store.run_store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]


def _store(path: Path) -> str:
    with RunStore(path) as store:
        return store.create_campaign(
            config=CampaignConfig(), suite_fingerprint="f" * 64, task_digests={"t": "d"},
            baseline_agent="b", candidate_agent="c",
        )  # fmt: skip


@pytest.mark.parametrize("how", ["flag", "positional", "both"])
def test_the_store_is_given_as_a_flag_or_positionally(tmp_path: Path, how: str) -> None:
    path = tmp_path / "runs.db"
    cid = _store(path)
    args = {"flag": ["--store", str(path)], "positional": [str(path)],
            "both": [str(path), "--store", str(tmp_path / "." / "runs.db")]}[how]  # fmt: skip
    with served(*args) as url, urllib.request.urlopen(url + "/") as reply:
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
