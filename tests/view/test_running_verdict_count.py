"""The campaign page of a campaign that did not complete says how many trials its verdict is of,
the report's own count, while its status line, polled, follows the run: the two numbers are then
told apart instead of a verdict of the first trials standing under a count of many more.

The writer is a real writable :class:`RunStore` holding the campaign's run lock (as ``ablation
run`` does); the reference is the report ``ablation report`` builds of the stored campaign
(:func:`report_stored_campaign`) at each moment; pages are read over HTTP (Starlette's test
client).
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.analysis.stored import report_stored_campaign
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.store.locks import CampaignLock
from ablation.view.app import create_app
from ablation.view.catalog import Catalog


def _trials(tasks: range) -> list[TaskResult]:
    return [
        TaskResult(task_id=f"t{i}", arm=arm, passed=i % 3 != 0 or arm == "baseline", latency_s=0.01)
        for i in tasks for arm in ("baseline", "candidate")
    ]  # fmt: skip


def _counted(store: RunStore, cid: str) -> int:
    report = report_stored_campaign(store, cid)[0]
    return report.baseline.n_trials + report.candidate.n_trials


def _shown(page: str) -> int:
    found = re.search(r'<span id="verdict-trials">(\d+)</span>', page)
    assert found is not None, "the verdict does not say how many trials it is of"
    return int(found.group(1))


def test_the_verdict_of_an_unfinished_campaign_names_its_trial_count(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    cid = store.create_campaign(
        config=CampaignConfig(n_resamples=100), suite_fingerprint="f" * 64,
        task_digests={f"t{i}": "d" for i in range(8)}, baseline_agent="a", candidate_agent="b",
    )  # fmt: skip
    lock = CampaignLock(store.path, cid)
    try:
        store.append_many(cid, _trials(range(2)))
        with TestClient(create_app(Catalog(store.path))) as client:
            first = client.get(f"/campaign/{cid}").text
            assert _shown(first) == _counted(store, cid) == 4
            store.append_many(cid, _trials(range(2, 7)))
            assert client.get(f"/api/campaign/{cid}/progress").json()["trials"] == 14
            assert _shown(client.get(f"/campaign/{cid}").text) == _counted(store, cid) == 14
            lock.release()  # killed: interrupted, still unfinished
            assert _shown(client.get(f"/campaign/{cid}").text) == _counted(store, cid)
            store.append_many(cid, _trials(range(7, 8)))
            store.set_status(cid, "complete")
            assert 'id="verdict-trials"' not in client.get(f"/campaign/{cid}").text
    finally:
        lock.release()
        store.close()
