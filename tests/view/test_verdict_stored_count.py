"""The verdict of a campaign that did not complete names the trials it is of and the trials
stored when the page was built, and the second is what the store holds: a run interrupted
between a task's two arms stores a trial the pairing leaves out, so the verdict's count (the
report's) is below the status line's.

The store is a real :class:`RunStore`; the references are the store's own rows
(:meth:`RunStore.results`) and the report ``ablation report`` builds of the stored campaign
(:func:`report_stored_campaign`); the page is read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.analysis.stored import report_stored_campaign
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page)))


def test_an_interrupted_campaigns_verdict_does_not_call_its_paired_trials_all_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="f" * 64,
            task_digests={f"t{i}": "d" for i in range(6)}, baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        trials = [
            TaskResult(task_id=f"t{i}", arm=arm, passed=arm == "baseline" or i % 2 == 0, latency_s=0.01)
            for i in range(3) for arm in ("baseline", "candidate")
        ]  # fmt: skip
        trials.append(TaskResult(task_id="t3", arm="baseline", passed=True, latency_s=0.01))
        store.append_many(cid, trials)
        store.set_status(cid, "interrupted")
        stored = len(store.results(cid))
        report = report_stored_campaign(store, cid)[0]
    counted = report.baseline.n_trials + report.candidate.n_trials
    assert (stored, counted) == (7, 6)  # the baseline-only trial is left out of the pairing
    with TestClient(create_app(Catalog(path))) as client:
        page = client.get(f"/campaign/{cid}").text
    verdict = re.search(r'<div class="verdict[^"]*" id="verdict">(.*?)</div>', page, re.S)
    assert verdict is not None
    said = re.search(r"(\d+) trials stored when this page was built", _text(verdict.group(1)))
    assert said is not None, _text(verdict.group(1))
    assert int(said.group(1)) == stored
    assert re.search(r'<span id="verdict-trials">(\d+)</span>', page).group(1) == str(counted)  # type: ignore[union-attr]
