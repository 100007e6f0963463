"""Counts typed into the viewer's query strings, and a suite history whose newest campaigns do
not read, on a real store served through the ASGI app.

A count parameter (a suite history's ``limit``, the first step row ``from`` of a task page or a
compared task's page) is a whole number written in ASCII digits; anything else is the page's
default, never a server error. ``str.isdigit`` also holds for characters ``int`` does not read
(``"²"``), so the reference here is the page without the parameter. A suite history whose newest
``limit`` campaigns are all damaged still shows the suite: the damage named, the older campaigns
counted with a link to them, as when only some of them are damaged.
"""

from __future__ import annotations

import html
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

SUITE = "9" * 64
IDS = ("u0", "u1", "u2")
#: Not counts: a superscript and a circled digit (``isdigit`` but not ``int``), a sign, a word.
NOT_COUNTS = ("\u00b2", "\u2460", "-1", "+1", "x", "1.5", "")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A store of three complete campaigns of :data:`SUITE`, oldest first."""
    path = tmp_path_factory.mktemp("counts") / "runs.db"
    ids = []
    with RunStore(path) as store:
        for k in range(3):
            cid = store.create_campaign(
                config=CampaignConfig(n_resamples=100, seed=1), suite_fingerprint=SUITE,
                task_digests=dict.fromkeys(IDS, "d"), baseline_agent="m:b", candidate_agent=f"m:c{k}",
                campaign_id=f"c{k}",
            )  # fmt: skip
            store.append_many(cid, [
                TaskResult(task_id=t, arm=arm, passed=(i + k) % 2 == 0, latency_s=0.1)
                for i, t in enumerate(IDS) for arm in ("baseline", "candidate")
            ])  # fmt: skip
            store.set_status(cid, "complete")
            ids.append(cid)
    return path, ids


def _pages(cid: str) -> list[tuple[str, dict[str, str], str]]:
    """``(path, params, count parameter)`` of each page that reads a count from its query."""
    arms = {"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate", "id": "u1"}
    return [
        (f"/suite/{SUITE}", {}, "limit"),
        (f"/campaign/{quote(cid)}/task", {"id": "u1"}, "from"),
        ("/compare/task", arms, "from"),
    ]


def test_a_count_that_is_no_ascii_number_is_the_pages_default(stored: tuple[Path, list[str]]) -> None:
    path, ids = stored
    with TestClient(create_app(Catalog(path)), raise_server_exceptions=False) as client:
        for url, params, name in _pages(ids[-1]):
            reference = client.get(url, params=params)
            assert reference.status_code == 200, (url, reference.status_code)
            for text in NOT_COUNTS:
                response = client.get(url, params={**params, name: text})
                assert response.status_code == 200, (url, name, text, response.status_code)
                assert response.text == reference.text, (url, name, text)


def _damage(path: Path, campaign_id: str) -> Path:
    """A copy of the store at ``path`` in which ``campaign_id``'s stored config does not decode."""
    copy = path.with_name(f"damaged-{campaign_id}.db")
    with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
        target.execute("UPDATE campaigns SET config_json = '{bad' WHERE id = ?", (campaign_id,))
    source.close()
    target.close()
    return copy


def _history(path: Path, limit: str) -> tuple[int, str]:
    with TestClient(create_app(Catalog(path)), raise_server_exceptions=False) as client:
        response = client.get(f"/suite/{SUITE}", params={"limit": limit})
    return response.status_code, html.unescape(response.text)


def _rows(page: str) -> list[str]:
    table = page[page.index('id="history"'):]
    return re.findall(r'<a href="/campaign/([^"]+)">', table)


def test_a_history_whose_newest_campaigns_do_not_read_still_shows_the_suite(
    stored: tuple[Path, list[str]],
) -> None:
    path, ids = stored
    damaged = _damage(path, ids[-1])  # the newest
    status, page = _history(damaged, "1")
    assert status == 200, page
    assert f"campaign '{ids[-1]}'" in page and "cannot be read" in page
    assert "no campaign of suite" not in page
    older = re.search(r'id="older">The newest (\d+) of (\d+) campaigns of this suite; (\d+) older', page)
    assert older is not None and older.groups() == ("1", "3", "2")
    assert f'href="/suite/{SUITE}?limit=0"' in page and _rows(page) == []
    # the link shows the readable ones, oldest first, and still names the damaged one
    status, every = _history(damaged, "0")
    assert status == 200 and _rows(every) == ids[:-1] and f"campaign '{ids[-1]}'" in every
    # a limit that reaches a readable campaign: as before
    status, two = _history(damaged, "2")
    assert status == 200 and _rows(two) == ids[1:2]


def test_a_suite_whose_every_campaign_is_damaged_is_still_a_404(stored: tuple[Path, list[str]]) -> None:
    path, ids = stored
    damaged = path.with_name("all-damaged.db")
    with sqlite3.connect(path) as source, sqlite3.connect(damaged) as target:
        source.backup(target)
        target.execute("UPDATE campaigns SET config_json = '{bad'")
    source.close()
    target.close()
    for limit in ("0", ""):  # every campaign of the suite read, none readable
        status, page = _history(damaged, limit)
        assert status == 404 and "no campaign of suite" in page and f"{len(ids)} stored campaign(s)" in page
