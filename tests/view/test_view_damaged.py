"""One damaged campaign row does not take down the viewer: pages that list or compare campaigns
show the readable ones beside one line naming the damaged one, and a page about the damaged
campaign itself is a 404 naming the damage (docs/DESIGN.md: "the viewer's campaign list shows
the readable campaigns beside that line").

The store is a copy of the demo store (tests/view/view_demo.py: real campaigns), whose oldest
campaign is then damaged by hand with SQL, and the viewer's app serves it over HTTP (Starlette's
test client, in this process).
"""

from __future__ import annotations

import html
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

DAMAGE = {
    "digests": "UPDATE campaigns SET task_digests_json = '[1]' WHERE id = ?",
    "config": "UPDATE campaigns SET config_json = '{' WHERE id = ?",
}




def damaged_copy(store: Path, target: Path, sql: str) -> tuple[str, list[str], list[str], str]:
    """A copy of ``store`` with its oldest campaign damaged by ``sql``: that campaign's id, the
    ids of the others (newest first), those of its suite, and that suite's fingerprint."""
    with sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True) as src, \
            sqlite3.connect(target) as dst:  # fmt: skip
        src.backup(dst)
    src.close()
    with RunStore(target, read_only=True) as s:
        records = s.list_campaigns()
    oldest = records[-1]
    same_suite = [r.campaign_id for r in records[:-1] if r.suite_fingerprint == oldest.suite_fingerprint]
    assert same_suite  # the demo store runs its first suite three times
    with sqlite3.connect(target) as db:
        assert db.execute(sql, (oldest.campaign_id,)).rowcount == 1
    db.close()
    others = [r.campaign_id for r in records[:-1]]
    return oldest.campaign_id, others, same_suite, oldest.suite_fingerprint


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_campaign_is_one_line_beside_the_others(
    tmp_path: Path, store: Path, damage: str
) -> None:
    bad, good, same_suite, suite = damaged_copy(store, tmp_path / "runs.db", DAMAGE[damage])
    with TestClient(create_app(Catalog(tmp_path / "runs.db")), raise_server_exceptions=False) as client:

        def get(path: str) -> tuple[int, str]:
            answer = client.get(path)
            return answer.status_code, answer.text
        for path in ("/", "/compare", f"/suite/{suite}",
                     f"/compare?baseline={quote(good[-1])}:baseline&candidate={quote(good[-1])}"):
            status, body = get(path)
            assert status == 200, (path, body)
            text = html.unescape(body)
            assert text.count(f"campaign {bad!r}") == 1, path  # named once, on its error line
            assert "cannot be read" in text
        status, body = get("/")
        for cid in good:
            assert f'href="/campaign/{quote(cid)}"' in body
        assert f'href="/campaign/{quote(bad)}"' not in body
        status, body = get("/compare")
        assert f'value="{good[-1]}:candidate"' in body and f'value="{bad}:' not in body
        status, body = get(f"/suite/{suite}")
        assert body.count('class="point"') == len(same_suite)
        for cid in same_suite:
            assert f'href="/campaign/{quote(cid)}"' in body
        assert f'href="/campaign/{quote(bad)}"' not in body
        # the damaged campaign's own pages: a clean 4xx naming the damage, never a 500
        for path in (f"/campaign/{quote(bad)}", f"/campaign/{quote(bad)}/tasks",
                     f"/campaign/{quote(bad)}/task?id=t01",
                     f"/api/campaign/{quote(bad)}/progress"):  # fmt: skip
            status, body = get(path)
            assert 400 <= status < 500, (path, status)
            assert f"campaign {bad!r}" in html.unescape(body).replace('\\"', '"'), path
            assert "cannot be read" in body, path
        # comparing with the damaged campaign names the damage under the form, a 404 as its pages
        status, body = get(f"/compare?baseline={quote(bad)}:baseline&candidate={quote(good[-1])}")
        assert status == 404 and 'id="compare-error"' in body and "cannot be read" in body
