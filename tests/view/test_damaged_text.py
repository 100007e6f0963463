"""Text that is not UTF-8 in a run store is one line naming its campaign, never a blank listing.

SQLite keeps whatever bytes a TEXT column is given; Python's ``sqlite3`` refuses to decode bytes
that are not UTF-8 with an error that ends the whole query, so one such value in one campaign
used to blank ``ablation list`` and every page of the viewer that lists campaigns. The store here
is a real SQLite file of four campaigns on one suite, then damaged: one campaign's baseline agent
name by overwriting a byte of the file itself (as a damaged disk would), one campaign's task
digests by SQL (``CAST(x'..' AS TEXT)``), and one trial's category of a third campaign. The
fourth stays whole. DESIGN.md section 9: ``ablation list`` and the viewer's campaign list, compare
and suite history pages show the readable campaigns beside one line per damaged one, ``list``
exiting 1, and the damaged campaign's own pages are a 404 naming it (and, for a trial, its arm
and task). The pages are read over HTTP from the viewer's app (Starlette's test client).
"""

from __future__ import annotations

import html
import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from tests.helpers.cli import run_here

SUITE = "a" * 64
TASKS = [f"t{i}" for i in range(6)]


def build(path: Path) -> dict[str, str]:
    """Four complete campaigns on one suite: name -> campaign id."""
    ids = {}
    with RunStore(path) as store:
        for name in ("whole", "agent", "digests", "trial"):
            cid = store.create_campaign(
                config=CampaignConfig(n_resamples=100), suite_fingerprint=SUITE,
                task_digests={t: "d" for t in TASKS}, baseline_agent=f"base-{name}-agent",
                candidate_agent="cand", campaign_id=f"c-{name}",
            )  # fmt: skip
            store.append_many(cid, [
                TaskResult(task_id=t, arm=arm, passed=arm == "baseline" or t != "t1", category="k")
                for t in TASKS for arm in ("baseline", "candidate")
            ])  # fmt: skip
            store.set_status(cid, "complete")
            store.update_provenance(cid, verdict="fail")
            ids[name] = cid
    return ids


def damage(path: Path, ids: dict[str, str]) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE campaigns SET task_digests_json = CAST(x'7b2274ff22' AS TEXT) WHERE id = ?",
                   (ids["digests"],))  # fmt: skip
        db.execute("UPDATE trials SET category = CAST(x'6bff' AS TEXT) WHERE campaign_id = ?"
                   " AND task_id = 't3' AND arm = 'candidate'", (ids["trial"],))  # fmt: skip
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    assert data.count(b"base-agent-agent") == 1
    path.write_bytes(data.replace(b"base-agent-agent", b"base-\xffgent-agent"))


def test_text_that_is_not_utf8_is_one_line_naming_its_campaign(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    ids = build(store)
    damage(store, ids)
    listed = {ids["whole"], ids["trial"]}
    broken = {ids["agent"]: "baseline_agent", ids["digests"]: "task_digests_json"}

    done = run_here(["list", str(store)])
    assert done.returncode == 1
    for cid in listed:
        assert cid in done.stdout
    for cid, column in broken.items():
        assert cid not in done.stdout
        assert done.stderr.count(f"campaign {cid!r} cannot be read") == 1, done.stderr
        assert f"its {column} is not UTF-8 text" in done.stderr

    with TestClient(create_app(Catalog(store)), raise_server_exceptions=False) as client:

        def get(path: str) -> tuple[int, str]:
            answer = client.get(path)
            return answer.status_code, html.unescape(answer.text)

        for path in ("/", "/compare", f"/suite/{SUITE}"):
            status, body = get(path)
            assert status == 200, (path, body)
            for cid, column in broken.items():
                assert body.count(f"run store {store}: campaign {cid!r} cannot be read") == 1, path
                assert f"its {column} is not UTF-8 text" in body, path
                assert f'href="/campaign/{quote(cid)}"' not in body, path
        body = get("/")[1]
        assert all(f'href="/campaign/{quote(cid)}"' in body for cid in listed)
        assert f'href="/campaign/{quote(ids["whole"])}"' in get(f"/suite/{SUITE}")[1]
        status, body = get("/compare")
        assert all(f'value="{cid}:candidate"' in body for cid in listed)

        for cid, column in broken.items():  # the damaged campaigns' own pages: a 404 naming them
            for path in (f"/campaign/{quote(cid)}", f"/campaign/{quote(cid)}/tasks",
                         f"/api/campaign/{quote(cid)}/progress"):  # fmt: skip
                status, body = get(path)
                assert status == 404, (path, status)
                assert f"campaign {cid!r}" in body.replace('\\"', '"'), path
                assert f"its {column} is not UTF-8 text" in body, path
        cid = ids["trial"]  # a damaged trial: its campaign's pages name the campaign, arm and task
        for path in (f"/campaign/{quote(cid)}", f"/campaign/{quote(cid)}/task?id=t3"):
            status, body = get(path)
            assert status == 404, (path, status)
            assert f"campaign {cid!r}: the candidate trial of task 't3'" in body, path
            assert "its category is not UTF-8 text: 'k\\xff'" in body, path
