"""A running campaign's page follows it: trials written to the store while the page is open
appear without a reload, and the page reloads itself when the campaign finishes.

The writer is a real writable :class:`RunStore` in this process holding the campaign's run lock
(as ``ablation run`` does: a campaign stored as running whose lock nobody holds is shown
interrupted), the viewer a separate ``ablation view`` process holding the same file read-only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import view_browser

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.store.locks import CampaignLock

pytestmark = [pytest.mark.slow, pytest.mark.first, pytest.mark.xdist_group("view")]


def trial(i: int, arm: str) -> TaskResult:
    return TaskResult(task_id=f"t{i}", arm=arm, passed=i % 3 != 0 or arm == "baseline", latency_s=0.01)


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[tuple[RunStore, str]]:
    store = RunStore(tmp_path / "runs.db")
    cid = store.create_campaign(
        config=CampaignConfig(n_resamples=200), suite_fingerprint="f" * 64,
        task_digests={f"t{i}": "d" for i in range(6)}, baseline_agent="a", candidate_agent="b",
    )  # fmt: skip
    lock = CampaignLock(store.path, cid)
    store.append_many(cid, [trial(i, arm) for i in range(2) for arm in ("baseline", "candidate")])
    yield store, cid
    lock.release()
    store.close()


def test_running_campaign_page_follows_progress(writer: tuple[RunStore, str], browser: Any) -> None:
    store, cid = writer
    from playwright.sync_api import expect

    with view_browser.served(store.path) as url:
        page: Any = browser.new_page()
        page.goto(f"{url}/campaign/{cid}")
        assert page.locator("#trials").inner_text() == "4"
        excluded = page.locator("#excluded td:nth-child(1)").all_inner_texts()
        assert excluded == ["t2", "t3", "t4", "t5"]  # expected tasks without trials yet
        assert page.locator("body").get_attribute("data-progress") == f"/api/campaign/{cid}/progress"
        store.append_many(cid, [trial(i, arm) for i in range(2, 5) for arm in ("baseline", "candidate")])
        expect(page.locator("#trials")).to_have_text("10", timeout=8000)  # no reload: polled
        store.append_many(cid, [trial(5, arm) for arm in ("baseline", "candidate")])
        store.set_status(cid, "complete")
        page.wait_for_selector("body:not([data-progress])", timeout=8000)  # reloaded
        assert page.locator("#status").inner_text() == "complete"
        assert page.locator("#trials").inner_text() == "12"
        assert page.locator("#mcnemar-p .num").get_attribute("data-value") is not None
