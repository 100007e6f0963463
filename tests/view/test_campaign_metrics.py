"""A campaign page, and the compare page of its two arms, show the report's arm summaries and
paired metrics (latency, cost, token usage), each figure the one ``ablation report --format json``
gives: a metric no pair has is
shown unknown, never 0, and a cost some trials did not state says how many were priced.

The campaign is a real run (:func:`run_ablation_campaign`): the baseline states its usage and a
cost on every task; the candidate's usage leaves its input tokens unknown and it states a cost on
even tasks only. The reference is the real command's JSON (``ablation report --store S --format
json``, the command line run in this process; a campaign's two arms compared give its report's
figures, DESIGN.md); the pages are read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here
from starlette.testclient import TestClient

from ablation import AblationTask, AgentOutput, CampaignConfig, run_ablation_campaign
from ablation.outputs import TrialUsage
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

pytestmark = pytest.mark.xdist_group("campaign-metrics")  # one worker builds the store once

TASKS = [AblationTask(task_id=f"t{i:02d}", input_data={"n": i}, expected_output=2 * i) for i in range(12)]


def baseline(task: dict[str, Any]) -> AgentOutput:
    n = int(task["n"])
    usage = TrialUsage(input_tokens=100 + n, output_tokens=10, model_requests=1, model="m")
    return AgentOutput(output=2 * n if n % 4 else 0, usage=usage, cost=0.01 * (n + 1))


def candidate(task: dict[str, Any]) -> AgentOutput:
    n = int(task["n"])
    usage = TrialUsage(input_tokens=None, output_tokens=12 + n, model_requests=1, model="m")
    return AgentOutput(output=2 * n, usage=usage, cost=None if n % 2 else 0.03 * (n + 1))


def _rows(page: str, tid: str) -> dict[str, list[str]]:
    """The table ``tid``: its first cell -> every cell, as text."""
    start = page.index(f'id="{tid}"')
    body = page[start : page.index("</table>", start)]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]
    text = [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in row] for row in rows if row]
    return {row[0]: row for row in text}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, Any]]:
    """The store of the campaign, its id and ``ablation report --format json`` of it."""
    path = tmp_path_factory.mktemp("metrics") / "runs.db"
    report = run_ablation_campaign(baseline, candidate, TASKS, config=CampaignConfig(n_resamples=100), store=path)
    cid = str(report.provenance.campaign_id)
    done = run_here(["report", cid, "--store", str(path), "--format", "json"])
    assert done.stdout, done.stderr
    return path, cid, json.loads(done.stdout)


@pytest.fixture(scope="module", params=["campaign", "compare"])
def shown(request: pytest.FixtureRequest, stored: tuple[Path, str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    path, cid, report = stored
    with TestClient(create_app(Catalog(path))) as client:
        if request.param == "campaign":
            page = client.get(f"/campaign/{cid}")
        else:
            page = client.get("/compare", params={"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"})
    assert page.status_code == 200
    return page.text, report


def test_paired_metrics_are_the_reports(shown: tuple[str, dict[str, Any]]) -> None:
    page, report = shown
    rows = _rows(page, "metrics")
    comparisons = {"latency (s)": report["latency"], "cost": report["cost"], **report["metrics"]}
    assert {"input_tokens", "output_tokens", "model_requests"} <= set(report["metrics"])
    for name, comp in comparisons.items():
        row = rows[name]
        assert (int(row[1]), int(row[2])) == (comp["n_pairs"], comp["n_left_out"]), name
        if name == "latency (s)":
            continue
        for cell, value in zip(row[3:5], (comp["baseline_mean"], comp["candidate_mean"]), strict=True):
            if value is None:  # no pair: unknown, not 0
                assert cell == "—", (name, row)
            else:
                assert float(cell) == pytest.approx(value, rel=5e-3), (name, row)
    assert report["metrics"]["input_tokens"]["n_pairs"] == 0


def test_arms_say_how_many_trials_were_priced(shown: tuple[str, dict[str, Any]]) -> None:
    page, report = shown
    rows = _rows(page, "arms")
    cand = report["candidate"]
    assert cand["cost_trials"] < cand["counted_trials"]
    assert f"{cand['cost_trials']} of {cand['counted_trials']} trials priced" in rows["cost total (mean)"][2]
    errors = rows["errors / timeouts / retried"]
    for cell, arm in zip(errors[1:], (report["baseline"], report["candidate"]), strict=True):
        assert cell == f"{arm['errors']} / {arm['timeouts']} / {arm['retried']}"
