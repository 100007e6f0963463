"""The viewer's pages that list campaigns at the scale of many campaigns: the campaign list a page
at a time, newest first, with how many it does not show; filters that see every campaign; filter
lists, the compare form's arms and a suite's history capped, each saying what it leaves out and
how to see it; and none of them decoding every campaign's task digests.

Each page is compared with the store read independently (``sqlite3`` and ``json``): which
campaigns are newest, how many tasks each holds, which agents ran.
"""

from __future__ import annotations

import json
import re
import sqlite3
import tracemalloc
from pathlib import Path

import pytest
from helpers.store_rows import copy_first_campaign

from ablation.config import CampaignConfig
from ablation.errors import StoreError
from ablation.store.run_store import RunStore
from ablation.view import suite_pages
from ablation.view.catalog import Catalog
from ablation.view.markup import LIST_CAP
from ablation.view.pages import CAMPAIGNS_SHOWN, campaigns_page
from ablation.view.suite_pages import COMPARE_CAMPAIGNS, compare_page, history_page

SUITES = ("a" * 64, "b" * 64)


def _store(path: Path, n_campaigns: int, n_tasks: int = 3, runs: int = 1) -> None:
    """``n_campaigns`` campaigns, one after another: suites alternate, candidate ``cK`` each."""
    with RunStore(path) as store:
        for k in range(n_campaigns):
            store.create_campaign(
                config=CampaignConfig(runs=runs), suite_fingerprint=SUITES[k % 2],
                task_digests={f"t{i}": f"{i:064x}" for i in range(n_tasks + k % 3)},
                baseline_agent="base", candidate_agent=f"c{k}",
            )  # fmt: skip


