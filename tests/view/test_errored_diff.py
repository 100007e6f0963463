"""A task page whose first candidate run ended in an error before the agent answered shows no
output diff: the baseline's whole output as "baseline only" would read as a candidate answer that
was empty. The page names the run that did not complete, its column says it has no output, and a
run that errored after answering (its verifier raised) keeps its output and its diff.

The store is a real :class:`RunStore` whose trials are the references (their status and output);
the page is read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog


def _store(path: Path) -> tuple[str, dict[str, TaskResult]]:
    """Task ``early``: the candidate raised before answering; task ``late``: its verifier raised
    after the agent answered ``"13"``."""
    candidates = {
        "early": TaskResult(task_id="early", arm="candidate", status="error", error_stage="agent",
                            error_type="RuntimeError", error_message="kaboom"),
        "late": TaskResult(task_id="late", arm="candidate", status="error", error_stage="verifier",
                           error_type="KeyError", error_message="'x'", output="13", latency_s=0.01),
    }  # fmt: skip
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="e" * 64,
            task_digests={"early": "d", "late": "d"}, baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        baselines = [TaskResult(task_id=t, arm="baseline", passed=True, output="12", latency_s=0.01)
                     for t in candidates]  # fmt: skip
        store.append_many(cid, [*baselines, *candidates.values()])
        store.set_status(cid, "complete")
        kept = {t.task_id: t for t in store.results(cid, arm="candidate")}
    return cid, kept


def _diff(page: str) -> str:
    found = re.search(r'<div id="diff">(.*?)</div>', page, re.S)
    assert found is not None, "no diff section"
    return found.group(1)


def test_no_diff_against_a_run_that_never_answered(tmp_path: Path) -> None:
    cid, stored = _store(tmp_path / "runs.db")
    assert stored["early"].status == "error" and stored["early"].output is None
    assert stored["late"].status == "error" and stored["late"].output == "13"
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        early = client.get(f"/campaign/{cid}/task", params={"id": "early"}).text
        late = client.get(f"/campaign/{cid}/task", params={"id": "late"}).text
    diff = _diff(early)
    assert "<del>" not in diff and "<ins>" not in diff, diff
    assert "candidate's run 0 did not complete" in html.unescape(diff)
    column = early[early.index('id="arm-candidate"'):]
    assert '<pre class="output"></pre>' not in column
    assert "no-output" in column
    diff = _diff(late)  # the verifier raised after the agent answered: its output is compared
    assert "<del>12</del>" in diff and "<ins>13</ins>" in diff, diff
    assert "candidate's run 0 did not complete" in html.unescape(diff)


def test_a_comparison_names_the_run_by_its_side(tmp_path: Path) -> None:
    """Comparing the stored candidate arm (as the baseline) with the stored baseline arm: the
    run that did not complete is the comparison's baseline, whatever arm it was stored under."""
    cid, _ = _store(tmp_path / "runs.db")
    params = {"baseline": f"{cid}:candidate", "candidate": f"{cid}:baseline", "id": "early"}
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        page = client.get("/compare/task", params=params).text
    diff = html.unescape(_diff(page))
    assert "baseline's run 0 did not complete" in diff and "candidate's run" not in diff, diff
    assert "<del>" not in diff and "<ins>" not in diff, diff
