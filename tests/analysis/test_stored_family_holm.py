"""A stored campaign of a several-candidate ``run`` is reported as the run reported it.

``ablation run --candidate A --candidate B`` Holm-adjusts each candidate's claim of improvement
across the candidates; ``ablation report CAMPAIGN`` and the viewer rebuild one campaign from the
store, and must state the same claim (DESIGN.md section 8): the campaigns of one run are a stored
family, and the report of one of them is adjusted across the family. A candidate whose campaign
was never created (the run stopped before it) counts with p = 1; a resumed run keeps the family
and its size, though its command line names fewer candidates.

Suite: 60 tasks; the baseline passes the tasks whose id ends in 0-4. ``v2`` and ``v3`` each fix
5 other tasks and break none (one-sided exact McNemar p = 1/32 each, below alpha 0.05 alone, not
after Holm across two); ``flaky`` answers as the baseline, or fails to start (an import error, so
``--fail-fast`` aborts its campaign) while ``ABLATION_TEST_BROKEN`` is set.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import analysis_shared, cli
from statsmodels.stats.multitest import multipletests

SUITE = """
from ablation import AblationTask
tasks = [AblationTask(task_id=f"t-{i:02d}", input_data=i, expected_output=i, category="ab"[i % 2],
                      critical=(i < 3)) for i in range(60)]
"""
AGENTS = """
import os

def baseline(i):
    return i if i % 10 < 5 else -1

def v2(i):
    return i if (i % 10 < 5 or i in (5, 15, 25, 35, 45)) else -1

def v3(i):
    return i if (i % 10 < 5 or i in (6, 16, 26, 36, 46)) else -1

def flaky(i):
    if os.environ.get("ABLATION_TEST_BROKEN"):
        raise ModuleNotFoundError("No module named 'agent_service'")
    return baseline(i)
"""
BROKEN = "ABLATION_TEST_BROKEN"

pytestmark = pytest.mark.xdist_group("stored-family-holm")  # one worker runs the two-candidate run once


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    return tmp_path


def _run(folder: Path, *candidates: str, env: dict[str, str | None] | None = None,
         extra: tuple[str, ...] = ()) -> Any:
    args = ["run", "suite.py", "--baseline", "agents.py:baseline"]
    for name in candidates:
        args += ["--candidate", f"agents.py:{name}"]
    args += ["--store", str(folder / "runs.db"), "--no-progress", "--format", "json", *extra]
    with pytest.MonkeyPatch.context() as patch:  # the resume hint is written from sys.argv
        patch.setattr(sys, "argv", ["ablation", *args])
        return analysis_shared.run_here(args, env={BROKEN: None, **(env or {})}, cwd=folder)


def _report(folder: Path, campaign_id: str, *flags: str) -> dict[str, Any]:
    proc = cli.run_here(
        ["report", campaign_id, "--store", str(folder / "runs.db"), "--format", "json", *flags],
        cwd=folder,
    )
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _ids(folder: Path) -> dict[str, str]:
    """``candidate agent -> campaign id`` of every stored campaign."""
    with sqlite3.connect(folder / "runs.db") as conn:
        rows = conn.execute("SELECT candidate_agent, id FROM campaigns").fetchall()
    return {agent.rpartition(":")[2]: cid for agent, cid in rows}


def _holm(pvalues: list[float]) -> list[float]:
    return [float(x) for x in multipletests(pvalues, alpha=0.05, method="holm")[1]]


@pytest.fixture(scope="module")
def two_candidates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The folder of a run of ``v2`` and ``v3`` (read, never written, by the tests) and its JSON."""
    folder = _folder(tmp_path_factory.mktemp("two"))
    proc = _run(folder, "v2", "v3")
    assert proc.returncode == 0, proc.stderr
    return folder, json.loads(proc.stdout)


def test_report_of_each_campaign_is_the_runs_report(two_candidates: tuple[Path, dict[str, Any]]) -> None:
    folder, document = two_candidates
    ran = {c["name"].rpartition(":")[2]: c["report"] for c in document["candidates"]}
    own = [ran[n]["uplift_test"]["pvalue_better"] for n in ("v2", "v3")]
    assert own[0] < 0.05 and own[1] < 0.05  # each an improvement on its own
    expected = _holm(own)
    assert min(expected) >= 0.05  # but not after Holm across the two
    for (name, campaign_id), adjusted in zip(sorted(_ids(folder).items()), expected, strict=True):
        run = ran[name]
        assert run["summary"] == "no significant difference"
        assert run["improvement_holm_pvalue"] == pytest.approx(adjusted, rel=1e-12)
        stored = _report(folder, campaign_id)
        assert stored["summary"] == run["summary"]
        assert stored["improvement_holm_pvalue"] == run["improvement_holm_pvalue"]
        assert stored["improvement_holm_candidates"] == run["improvement_holm_candidates"] == 2
        assert cli.stable(stored) == cli.stable(run)  # the whole report, as the run wrote it
        text = cli.run_here(
            ["report", campaign_id, "--store", str(folder / "runs.db"), "--format", "markdown"],
            cwd=folder,
        ).stdout
        assert "Not significant after Holm adjustment across 2 candidates" in text
        assert "Candidate is better" not in text


