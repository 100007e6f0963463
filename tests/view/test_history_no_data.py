"""The suite history page does not plot a campaign without data (no trial, or no paired task)
at a 0 % pass rate: its place on the plot is marked ``no data`` and its table row says so; a
campaign with data keeps its dot at its pass rate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.catalog import Catalog
from ablation.view.suite_pages import history_page

SUITE = "e" * 64
TASKS = ("t0", "t1", "t2", "t3")


@pytest.fixture
def page(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "runs.db"
    trials = {
        "full": [TaskResult(task_id=t, arm=a, passed=a == "baseline" or t != "t0")
                 for t in TASKS for a in ("baseline", "candidate")],
        "empty": [],
        # every task ran in one arm only: nothing is paired
        "unpaired": [TaskResult(task_id=t, arm="baseline" if t < "t2" else "candidate", passed=True)
                     for t in TASKS],
    }  # fmt: skip
    with RunStore(path) as store:
        for name, results in trials.items():
            cid = store.create_campaign(
                config=CampaignConfig(n_resamples=100), suite_fingerprint=SUITE,
                task_digests=dict.fromkeys(TASKS, "d"), baseline_agent="base", candidate_agent="cand",
                campaign_id=f"c-{name}",
            )  # fmt: skip
            if results:
                store.append_many(cid, results)
            store.set_status(cid, "complete")
    catalog = Catalog(path)
    try:
        yield history_page(catalog, SUITE)
    finally:
        catalog.close()


def _plot(page: str) -> str:
    found = re.search(r'<svg class="history".*?</svg>', page, re.S)
    assert found is not None
    return found.group(0)


def _row(page: str, cid: str) -> str:
    table = page[page.index('id="history"'):]
    return table[table.index(f'href="/campaign/{cid}"'):].split("</tr>")[0]


def test_a_campaign_without_data_is_marked_not_plotted_at_zero(page: str) -> None:
    svg = _plot(page)
    dots = re.findall(r'<circle class="point" cx="[\d.]+" cy="([\d.]+)" r="5" data-campaign="([^"]+)"', svg)
    # only the campaign with data has a dot: 3 of 4 candidate trials pass -> y = 210 - 0.75 * 180
    assert dots == [("75.0", "c-full")]
    for cid in ("c-empty", "c-unpaired"):
        assert re.search(rf'<text class="tick no-data"[^>]*data-campaign="{cid}">no data<title>', svg)
        row = _row(page, cid)
        assert row.count("no data") == 2 and "0.0%" not in row and 'data-value="0.0"' not in row
    assert 'data-value="0.75"' in _row(page, "c-full")
