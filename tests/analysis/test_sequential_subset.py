"""A sequential report depends on the decision, not on which trials finished in flight.

A campaign that stops early may store trials of tasks after the deciding pair (they were running
at the stop). Those trials, paired or not, failed or not, must not change the report: not the
paired columns, not the errors section's per-arm trial counts, not its error groups.
"""

from __future__ import annotations

import pytest

from ablation.analysis.build import compare_results, report_from_results
from ablation.config import CampaignConfig, SequentialPolicy
from ablation.schema import TaskResult

N = 200
CONFIG = CampaignConfig(sequential=SequentialPolicy(), n_resamples=200, seed=3)


def _arms() -> tuple[list[TaskResult], list[TaskResult]]:
    # The candidate fails every task the baseline passes: the e-process decides within a few
    # dozen pairs, long before the end of the suite.
    base = [TaskResult(task_id=f"t{i:03d}", arm="baseline", passed=True) for i in range(N)]
    cand = [TaskResult(task_id=f"t{i:03d}", arm="candidate", passed=False) for i in range(N)]
    return base, cand


def _after_the_stop(report_json: dict) -> list[str]:
    return [e["task_id"] for e in report_json["excluded"] if e["reason"].startswith("not run")]


def _in_flight(task_id: str) -> TaskResult:
    # A candidate trial of a task after the deciding pair, with no baseline trial: it errored.
    return TaskResult(
        task_id=task_id, arm="candidate", passed=False, status="error",
        error_stage="agent", error_type="Boom", error_message="in flight",
    )


@pytest.mark.parametrize("path", ["columns", "objects"])
def test_trials_after_the_stop_do_not_change_the_report(path: str) -> None:
    base, cand = _arms()

    ids = [t.task_id for t in base]  # the suite: a campaign knows it

    def report(b: list[TaskResult], c: list[TaskResult]) -> dict:
        if path == "columns":
            out = compare_results(b, c, config=CONFIG, expected_ids=ids)
        else:
            out = report_from_results([*b, *c], config=CONFIG, expected_ids=ids)
        return out.model_dump(mode="json")

    full = report(base, cand)
    assert full["sequential"]["stopped_early"]
    dropped = _after_the_stop(full)
    assert len(dropped) > N // 2
    # What a stop with trials in flight stores: the tasks up to the decision, both arms, plus an
    # errored candidate-only trial and a whole pair of tasks after it.
    kept = {t.task_id for t in base} - set(dropped)
    late_pair, late_lone = dropped[0], dropped[1]
    b = [t for t in base if t.task_id in kept or t.task_id == late_pair]
    c = [t for t in cand if t.task_id in kept or t.task_id == late_pair]
    c.append(_in_flight(late_lone))
    stopped = report(b, c)
    assert stopped["sequential"] == full["sequential"]
    assert stopped["errors"] == full["errors"]
    assert stopped["errors"]["trials"] == {"baseline": len(kept), "candidate": len(kept)}
    assert stopped["errors"]["groups"] == []
    assert stopped["baseline"]["n_trials"] == full["baseline"]["n_trials"] == len(kept)
