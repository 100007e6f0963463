"""Long step lists side by side: a list cut to the rows shown says which steps are shown of how
many, the first divergence is always among them (with equal steps before it to read it by), its
row carries the anchor, and one huge step cannot swell the page.

The page is read over HTTP (Starlette's test client) from a store written by a real campaign.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from ablation import AblationTask, AgentOutput, CampaignConfig
from ablation.run.campaign import run_ablation_campaign
from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from ablation.view.traces import MAX_STEPS, side_by_side

ROW = re.compile(r"<tr( class=\"diverge\" id=\"([^\"]+)\")?><td>(\d+)</td>")
NOTE = re.compile(r"Steps (\d+) to (\d+) shown, of (\d+) \(baseline (\d+), candidate (\d+)\)")
#: Equal steps a reader needs before a divergence to see what led to it.
MIN_CONTEXT = 10


def _check(markup: str, left: list[Any], right: list[Any], split: int | None) -> list[int]:
    """The rows of one field's table, after checking what every cut must keep; ``split`` is
    the first step where the lists differ (computed by the caller, not the viewer)."""
    rows = [int(m.group(3)) for m in ROW.finditer(markup)]
    total = max(len(left), len(right))
    assert rows == list(range(rows[0], rows[0] + len(rows))) if rows else total == 0
    assert len(rows) == min(total, MAX_STEPS)
    note = NOTE.search(markup)
    if len(rows) < total:
        assert note is not None, markup[:300]
        assert tuple(int(g) for g in note.groups()) == (rows[0], rows[-1], total, len(left), len(right))
    else:
        assert note is None
    marked = [(int(m.group(3)), m.group(2)) for m in ROW.finditer(markup) if m.group(1)]
    if split is None:
        assert marked == [] and "(identical)" in markup
    else:
        assert marked == [(split, "first-divergence")]
        assert f"first divergence at step {split}" in markup
        assert split - rows[0] >= min(split, MIN_CONTEXT)
    return rows


def _split(left: list[Any], right: list[Any]) -> int | None:
    for i in range(max(len(left), len(right))):
        if i >= len(left) or i >= len(right) or left[i] != right[i]:
            return i
    return None


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3 * MAX_STEPS), st.integers(0, 3 * MAX_STEPS), st.data())
def test_a_cut_list_keeps_the_divergence_and_says_what_it_shows(n: int, extra: int, data: st.DataObject) -> None:
    left = list(range(n))
    right = list(range(n + extra))
    if n and data.draw(st.booleans()):
        at = data.draw(st.integers(0, n - 1))
        right[at] = -1
    split = _split(left, right)
    _check(side_by_side({"trace": left}, {"trace": right}), left, right, split)


def _steps(n: int, last: str) -> list[dict[str, Any]]:
    return [{"step": k, "tool": "search" if k < n - 1 else last} for k in range(n)]


def baseline(i: int) -> AgentOutput:
    return AgentOutput(output="ok", trace=_steps(600 if i < 2 else 50, "search"))


def candidate(i: int) -> AgentOutput:
    """t0: the same 600 steps but the last; t1: the same; t2: one step of 50,000 characters."""
    if i == 2:
        return AgentOutput(output="ok", trace=[*_steps(49, "search"), {"blob": "y" * 50_000}])
    return AgentOutput(output="nok", trace=_steps(600, "delete_all" if i == 0 else "search"))


def test_the_task_page_shows_a_late_divergence_and_says_what_it_left_out(tmp_path: Path) -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="ok") for i in range(3)]
    ran = run_ablation_campaign(baseline, candidate, tasks, config=CampaignConfig(n_resamples=100),
                                store=tmp_path / "runs.db")  # fmt: skip
    cid = ran.provenance.campaign_id
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        page = client.get(f"/campaign/{cid}/task", params={"id": "t0"}).text
        left, right = _steps(600, "search"), _steps(600, "delete_all")
        rows = _check(page, left, right, 599)
        assert rows[-1] == 599
        row = re.search(r'id="first-divergence">(.*?)</tr>', page, re.S)
        assert row is not None and "delete_all" in html.unescape(row.group(1))
        assert 'href="#first-divergence"' in page

        page = client.get(f"/campaign/{cid}/task", params={"id": "t1"}).text
        assert _check(page, left, left, None) == list(range(MAX_STEPS))

        page = client.get(f"/campaign/{cid}/task", params={"id": "t2"}).text
        row = re.search(r'id="first-divergence">(.*?)</tr>', page, re.S)
        assert row is not None
        assert "y" * 50_000 not in page and "truncated" in row.group(1)
        assert len(page) < 200_000
