"""A suite's history of every campaign (``?limit=0``) lists each one from its summary and builds
the report figures and task table of the newest ``HISTORY_REPORTS`` only (counted as the
catalog computes them, ``Catalog.history``), saying which figures are of those; with 10^4 campaigns one report each was minutes and
gigabytes. The figures it shows are the reports' own, read independently.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ablation.analysis.stored import report_stored_campaign
from ablation.config import CampaignConfig
from ablation.schema import TaskResult
from ablation.store.run_store import RunStore
from ablation.view import suite_pages
from ablation.view.catalog import Catalog
from ablation.view.markup import pct

SUITE, CAP, CAMPAIGNS = "e" * 64, 3, 8


def _store(path: Path) -> list[str]:
    """``CAMPAIGNS`` complete campaigns of one suite, oldest first; campaign k's candidate
    passes k of its 8 tasks."""
    ids = []
    with RunStore(path) as store:
        for k in range(CAMPAIGNS):
            cid = store.create_campaign(
                config=CampaignConfig(n_resamples=100, seed=k), suite_fingerprint=SUITE,
                task_digests={f"t{i}": "d" for i in range(8)}, baseline_agent="base", candidate_agent=f"c{k}",
                campaign_id=f"camp-{k}",
            )  # fmt: skip
            store.append_many(cid, [
                TaskResult(task_id=f"t{i}", arm=arm, passed=arm == "baseline" or i < k)
                for i in range(8) for arm in ("baseline", "candidate")
            ])  # fmt: skip
            store.set_status(cid, "complete")
            store.update_provenance(cid, verdict="pass" if k % 2 else "fail")
            ids.append(cid)
    return ids


def test_a_history_of_every_campaign_builds_the_newest_reports_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    ids = _store(path)
    monkeypatch.setattr(suite_pages, "HISTORY_REPORTS", CAP, raising=False)
    built: dict[str, list[str]] = {"history": []}
    for name in built:
        method = getattr(Catalog, name)

        def counted(self: Catalog, campaign_id: str, *, _method: Any = method, _name: str = name) -> Any:
            built[_name].append(campaign_id)
            return _method(self, campaign_id)

        monkeypatch.setattr(Catalog, name, counted)
    catalog = Catalog(path)
    try:
        page = suite_pages.history_page(catalog, SUITE, "0")
    finally:
        catalog.close()
    newest = ids[-CAP:]
    assert sorted(built["history"]) == sorted(newest)
    rows = re.findall(r"<tr><td><a href=\"/campaign/([^\"]*)\".*?</tr>", page)
    assert rows == ids  # every campaign listed, oldest first
    for cid, row in zip(ids, re.findall(r"<tr><td><a href=\"/campaign/[^\"]*\".*?</tr>", page), strict=True):
        k = int(cid.split("-")[1])
        assert ("pass" if k % 2 else "fail").upper() in row.upper()  # the verdict recorded
        if cid in newest:
            with RunStore(path, read_only=True) as store:
                report = report_stored_campaign(store, cid)[0]
            assert pct(report.candidate.pass_rate) in row and "not computed" not in row
        else:
            assert row.count("not computed") == 2
    assert f"newest {CAP} campaigns listed" in page and f"The {CAMPAIGNS - CAP} older ones" in page
    assert page.count('data-campaign="') == CAP  # the plot's points
