"""Task ids of up to a million characters (``TASK_ID_LIMIT``) are linked by a short key and shown
cut in lists, so every link a page renders opens its task: a link carried the whole id, twice in
a steps page's (its own and its way back), and ``ablation view`` answered a URL of 300,000
characters with a 400; a task list of 50 ids of 200,000 characters was 20 MB.

A store written directly (no agent runs): ids just past :data:`~ablation.view.tasks.KEYED`, of
300,000 characters (with a trace, for the steps pages) and a short one, each regressed or
improved so the compare page lists them. Read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from ablation.view.tasks import KEYED

IDS = ("a" * (KEYED + 1), "b" * 300_000, "short")


def _store(path: Path) -> str:
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="3" * 64,
            task_digests=dict.fromkeys(IDS, "d"), baseline_agent="b", candidate_agent="c",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=t, arm=arm, passed=(arm == "baseline") == (k % 2 == 0),
                       output=f"said {k} by the {arm}", trace=[{"step": k}, {"arm": arm}])
            for k, t in enumerate(IDS) for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "complete")
    return cid


def _links(page: str, cls: str) -> list[str]:
    """The hrefs of the links of class ``cls``, unescaped."""
    return [html.unescape(h) for h in re.findall(rf'<a href="([^"]+)" class="{cls}[^"]*">', page)]


def _said(page: str) -> int:
    """Which task of :data:`IDS` a task page shows (its trials' outputs name it)."""
    found = set(re.findall(r"said (\d) by the", page))
    assert len(found) == 1, found
    return int(found.pop())


def test_long_ids_are_linked_by_key_and_each_link_opens_its_task(tmp_path: Path) -> None:
    cid = _store(tmp_path / "runs.db")
    base = f"/campaign/{quote(cid)}"
    arms = f"baseline={quote(cid + ':baseline')}&candidate={quote(cid + ':candidate')}"
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        for listing, cls in ((f"{base}/tasks", "task"), (f"/compare?{arms}", "task-id")):
            page = client.get(listing).text
            assert IDS[1][: KEYED + 1] not in page  # shown cut, its length named
            assert f"truncated {len(IDS[1]) - KEYED} of {len(IDS[1])} chars" in page
            opened = []
            for href in _links(page, cls):
                assert len(href) < KEYED + 500, (listing, len(href))
                task = client.get(href)
                assert task.status_code == 200, href
                k = _said(task.text)
                assert f"<h1>Task {IDS[k]}</h1>" in task.text  # its own page shows the id whole
                opened.append(k)
                for steps in _links(task.text, "all-steps"):
                    assert len(steps) < 2 * KEYED + 1000, len(steps)
                    shown = client.get(steps)
                    assert shown.status_code == 200 and f'"step": {k}' in html.unescape(shown.text)
                    [back] = _links(shown.text, "back")
                    assert _said(client.get(back).text) == k
            assert sorted(opened) == list(range(len(IDS))), listing
        assert client.get(f"{base}/task", params={"key": "0" * 32}).status_code == 404
