"""A trace of a thousand long steps (5 MB a trial, ten times the task page's window of 100 and
five steps pages of 200): the task page shows a bounded window of it, each step cut with its full
length named, counts what it leaves out and links to the rest, which the steps page serves a page
at a time, every step reachable. Read over HTTP (Starlette's test client) from a real store.
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

N, SIZE, SPLIT = 1_000, 5_000, 800


def _trace(arm: str) -> list[dict[str, object]]:
    return [{"step": k, "text": (f"{arm if k >= SPLIT else 'same'}{k} " * SIZE)[:SIZE]} for k in range(N)]


def _store(path: Path) -> str:
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100, seed=5), suite_fingerprint="8" * 64,
            task_digests={"big": "d"}, baseline_agent="m:b", candidate_agent="m:c",
        )  # fmt: skip
        store.append_many(cid, [TaskResult(task_id="big", arm=arm, passed=True, output="x", trace=_trace(arm))
                                for arm in ("baseline", "candidate")])  # fmt: skip
        store.set_status(cid, "complete")
    return cid


def test_a_long_trace_is_a_bounded_page_with_the_rest_a_link_away(tmp_path: Path) -> None:
    cid = _store(tmp_path / "runs.db")
    full = len(_trace("baseline")[0]["text"])  # type: ignore[arg-type]
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        page = client.get(f"/campaign/{quote(cid)}/task", params={"id": "big"}).text
        assert len(page) < 1_500_000  # 2 x 1,000 steps of 5 KB: 10 MB of text
        assert f"first divergence at step {SPLIT}" in page and 'id="first-divergence"' in page
        cuts = [int(m) for m in re.findall(r"\[truncated \d+ of (\d+) chars\]", page)]
        assert len(cuts) >= 100 and min(cuts) > full  # each step cut, its full length named
        rows = [int(m) for m in re.findall(r"<tr(?: class=\"diverge\" id=\"[^\"]+\")?><td>(\d+)</td>", page)]
        assert len(rows) < 500 and SPLIT in rows
        assert re.search(rf"of {N} \(baseline {N}, candidate {N}\)", page)
        later = re.search(r'href="([^"]+)" class="next-steps"', page)
        earlier = re.search(r'href="([^"]+)" class="prev-steps"', page)
        assert later is not None and earlier is not None
        assert f"{N - 20} not shown" in page  # each trial's preview counts what it leaves out
        links = re.findall(r'href="([^"]+)" class="all-steps"', page)
        assert len(links) == 2
        seen: list[int] = []
        url: str | None = html.unescape(links[0])
        while url is not None:
            steps = client.get(url)
            assert steps.status_code == 200 and len(steps.text) < 2_500_000
            seen += [int(m) for m in re.findall(r'<tr class="step"><td>(\d+)</td>', steps.text)]
            nxt = re.search(r'href="([^"]+)" class="next"', steps.text)
            url = html.unescape(nxt.group(1)) if nxt else None
        assert seen == list(range(N))
        first = client.get(html.unescape(earlier.group(1))).text
        assert "<tr><td>0</td>" in first or re.search(r"<tr><td>\d+</td>", first)
        missing = client.get(f"/campaign/{quote(cid)}/steps", params={"id": "big", "arm": "baseline", "run": "7", "field": "trace"})
        assert missing.status_code == 404
