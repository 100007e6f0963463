"""A trial whose spans went beyond the per-trial cap: the task page says how many were dropped
(the figure the report's drill-down gives), the end of the cut list is not a divergence, and
a cut trace gives the trial no usage (its counts would be lower bounds). ``ablation view DIR`` names a directory as such.

The step lists are checked against the uncut lists they were cut from (the oracle: the first
divergence of the whole lists, when it lies where both cut lists still hold steps); the page is
read over HTTP (Starlette's test client) from a store written by a real campaign whose agents
emit OpenTelemetry spans, with the bytes cap lowered so that one arm's large spans go over it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here
from helpers.otel_provider import sdk_provider_for_one_test
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.view.traces import side_by_side

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("starlette")

from opentelemetry import trace
from starlette.testclient import TestClient

import ablation.run.spans as collection
from ablation import AblationTask, CampaignConfig, RunStore
from ablation.analysis.stored import report_stored_campaign
from ablation.render import render
from ablation.run.campaign import run_ablation_campaign
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

TRACER = trace.get_tracer("tests.view.dropped")
MARKED = re.compile(r'<tr class="diverge" id="first-divergence"><td>(\d+)</td>')
STEPS = 60


def _whole_split(left: list[int], right: list[int]) -> int | None:
    for i in range(max(len(left), len(right))):
        if i >= len(left) or i >= len(right) or left[i] != right[i]:
            return i
    return None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2), max_size=40), st.lists(st.integers(0, 2), max_size=40),
    st.integers(0, 40), st.integers(0, 40), st.booleans(), st.booleans(),
)  # fmt: skip
def test_a_cut_list_diverges_only_where_both_were_kept(
    left: list[int], right: list[int], keep_left: int, keep_right: int, cut_left: bool, cut_right: bool
) -> None:
    """The cut lists are prefixes of whole lists: a divergence is shown exactly when the whole
    lists diverge before either cut (then at that step), and nowhere else."""
    kl = min(keep_left, len(left)) if cut_left else len(left)
    kr = min(keep_right, len(right)) if cut_right else len(right)
    dl, dr = len(left) - kl, len(right) - kr
    whole = _whole_split(left, right)
    horizon = min([n for n, d in ((kl, dl), (kr, dr)) if d], default=max(len(left), len(right)))
    expected = whole if whole is not None and whole < horizon else None
    page = side_by_side({"spans": left[:kl]}, {"spans": right[:kr]}, dropped={"spans": (dl, dr)})
    marked = [int(m.group(1)) for m in MARKED.finditer(page)]
    [heading] = _headings(page)
    lost = ", ".join(f"{arm} {n} dropped" for arm, n in (("baseline", dl), ("candidate", dr)) if n)
    if expected is not None:
        assert marked == [expected]
        assert heading == f"spans side by side (first divergence at step {expected}{'; ' + lost if lost else ''})"
    else:
        assert marked == []
        assert heading == f"spans side by side ({'agree as far as both were kept; ' + lost if lost else 'identical'})"
    for arm, kept, n in (("baseline", kl, dl), ("candidate", kr, dr)):
        assert (f"{arm}: {kept} kept, {n} dropped" in page) == bool(n)


@pytest.fixture
def sdk_provider() -> Iterator[None]:
    yield from sdk_provider_for_one_test()


def _agent(big: bool, last_tool: str, answer: str) -> Any:
    """One model call (3 in / 2 out tokens), then :data:`STEPS` tool calls of tool ``t`` (the
    last one ``last_tool``), then ``answer``; ``big``: each tool span carries 1,000 characters
    more."""

    def agent(task: str) -> str:
        with TRACER.start_as_current_span("chat", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 2,
        }):  # fmt: skip
            pass
        for k in range(STEPS):
            attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t" if k < STEPS - 1 else last_tool}
            with TRACER.start_as_current_span(f"step {k}", attributes=attributes) as span:
                if big:
                    span.set_attribute("payload", "y" * 1000)
        return answer

    return agent


def _headings(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<h[24]>(.*?)</h[24]>", page)]


def test_the_task_page_says_spans_were_dropped_and_keeps_their_end_out_of_the_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_provider: None
) -> None:
    monkeypatch.setattr(collection, "MAX_BYTES", 20_000)  # about 18 of the baseline's large spans
    tasks = [AblationTask(task_id="t0", input_data="t0", expected_output="ok")]
    store = tmp_path / "runs.db"
    config = CampaignConfig(n_resamples=100, traces="on")
    ran = run_ablation_campaign(_agent(True, "t", "ok"), _agent(False, "u", "no"), tasks, config=config, store=store)
    cid = ran.provenance.campaign_id
    assert cid is not None
    with RunStore(store, read_only=True) as s:
        trials = {t.arm: t for t in s.iter_results(cid)}
    base, cand = trials["baseline"].spans, trials["candidate"].spans
    assert base is not None and cand is not None
    assert base.dropped > 0 and base.count + base.dropped == STEPS + 1 and cand.dropped == 0
    stored, _ = report_stored_campaign(RunStore(store, read_only=True))
    details = render(stored, "terminal", details=True)  # the regressed task's drill-down
    assert f"{base.count} spans, {base.dropped} dropped" in " ".join(details.split())

    with TestClient(create_app(Catalog(store))) as client:
        page = client.get(f"/campaign/{cid}/task", params={"id": "t0"}).text
    headings = _headings(page)
    # the candidate's last step (tool "u") lies beyond the baseline's cut: no divergence shown
    assert f"spans side by side (agree as far as both were kept; baseline {base.dropped} dropped)" in headings
    assert 'id="first-divergence"' not in page and "first divergence" not in page
    assert f"baseline: {base.count} kept, {base.dropped} dropped" in page
    assert f"spans ({base.count} kept, {base.dropped} dropped over the per-trial cap)" in headings
    assert headings.count("spans") == 1  # the candidate's list, not cut, says nothing of drops
    # a cut trace gives no usage (a dropped span may be a call: its counts would be lower
    # bounds given as counts); the candidate's whole trace gives its own
    assert trials["baseline"].usage is None and trials["candidate"].usage is not None
    assert headings.count("usage") == 1 and not any("truncated trace" in h for h in headings)
    tool_calls = re.findall(r"<tr><td>tool_calls\.t</td><td>([^<]*)</td></tr>", page)
    assert tool_calls == [str(STEPS - 1)]
    tokens = re.findall(r"<tr><td>tokens</td><td>([^<]*)</td></tr>", page)
    assert tokens == ["5"]
    # a trial stored before a cut trace gave no usage holds the kept spans' counts: marked
    from collections import Counter

    from ablation.outputs import TrialUsage, joined_models
    from ablation.spans import summarize
    from ablation.view.task_page import _trial

    kept = summarize(base.records(), timeline=False)
    counted = TrialUsage(
        input_tokens=kept.input_tokens, output_tokens=kept.output_tokens, cached_tokens=kept.cached_tokens,
        cache_write_tokens=kept.cache_write_tokens, model_requests=kept.model_calls,
        tool_calls=dict(Counter(kept.tools)), model=joined_models(kept.models),
    )  # fmt: skip
    old = html.unescape(_trial(trials["baseline"].model_copy(update={"usage": counted}), "c"))
    assert f"usage (from a truncated trace: {base.dropped} spans dropped, not counted)" in old


def test_view_of_a_directory_says_it_is_one(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    done = run_here(["view", str(folder), "--no-browser", "--port", "0"])
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"ablation: error: {folder} is a directory, not a run store file"]
