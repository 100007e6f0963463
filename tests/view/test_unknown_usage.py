"""A task page shows a trial's unknown cost and token counts as unknown, never as 0 and never by
leaving the row out beside an arm that has it; a known cost carries its currency.

The store is written with :class:`~ablation.store.RunStore`: the baseline states its usage and a
cost in EUR; the candidate's usage leaves its input tokens unknown (``None``, as a model call that
stated none) and its model has no price, so its cost and token total are unknown too; a third
trial has neither usage nor cost (an agent that reports neither) and gets neither row. Each
trial's facts are read off the page over HTTP (Starlette's test client) and checked against the
stored trial.
"""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.outputs import USAGE_METRICS, TrialUsage, usage_metrics
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

KNOWN = TrialUsage(input_tokens=120, output_tokens=8, model_requests=1, model="gpt-4o")
PARTLY = TrialUsage(input_tokens=None, output_tokens=12, model_requests=1, model="x-unpriced")
#: As a run stores them: the usage's known counts are metrics too (usage_metrics).
TRIALS = [
    TaskResult(task_id="t", arm="baseline", passed=True, output="4", latency_s=0.5, cost=0.0734,
               cost_currency="EUR", cost_source="agent", usage=KNOWN, metrics=usage_metrics(KNOWN)),
    TaskResult(task_id="t", arm="candidate", passed=True, output="4", latency_s=0.6, usage=PARTLY,
               metrics=usage_metrics(PARTLY)),
    TaskResult(task_id="plain", arm="baseline", passed=True, output="1", latency_s=0.1),
    TaskResult(task_id="plain", arm="candidate", passed=True, output="1", latency_s=0.1),
]  # fmt: skip


def _facts(page: str, arm: str) -> dict[str, str]:
    """The first trial of ``arm``: its facts table, name -> shown text."""
    start = page.index(f'<div class="trial {arm}"')
    table = page[start : page.index("</table>", start)]
    rows = re.findall(r"<tr><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td></tr>", table)
    return {html.unescape(k): html.unescape(re.sub(r"<[^>]+>", "", v)) for k, v in rows}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("unknown") / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="f",
            task_digests={"t": "d", "plain": "d"}, baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, TRIALS)
        store.set_status(cid, "complete")
        stored = {(r.task_id, r.arm): r for r in store.results(cid)}
    assert stored[("t", "candidate")].tokens is None and stored[("t", "candidate")].cost is None
    with TestClient(create_app(Catalog(path))) as client:
        got = {tid: client.get(f"/campaign/{cid}/task", params={"id": tid}) for tid in ("t", "plain")}
    assert all(r.status_code == 200 for r in got.values())
    return {tid: r.text for tid, r in got.items()}


def test_unknown_cost_and_tokens_are_shown_unknown(pages: dict[str, str]) -> None:
    facts = _facts(pages["t"], "candidate")
    usage = TRIALS[1].usage
    assert usage is not None
    unknown = [name for name in USAGE_METRICS if getattr(usage, name) is None]
    assert unknown == ["input_tokens"]
    for name in ("cost", "tokens", *unknown):
        assert facts.get(name, "").startswith("unknown"), (name, facts)
    for name in USAGE_METRICS:  # the known counts are the stored ones
        if name not in unknown:
            assert float(facts[name]) == getattr(usage, name), name


def test_a_known_cost_has_its_currency_and_known_tokens_their_total(pages: dict[str, str]) -> None:
    facts = _facts(pages["t"], "baseline")
    trial = TRIALS[0]
    assert trial.usage is not None and trial.cost is not None
    amount, currency = facts["cost"].split()
    assert float(amount) == pytest.approx(trial.cost, rel=1e-3)
    assert currency == trial.cost_currency
    assert int(facts["tokens"]) == trial.usage.total_tokens
    assert "unknown" not in " ".join(facts.values())


def test_a_trial_without_usage_or_cost_has_neither_row(pages: dict[str, str]) -> None:
    for arm in ("baseline", "candidate"):
        facts = _facts(pages["plain"], arm)
        assert "cost" not in facts and "tokens" not in facts, facts
