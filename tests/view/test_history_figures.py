"""A suite's history shows each campaign's figures as ``ablation report CAMPAIGN --format json``
gives them: both pass rates and their intervals, the uplift and its headline interval (their
exact values, ``data-value``, ``data-low`` and ``data-high``, equal to the report's JSON numbers
written the same way), and the verdict recorded when the campaign completed (the report's). The
campaigns: one run a task, three runs a task, a sequential one, and an interrupted one, which
then gains its missing trials (resumed) and is shown with its new figures, not the cached ones.

The history computes these through the report's own steps without the rest of the report
(``headline_figures``), so a refusal of those steps is an error line like a refused report.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation import (
    AblationTask,
    CampaignConfig,
    GatePolicy,
    SequentialPolicy,
    run_ablation_campaign,
)
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view import catalog as catalog_module
from ablation.view.catalog import Catalog
from ablation.view.suite_pages import history_page

pytestmark = pytest.mark.xdist_group("history-figures")  # one worker builds the store once

N = 30
_draws = itertools.count()


def _suite() -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i:02d}", input_data={"n": i}, expected_output=i) for i in range(N)]


def baseline(task: dict[str, Any]) -> int:
    """Wrong on every fourth task."""
    return task["n"] + (task["n"] % 4 == 0)


def candidate(task: dict[str, Any]) -> int:
    """Wrong on every fifth task."""
    return task["n"] + (task["n"] % 5 == 0)


def flaky(task: dict[str, Any]) -> int:
    """Wrong on every fifth task, and on every third call."""
    return task["n"] + (task["n"] % 5 == 0 or next(_draws) % 3 == 0)


def _store(path: Path) -> tuple[str, dict[str, str]]:
    """Three campaigns run (one run, three runs, sequential) and an interrupted one written by
    the store with the candidate's trials of its first ten tasks only; the suite's fingerprint
    and the campaign ids by name."""
    ids: dict[str, str] = {}
    for name, agent, config in (
        ("one", candidate, CampaignConfig(n_resamples=200, seed=1)),
        ("runs", flaky, CampaignConfig(n_resamples=200, seed=2, runs=3)),
        ("sequential", candidate, CampaignConfig(
            n_resamples=200, seed=3, sequential=SequentialPolicy(), gates=GatePolicy(noninferiority_margin=0.1))),
    ):  # fmt: skip
        report = run_ablation_campaign(baseline, agent, _suite(), config=config, store=path)
        ids[name] = report.provenance.campaign_id or ""
    with RunStore(path) as store:
        first = store.get_campaign(ids["one"])
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=200, seed=4), suite_fingerprint=first.suite_fingerprint,
            task_digests=dict(first.task_digests), baseline_agent="b", candidate_agent="c",
        )  # fmt: skip
        store.append_many(cid, [TaskResult(task_id=f"t{i:02d}", arm="baseline", passed=i % 4 > 0) for i in range(N)])
        store.append_many(cid, [TaskResult(task_id=f"t{i:02d}", arm="candidate", passed=i % 3 > 0) for i in range(10)])
        ids["interrupted"] = cid  # stored as running, with no live run: interrupted
    return first.suite_fingerprint, ids


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    path = tmp_path_factory.mktemp("history") / "runs.db"
    return (path, *_store(path))


def _copy(built: tuple[Path, str, dict[str, str]], tmp_path: Path) -> tuple[Path, str, dict[str, str]]:
    """A copy of the built store of its own (SQLite's backup), its fingerprint and ids."""
    source, fingerprint, ids = built
    path = tmp_path / "runs.db"
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(path)) as dst:
        src.backup(dst)
    return path, fingerprint, ids


def _json(path: Path, cid: str, cwd: Path) -> dict[str, Any]:
    done = run_here(["report", cid, "--store", str(path), "--format", "json"], cwd=cwd)
    assert done.returncode in (0, 2), done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def _shown(page: str, cid: str) -> tuple[list[str], str]:
    """The exact values of a campaign's history row, in order, and its verdict badge's text."""
    table = page[page.index('id="history"') :]
    row = table[table.index(f'href="/campaign/{cid}"') :].split("</tr>")[0]
    values = re.findall(r'data-(?:value|low|high)="([^"]*)"', row)
    badge = re.findall(r'<span class="badge[^"]*">([^<]*)</span>', row)
    return values, html.unescape(badge[-1])


def _expected(report: dict[str, Any]) -> list[str]:
    """The report's figures in the row's order, each written as the row writes an exact value."""
    cand, base, uplift = report["candidate"], report["baseline"], report["uplift"]
    numbers = [cand["pass_rate"], cand["pass_rate_ci"]["low"], cand["pass_rate_ci"]["high"],
               base["pass_rate"], base["pass_rate_ci"]["low"], base["pass_rate_ci"]["high"],
               uplift["estimate"], uplift["ci"]["low"], uplift["ci"]["high"]]  # fmt: skip
    return [repr(float(x)) for x in numbers]


def _page(catalog: Catalog, fingerprint: str) -> str:
    return history_page(catalog, fingerprint)


def test_the_history_shows_each_campaigns_report_figures_and_a_resumed_one_anew(
    built: tuple[Path, str, dict[str, str]], tmp_path: Path
) -> None:
    path, fingerprint, ids = _copy(built, tmp_path)
    catalog = Catalog(path)
    try:
        page = _page(catalog, fingerprint)
        for name, cid in ids.items():
            report = _json(path, cid, tmp_path)
            values, badge = _shown(page, cid)
            assert values == _expected(report), name
            if name == "interrupted":
                assert badge == "—"  # no verdict recorded: it did not complete
            else:
                assert badge == report["verdict"].upper(), name
        assert _json(path, ids["runs"], tmp_path)["runs"] == 3
        assert _json(path, ids["sequential"], tmp_path)["sequential"] is not None
        before = _shown(page, ids["interrupted"])[0]
        with RunStore(path) as store:  # resumed: the candidate's other tasks run, then it ends
            store.append_many(ids["interrupted"], [
                TaskResult(task_id=f"t{i:02d}", arm="candidate", passed=i % 2 > 0) for i in range(10, N)
            ])  # fmt: skip
            store.set_status(ids["interrupted"], "complete")
        after = _shown(_page(catalog, fingerprint), ids["interrupted"])[0]
        assert after == _expected(_json(path, ids["interrupted"], tmp_path))
        assert after != before
    finally:
        catalog.close()


def test_a_campaign_whose_figures_the_analysis_refuses_is_an_error_line(
    built: tuple[Path, str, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, fingerprint, ids = _copy(built, tmp_path)
    real = catalog_module.headline_figures

    def refused(*args: Any, **kwargs: Any) -> Any:
        if kwargs["agents"][1] == "c":  # the interrupted campaign's candidate
            raise ValueError("refused <b>here</b>")
        return real(*args, **kwargs)

    monkeypatch.setattr(catalog_module, "headline_figures", refused)
    catalog = Catalog(path)
    try:
        page = _page(catalog, fingerprint)
    finally:
        catalog.close()
    text = html.unescape(page)
    bad = ids["interrupted"]
    assert text.count(f"campaign {bad!r}: its report cannot be built: refused <b>here</b>") == 1
    assert f'href="/campaign/{bad}"' not in page and "<b>here</b>" not in page
    assert page.count('class="point"') == 3
