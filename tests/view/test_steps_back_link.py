"""A trial's steps page links back to the task page it was opened from: a campaign's task page
keeps its own way back to the filtered task list, and a comparison's task page is returned to,
not the campaign's; the steps pager keeps that way back, and a ``back`` naming another site or
another page gives the task's page in the campaign.

The store is a real :class:`RunStore`; links are followed as a browser follows them (each
``href`` read from the page, unescaped and requested); pages are read over HTTP (Starlette's test
client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog


def _href(page: str, cls: str) -> str:
    found = re.search(rf'<a href="([^"]*)" class="{cls}[ "]', page)
    assert found is not None, f"no link of class {cls}"
    return html.unescape(found.group(1))


def _store(path: Path) -> str:
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="f" * 64,
            task_digests={"tr": "d", "u": "d"}, baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=t, arm=arm, passed=arm == "baseline", latency_s=0.01,
                       trace=[{"step": k} for k in range(450)] if t == "tr" else None)
            for t in ("tr", "u") for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "complete")
    return cid


def test_a_steps_page_returns_to_the_page_it_was_opened_from(tmp_path: Path) -> None:
    cid = _store(tmp_path / "runs.db")
    tasks = f"/campaign/{cid}/tasks?show=regressions&sort=errors"
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        task = client.get(f"/campaign/{cid}/task", params={"id": "tr", "back": tasks}).text
        steps = client.get(_href(task, "all-steps")).text
        second = client.get(_href(steps, "next")).text
        for page in (steps, second):
            again = client.get(_href(page, "back")).text
            assert _href(again, "back") == tasks
        compare = {"baseline": f"{cid}:candidate", "candidate": f"{cid}:baseline", "id": "tr"}
        task = client.get("/compare/task", params=compare).text
        steps = client.get(_href(task, "all-steps")).text
        back = urlsplit(_href(steps, "back"))
        assert back.path == "/compare/task"
        assert {k: v[0] for k, v in parse_qs(back.query).items()} == compare
        for hostile in ("https://example.com/compare/task?id=tr", f"/campaign/{cid}/tasks", "/elsewhere"):
            steps = client.get(f"/campaign/{cid}/steps",
                               params={"id": "tr", "arm": "baseline", "run": "0", "field": "trace", "back": hostile}).text  # fmt: skip
            assert _href(steps, "back") == f"/campaign/{cid}/task?id=tr", hostile
