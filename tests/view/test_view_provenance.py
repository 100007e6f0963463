"""A campaign page and a comparison end with the report's provenance, as every ``ablation
report`` format does: how errors counted (``on_error``), the resamples, alpha and confidence the
figures used, and the campaign's seed; the page showed its runs and seed only, so a campaign whose
errors were left out of the pairing read like one where they failed.

The store is a real :class:`RunStore`; the references are the campaign's stored settings
(:meth:`RunStore.get_campaign`); pages are read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog


def test_pages_name_the_settings_their_figures_used(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    config = CampaignConfig(n_resamples=137, alpha=0.1, confidence_level=0.9, on_error="exclude", seed=42)
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=config, suite_fingerprint="b" * 64, task_digests={f"t{i}": "d" for i in range(6)},
            baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=f"t{i}", arm=arm, passed=i % 3 != 0, latency_s=0.01)
            for i in range(6) for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "complete")
        stored = store.get_campaign(cid).config
    with TestClient(create_app(Catalog(path))) as client:
        pages = [
            client.get(f"/campaign/{cid}").text,
            client.get("/compare", params={"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"}).text,
        ]
    for page in pages:
        found = re.search(r'id="provenance">(.*?)</p>', page, re.S)
        assert found is not None, "no provenance"
        said = html.unescape(found.group(1))
        for fact in (f"on_error={stored.on_error}", f"{stored.n_resamples} resamples", f"alpha {stored.alpha:g}",
                     f"confidence {stored.confidence_level:.0%}", f"seed {stored.seed}"):  # fmt: skip
            assert fact in said, (fact, said)