def _newest(path: Path, where: str = "", params: tuple[str, ...] = ()) -> list[tuple[str, int, str]]:
    """``(id, task count, suite)`` of the campaigns matching ``where``, newest first (sqlite3, json)."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT id, task_digests_json, suite_fingerprint FROM campaigns"
            f" {where} ORDER BY created_at DESC, rowid DESC", params,
        ).fetchall()  # fmt: skip
    conn.close()
    return [(cid, len(json.loads(text)), suite) for cid, text, suite in rows]


def _page(path: Path, build: str, *args: object) -> str:
    catalog = Catalog(path)
    try:
        page = {"list": campaigns_page, "compare": compare_page, "history": history_page}[build](catalog, *args)
    finally:
        catalog.close()
    return page if isinstance(page, str) else page.html


def _listed(page: str) -> list[str]:
    return re.findall(r'<a href="/campaign/[^"]*" class="campaign">([^<]*)</a>', page)


def test_the_campaign_list_shows_a_page_of_the_newest_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    extra = 7
    _store(path, CAMPAIGNS_SHOWN + extra, runs=3)
    newest = _newest(path)
    first = _page(path, "list")
    assert _listed(first) == [cid for cid, _, _ in newest[:CAMPAIGNS_SHOWN]]
    total = len(newest)
    assert f"of {total}, newest first (page 1 of 2); {extra} not shown." in first
    assert 'href="/?page=2"' in first
    second = _page(path, "list", "", "", "2")
    assert _listed(second) == [cid for cid, _, _ in newest[CAMPAIGNS_SHOWN:]]
    assert f"Campaigns {CAMPAIGNS_SHOWN + 1} to {total} of {total}" in second
    # planned trials: the stored tasks x 3 runs x 2 arms, read without the digests
    for cid, n_tasks, _ in newest[:3]:
        row = first[first.index(f">{cid}</a>"):]
        assert f"<td>0/{n_tasks * 3 * 2}</td>" in row[: row.index("</tr>")]


def test_filters_see_every_campaign_and_page_what_they_match(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, CAMPAIGNS_SHOWN + 10)
    oldest = _newest(path)[-1][0]
    agent = "c0"  # the oldest campaign's candidate: not on the first page
    page = _page(path, "list")
    assert oldest not in _listed(page) and f'<option value="{agent}">' in page
    assert _listed(_page(path, "list", "", agent)) == [oldest]
    of_suite = [cid for cid, _, suite in _newest(path) if suite == SUITES[0]]
    assert len(of_suite) > CAMPAIGNS_SHOWN // 2
    assert _listed(_page(path, "list", SUITES[0])) == of_suite
    assert _listed(_page(path, "list", SUITES[1], "c1")) == [_newest(path)[-2][0]]


def test_more_agents_than_a_list_holds_are_typed_offering_the_first(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, LIST_CAP + 5)
    page = _page(path, "list")
    form = page[page.index("<form"):page.index("</form>")]
    assert 'name="agent" list="agent-list"' in form and f'placeholder="any of {LIST_CAP + 6}"' in form
    assert len(re.findall(r"<option", form[form.index('id="agent-list"'):])) == LIST_CAP
    assert '<select name="suite"' in form  # two suites: still a list


def test_damaged_digests_on_the_page_shown_are_an_error_line_naming_the_campaign(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, CAMPAIGNS_SHOWN + 3)
    newest = [cid for cid, _, _ in _newest(path)]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE campaigns SET task_digests_json = '[1]' WHERE id = ?", (newest[-1],))
    conn.close()
    first, second = _page(path, "list"), _page(path, "list", "", "", "2")
    assert "cannot be read" not in first and _listed(first) == newest[:CAMPAIGNS_SHOWN]
    assert second.count(f"campaign &#x27;{newest[-1]}&#x27;") == 1 and _listed(second) == newest[CAMPAIGNS_SHOWN:-1]


def test_the_compare_form_offers_the_newest_campaigns_and_counts_the_others(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    extra = 4
    _store(path, COMPARE_CAMPAIGNS + extra)
    newest = [cid for cid, _, _ in _newest(path)]
    page = _page(path, "compare", {})
    offered = re.findall(r'<option value="([^"]*):candidate"', page)
    assert offered == newest[:COMPARE_CAMPAIGNS]
    assert f"newest {COMPARE_CAMPAIGNS} of {len(newest)} campaigns" in page and f"{extra} older ones" in page
    # an older campaign is still compared when typed
    old = newest[-1]
    picked = _page(path, "compare", {"baseline": f"{old}:baseline", "candidate": f"{old}:candidate"})
    assert 'id="verdict"' in picked and f'value="{old}:baseline"' in picked


def test_a_suite_history_shows_its_newest_campaigns_and_links_to_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suite_pages, "HISTORY_SHOWN", 3, raising=False)
    path = tmp_path / "runs.db"
    _store(path, 10)
    of_suite = [cid for cid, _, suite in _newest(path) if suite == SUITES[1]]  # 5, newest first
    page = _page(path, "history", SUITES[1])
    shown = re.findall(r'<tr><td><a href="/campaign/([^"]*)"', page)
    assert shown == of_suite[:3][::-1]  # oldest first, as the history reads
    assert f"The newest 3 of {len(of_suite)} campaigns" in page and f"/suite/{SUITES[1]}?limit=0" in page
    everything = _page(path, "history", SUITES[1], "0")
    assert re.findall(r'<tr><td><a href="/campaign/([^"]*)"', everything) == of_suite[::-1]
    assert 'id="older"' not in everything
    with pytest.raises(StoreError, match="no campaign of suite"):
        _page(path, "history", "c" * 64)


def test_listing_pages_do_not_hold_the_task_digests(tmp_path: Path) -> None:
    """Python's peak allocation while building the campaign list and the compare form stays far
    below the digests' text alone (what those pages held, decoded, before)."""
    path = tmp_path / "runs.db"
    _store(path, 1, n_tasks=3000)
    text_bytes = copy_first_campaign(path, 60)  # 60 copies of that campaign under new ids
    assert text_bytes > 10_000_000
    catalog = Catalog(path)
    tracemalloc.start()
    try:
        pages = [campaigns_page(catalog), compare_page(catalog, {}).html]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        catalog.close()
    assert peak < text_bytes / 20, (peak, text_bytes)
    assert _listed(pages[0]) == [cid for cid, _, _ in _newest(path)][:CAMPAIGNS_SHOWN]
