"""A task page on a phone, 375 px wide, in a real headless Chromium: an agent named by its file's
path (``ablation run ... --baseline /home/.../agents/support_policy.py:baseline``) heads each
arm's column, and the page still never scrolls sideways (docs/DESIGN.md: "a page 375 px wide
never scrolls sideways"), nor does the store's path in the header. The side-by-side grid's
columns took the width of their longest word, and the header's store path would not wrap, so
such names pushed the page 195 px past the screen.

A store of one campaign written directly (no agent runs), served by ``ablation view``
(tests/view/view_browser.py); the browser is the worker's Chromium (tests/view/conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import view_browser

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("view")]

WIDTH = 375
#: Agent specs as a user types them: a file's absolute path and its function.
AGENTS = ("/home/someone/projects/agents/support_policy.py:baseline",
          "/home/someone/projects/agents/support_policy.py:candidate")  # fmt: skip


def _store(path: Path) -> str:
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="5" * 64,
            task_digests={"t1": "d"}, baseline_agent=AGENTS[0], candidate_agent=AGENTS[1],
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id="t1", arm=arm, passed=arm == "baseline", output=f"answer of the {arm}")
            for arm in ("baseline", "candidate")
        ])  # fmt: skip
        store.set_status(cid, "complete")
    return cid


def test_a_task_page_with_long_agent_names_fits_a_phone_screen(tmp_path: Path, browser: Any) -> None:
    path = tmp_path / "a-project-directory-with-a-long-name" / ".ablation" / "runs.db"
    path.parent.mkdir(parents=True)
    cid = _store(path)
    arms = f"baseline={quote(cid + ':baseline')}&candidate={quote(cid + ':candidate')}"
    pages = [f"/campaign/{quote(cid, safe='')}/task?id=t1", f"/compare/task?{arms}&id=t1"]
    with view_browser.served(path) as url:
        context = browser.new_context(viewport={"width": WIDTH, "height": 800})
        try:
            page = context.new_page()
            for shown in pages:
                assert page.goto(url.rstrip("/") + shown).status == 200, shown
                assert AGENTS[0] in page.inner_text("#arm-baseline h2")
                assert str(path) in page.inner_text("header .store")
                past = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert past <= 0, (shown, past)
        finally:
            context.close()
