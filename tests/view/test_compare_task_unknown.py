"""The page of a task in a comparison naming a campaign the store does not hold is a 404, as
every page about a campaign the store does not hold (DESIGN.md section 8), naming the campaign;
two known campaigns give the page. The store is a real campaign (:func:`run_ablation_campaign`);
pages are read over HTTP (Starlette's test client)."""

from __future__ import annotations

import html
from pathlib import Path

from starlette.testclient import TestClient

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.view.app import create_app
from ablation.view.catalog import Catalog


def test_an_unknown_campaign_in_a_compared_task_is_a_404(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
    cid = run_ablation_campaign(lambda x: x, lambda x: 0, tasks, config=CampaignConfig(n_resamples=100),
                                store=store).provenance.campaign_id  # fmt: skip
    with TestClient(create_app(Catalog(store))) as client:
        known = client.get("/compare/task", params={"baseline": f"{cid}:baseline",
                                                    "candidate": f"{cid}:candidate", "id": "t1"})  # fmt: skip
        assert known.status_code == 200 and 'id="outcome"' in known.text
        for baseline, candidate in ((f"nope-{cid}:baseline", f"{cid}:candidate"),
                                    (f"{cid}:baseline", "nope-2"), ("", "")):  # fmt: skip
            page = client.get("/compare/task", params={"baseline": baseline, "candidate": candidate, "id": "t1"})
            assert page.status_code == 404, (baseline, candidate)
            missing = next(t for t in (baseline, candidate) if not t.startswith(f"{cid}:"))
            assert f"no campaign {missing.rpartition(':')[0] or missing!r}" in html.unescape(page.text)
