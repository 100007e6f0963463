"""A sequential report depends on the decision, not on which trials finished in flight.

A campaign that stops early may store trials of tasks after the deciding pair (they were running
at the stop). Those trials, paired or not, failed or not, must not change the report: not the
paired columns, not the errors section's per-arm trial counts, not its error groups.
"""

from __future__ import annotations

import pytest
from helpers.pairing_oracle import report_by_objects

from ablation.analysis.build import compare_results
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
            out = report_by_objects([*b, *c], config=CONFIG, expected_ids=ids)
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


def _kept_trial(i: int, arm: str) -> TaskResult:
    # Trials that vary in every count of the arm summary, without changing the task's outcome
    # (the baseline passes, the candidate fails: an error is a failure with on_error="fail").
    extra: dict = {"cost": 0.25 * (i % 3) if i % 2 else None, "attempts": 1 + (i % 3 == 0)}
    if i % 5 == 0:
        extra["quality_errors"] = {"judge": "scorer down"}
    if arm == "candidate" and i % 4 == 0:
        extra.update(status="error", error_stage="agent", error_type="Boom", error_message="x")
    if arm == "candidate" and i % 7 == 0:
        extra.update(status="timeout", error_type="Timeout", error_message="slow")
    return TaskResult(task_id=f"t{i:03d}", arm=arm, passed=arm == "baseline", **extra)


def _late_trials(task_ids: list[str]) -> list[TaskResult]:
    """Trials that finished in flight after the stop: each adds to every count of its arm."""
    late = []
    for k, tid in enumerate(task_ids):
        for arm in ("baseline", "candidate") if k % 2 == 0 else ("candidate",):
            late.append(TaskResult(
                task_id=tid, arm=arm, passed=False, status="error" if k % 3 else "timeout",
                error_type="Late", error_message="in flight", attempts=3, cost=1.5,
                quality_errors={"judge": "late", "other": "late"},
            ))  # fmt: skip
    return late


def _recount(trials: list[TaskResult], arm: str) -> dict:
    """The arm summary's counts, recounted by hand from the trials of the kept tasks."""
    mine = [t for t in trials if t.arm == arm]
    costs = [t.cost for t in mine if t.cost is not None]
    return {
        "n_trials": len(mine),
        "errors": sum(t.status == "error" for t in mine),
        "timeouts": sum(t.status == "timeout" for t in mine),
        "retried": sum(t.attempts > 1 for t in mine),
        "cost_total": sum(costs) if costs else None,
        "scorer_errors": sum("judge" in t.quality_errors for t in mine),
    }


@pytest.mark.parametrize("path", ["columns", "objects"])
def test_every_arm_count_comes_from_the_kept_tasks(path: str) -> None:
    ids = [f"t{i:03d}" for i in range(N)]

    def report(trials: list[TaskResult]) -> dict:
        if path == "columns":
            b = [t for t in trials if t.arm == "baseline"]
            c = [t for t in trials if t.arm == "candidate"]
            out = compare_results(b, c, config=CONFIG, expected_ids=ids)
        else:
            out = report_by_objects(trials, config=CONFIG, expected_ids=ids)
        return out.model_dump(mode="json")

    every = [_kept_trial(i, arm) for i in range(N) for arm in ("baseline", "candidate")]
    dropped = _after_the_stop(report(every))
    kept_ids = set(ids) - set(dropped)
    kept = [t for t in every if t.task_id in kept_ids]
    stopped = report(kept + _late_trials(dropped[:6]))
    assert stopped["sequential"]["stopped_early"] and _after_the_stop(stopped) == dropped
    for arm in ("baseline", "candidate"):
        summary = stopped[arm]
        expected = _recount(kept, arm)
        assert expected["retried"] and expected["cost_total"] and expected["scorer_errors"]
        scorer_errors = stopped["quality"]["judge"][f"scorer_errors_{arm}"]
        got = {k: summary[k] for k in expected if k != "scorer_errors"}
        assert {**got, "scorer_errors": scorer_errors} == pytest.approx(expected), arm
        assert "other" not in stopped["quality"]  # a scorer only late trials failed
        assert stopped["errors"]["trials"][arm] == len([t for t in kept if t.arm == arm])
