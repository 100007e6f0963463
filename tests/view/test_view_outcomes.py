"""A campaign page shows the report's paired outcomes, every uplift interval it lists (not only its
bootstrap one) and, with several runs per task, its repeated-runs block, as ``ablation report``
does: the paired t interval on per-task differences, the tasks that regressed in every run.

The store is a real :class:`RunStore` of 3 runs per task; the references are computed here from
the stored trials: each task's pass fractions, the sign of their difference (the report's
classification with several runs), scipy's t interval of the per-task differences, and the tasks
the baseline passed in every run and the candidate in none.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
from scipy import stats
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

RUNS = 3
#: Task -> passes of the baseline's and the candidate's runs.
PASSES = {f"t{i:02d}": ((i * 7) % 4, (i * 5 + 3) % 4) for i in range(24)}


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)))


def _section(page: str, tid: str) -> str:
    found = re.search(rf'<table[^>]* id="{tid}">(.*?)</table>', page, re.S)
    assert found is not None, f"no table {tid}"
    return _text(found.group(1))


def test_outcomes_intervals_and_repeated_runs(tmp_path: Path) -> None:
    passes = {t: (min(b, RUNS), min(c, RUNS)) for t, (b, c) in PASSES.items()}
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=200, runs=RUNS), suite_fingerprint="d" * 64,
            task_digests=dict.fromkeys(passes, "d"), baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=t, arm=arm, run=run, passed=run < n, latency_s=0.01)
            for t, ns in passes.items() for arm, n in zip(("baseline", "candidate"), ns, strict=True)
            for run in range(RUNS)
        ])  # fmt: skip
        store.set_status(cid, "complete")
    diffs = np.array([(c - b) / RUNS for b, c in passes.values()])
    low, high = stats.t.interval(0.95, len(diffs) - 1, loc=diffs.mean(), scale=stats.sem(diffs))
    stable = sorted(t for t, (b, c) in passes.items() if b == RUNS and c == 0)
    assert stable and (diffs < 0).any() and (diffs > 0).any()
    with TestClient(create_app(Catalog(path))) as client:
        page = client.get(f"/campaign/{cid}").text
    outcomes = _section(page, "outcomes")
    assert f"{int((diffs < 0).sum())} (regressions)" in outcomes
    assert f"{int((diffs > 0).sum())} (improvements)" in outcomes
    headline = _section(page, "headline")
    shown = [
        (float(a), float(b))
        for a, b in re.findall(r"\[([-+]?[\d.]+) pp, ([-+]?[\d.]+) pp\] paired t test", headline)
    ]  # fmt: skip
    assert any(abs(a - 100 * low) < 0.051 and abs(b - 100 * high) < 0.051 for a, b in shown), (
        (100 * low, 100 * high), headline,
    )  # fmt: skip
    repeated = _section(page, "repeated")
    assert f"stable regressions {', '.join(stable)}" in repeated