def test_the_viewer_shows_the_adjusted_claim(two_candidates: tuple[Path, dict[str, Any]]) -> None:
    from ablation.view.catalog import Catalog

    folder, document = two_candidates
    ran = {c["report"]["provenance"]["campaign_id"]: c["report"] for c in document["candidates"]}
    catalog = Catalog(folder / "runs.db")
    try:
        for campaign_id, run in ran.items():
            report, _ = catalog.report(campaign_id)
            assert report.summary == run["summary"] == "no significant difference"
            assert report.improvement_holm_pvalue == run["improvement_holm_pvalue"]
            assert catalog.report(campaign_id)[0] is report  # cached, not rebuilt per request
    finally:
        catalog.close()


def test_one_candidate_reports_as_before(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    proc = _run(folder, "v2")
    run = json.loads(proc.stdout)
    assert run["summary"] == "improvement" and run["improvement_holm_pvalue"] is None
    stored = _report(folder, _ids(folder)["v2"])
    assert cli.stable(stored) == cli.stable(run)


def test_an_interrupted_family_counts_a_candidate_never_run_and_resumes_as_one(
    tmp_path: Path,
) -> None:
    """``flaky`` breaks, so its campaign is aborted and ``v3``'s is never created: ``v2`` is
    adjusted over three candidates, ``v3`` counting p = 1. The resume command names two
    candidates; the run it makes, and every stored report after it, are adjusted over three."""
    folder = _folder(tmp_path)
    proc = _run(folder, "v2", "flaky", "v3", env={BROKEN: "1"}, extra=("--fail-fast", "5"))
    assert proc.returncode == 1, proc.stderr
    assert sorted(_ids(folder)) == ["flaky", "v2"]  # v3 never started
    ids = _ids(folder)
    v2, flaky = _report(folder, ids["v2"]), _report(folder, ids["flaky"])
    own = [v2["uplift_test"]["pvalue_better"], flaky["uplift_test"]["pvalue_better"]]
    expected = _holm([*own, 1.0])  # v3, planned and never run, counts with p = 1
    for report, adjusted in zip((v2, flaky), expected[:2], strict=True):
        assert report["improvement_holm_candidates"] == 3
        assert report["improvement_holm_pvalue"] == pytest.approx(adjusted, rel=1e-12)
    assert v2["summary"] == "no significant difference"  # p = 1/32 alone, 3/32 after Holm
    assert v2["improvement_holm_pvalue"] > _holm(own)[0]  # three planned, not the two that exist

    resume = proc.stderr.split("resume with: ", 1)[1].splitlines()[0]
    words = shlex.split(resume)
    assert words[:2] == ["ablation", "run"] and words.count("--candidate") == 2
    resumed = analysis_shared.run_here(words[1:], env={BROKEN: None}, cwd=folder)
    assert resumed.returncode == 0, resumed.stderr
    ran = {c["name"].rpartition(":")[2]: c["report"] for c in json.loads(resumed.stdout)["candidates"]}
    ids = _ids(folder)
    assert sorted(ids) == ["flaky", "v2", "v3"]
    reports = {name: _report(folder, cid) for name, cid in ids.items()}
    raw = {name: report["uplift_test"]["pvalue_better"] for name, report in reports.items()}
    family = dict(zip(raw, _holm(list(raw.values())), strict=True))
    for name, stored in reports.items():
        assert stored["improvement_holm_candidates"] == 3
        assert stored["improvement_holm_pvalue"] == pytest.approx(family[name], rel=1e-12)
        if name in ran:  # the resumed run's output says the same
            assert ran[name]["improvement_holm_pvalue"] == stored["improvement_holm_pvalue"]
            assert ran[name]["summary"] == stored["summary"]
            assert ran[name]["improvement_holm_candidates"] == 3
    with sqlite3.connect(folder / "runs.db") as conn:
        families = {json.dumps(json.loads(p)["candidate_family"], sort_keys=True)
                    for (p,) in conn.execute("SELECT provenance_json FROM campaigns")}  # fmt: skip
    assert families == {json.dumps({"family_id": ids["v2"], "size": 3}, sort_keys=True)}
