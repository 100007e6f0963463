"""A campaign page and a comparison show what ``ablation report`` writes with its verdict: the
gates' line with the verdict's note (here: no discordant pairs and the bound on the regression
rate), the report's notes (costs in different currencies, a tool whose use changed) and, when
nothing regressed, the one-sided upper bound on the regression rate.

The store is a real :class:`RunStore` of 30 tasks both arms pass, the baseline paying in USD and
calling a tool 3 or 4 times, the candidate paying in EUR and calling it once. The references: the
report ``ablation report`` builds of it (:func:`report_stored_campaign`), and the Clopper-Pearson
bound for 0 regressions in 30 pairs from scipy's beta quantile.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from scipy.stats import beta
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.analysis.stored import report_stored_campaign
from ablation.outputs import TrialUsage
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

N = 30


def _trial(i: int, arm: str) -> TaskResult:
    base = arm == "baseline"
    usage = TrialUsage(input_tokens=100, output_tokens=10, model_requests=1,
                       tool_calls={"search": 3 + i % 2 if base else 1})  # fmt: skip
    return TaskResult(
        task_id=f"n{i:02d}", arm=arm, passed=True, latency_s=0.01, output=i, usage=usage,
        cost=0.01 if base else 0.02, cost_currency="USD" if base else "EUR", cost_source="agent",
    )  # fmt: skip


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_verdicts_notes_and_the_regression_bound_are_shown(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="c" * 64,
            task_digests={f"n{i:02d}": "d" for i in range(N)}, baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [_trial(i, arm) for i in range(N) for arm in ("baseline", "candidate")])
        store.set_status(cid, "complete")
        report = report_stored_campaign(store, cid)[0]
    assert any("EUR" in n for n in report.notes) and any("search" in n for n in report.notes)
    assert report.verdict_note and report.zero_regression_upper_bound is not None
    bound = float(beta.ppf(0.95, 1, N))  # one-sided 95% Clopper-Pearson, 0 of N
    assert abs(report.zero_regression_upper_bound - bound) < 1e-9
    with TestClient(create_app(Catalog(path))) as client:
        pages = [
            client.get(f"/campaign/{cid}").text,
            client.get("/compare", params={"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate"}).text,
        ]
    for page in pages:
        verdict = re.search(r'id="verdict">(.*?)</div>', page, re.S)
        assert verdict is not None
        said = _text(verdict.group(1))
        for note in [*report.notes, report.verdict_note]:
            assert " ".join(note.split()) in said, (note, said)
    headline = re.search(r'<table class="figures" id="headline">.*?</table>', pages[0], re.S)
    assert headline is not None
    values = [float(v) for v in re.findall(r'data-value="([0-9.e-]+)"', headline.group())]
    assert any(abs(v - bound) < 1e-12 for v in values), values
