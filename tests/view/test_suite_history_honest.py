"""The suite history page shows every campaign of the suite: none left out without a word, and a
verdict only for a campaign that completed (as the campaign list and ``ablation list`` do); a
campaign page that shows the verdict of an unfinished campaign's trials says so.

Before, a campaign whose report could not be built was skipped silently, and a running, killed
or aborted campaign got the verdict of its trials so far as a badge. The pages are read over HTTP
from the viewer's app (Starlette's test client).
"""

from __future__ import annotations

import html
import sqlite3
from contextlib import closing
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

SUITE = "b" * 64
TASKS = [f"t{i}" for i in range(6)]


def _campaign(store: RunStore, name: str, status: str) -> str:
    cid = store.create_campaign(
        config=CampaignConfig(n_resamples=100), suite_fingerprint=SUITE,
        task_digests={t: "d" for t in TASKS}, baseline_agent="base", candidate_agent="cand",
        campaign_id=f"c-{name}",
    )  # fmt: skip
    store.append_many(cid, [
        TaskResult(task_id=t, arm=arm, passed=arm == "baseline" or t != "t1")
        for t in TASKS for arm in ("baseline", "candidate")
    ])  # fmt: skip
    if status != "running":
        store.set_status(cid, status)
        store.update_provenance(cid, verdict="pass")
    return cid


def test_every_campaign_is_shown_and_only_a_completed_one_has_a_verdict(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        done, killed, broken = (_campaign(store, n, s) for n, s in
                                (("done", "complete"), ("killed", "running"), ("broken", "running")))  # fmt: skip
    with closing(sqlite3.connect(path)) as db:  # a trial row no ablation wrote: its report fails
        db.execute("UPDATE trials SET result_json = 'not json' WHERE campaign_id = ? AND task_id = 't2'", (broken,))
        db.commit()
    with TestClient(create_app(Catalog(path))) as client:

        def _get(address: str) -> str:
            answer = client.get(address)
            assert answer.status_code == 200, (address, answer.status_code)
            return html.unescape(answer.text)

        body, pages = (_get(f"/suite/{SUITE}"), {cid: _get(f"/campaign/{cid}") for cid in (done, killed)})
    # a campaign page says whether its verdict is the recorded one or that of the trials so far
    assert "Verdict of the trials so far" in pages[killed] and "trials so far" not in pages[done]
    rows = {cid: body[body.index(f'href="/campaign/{cid}"'):].split("</tr>")[0] for cid in (done, killed)}
    assert 'class="badge pass"' in rows[done]
    assert 'class="badge pass"' not in rows[killed] and 'class="badge fail"' not in rows[killed]
    assert f"campaign {broken!r}" in body  # not left out without a word
