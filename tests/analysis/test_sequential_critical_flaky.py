"""With repeated runs a sequential campaign stops on a critical regression only where the critical
gate sees one: the baseline passed every run of the critical task and the candidate failed every
run (a per-task outcome of -1). A critical task whose candidate fraction is lower but flaky (1 of
2 runs) is listed in ``critical_flaky`` and not counted by the gate; the monitor stopped on it
("Pair 24 is a regression on a critical task; one decides at once"), left 16 of 40 tasks unrun,
and the report passed, exit 0, beside the stop's own reason: a critical regression.

The references: the same suite with the critical task failing both runs stops there and fails
the gate; a replay (``compare_results`` with a sequential policy) agrees with the live run.
"""

from __future__ import annotations

from ablation import (
    AblationTask,
    CampaignConfig,
    TaskResult,
    compare_results,
    run_ablation_campaign,
)
from ablation.config import SequentialPolicy
from ablation.report import AblationReport
from ablation.stats import SequentialMonitor

N, RUNS = 40, 2


def _campaign(failed_runs: int) -> AblationReport:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i, critical=i == 0) for i in range(N)]
    calls = {"t0": 0}

    def candidate(x: int) -> int:
        if x != 0:
            return x
        calls["t0"] += 1
        return -1 if calls["t0"] <= failed_runs else x

    config = CampaignConfig(seed=0, runs=RUNS, concurrency=1, n_resamples=200, sequential=SequentialPolicy())
    return run_ablation_campaign(lambda x: x, candidate, tasks, config=config)


def _gate(report: AblationReport) -> str:
    (gate,) = [g for g in report.gates if g.name == "critical tasks must not regress"]
    return gate.status


def test_a_flaky_critical_task_does_not_stop_the_campaign() -> None:
    report = _campaign(failed_runs=1)  # candidate 1 of 2 runs on the critical task
    s = report.sequential
    assert s is not None and report.critical_flaky == ["t0"] and _gate(report) == "pass"
    assert s.gate != "critical_regression" and not s.stopped_early
    assert s.tasks_run == N and report.verdict == "pass"


def test_a_critical_regression_in_every_run_still_stops_and_fails() -> None:
    report = _campaign(failed_runs=RUNS)
    s = report.sequential
    assert s is not None and s.gate == "critical_regression" and s.stopped_early
    assert report.critical_regressions == ["t0"] and _gate(report) == "fail" and report.verdict == "fail"


def test_replay_and_monitor_agree_on_the_rule() -> None:
    def rows(arm: str, t0_passes: int) -> list[TaskResult]:
        return [
            TaskResult(task_id=f"t{i}", run=r, critical=i == 0,
                       passed=arm == "baseline" or i != 0 or r < t0_passes)
            for i in range(N) for r in range(RUNS)
        ]  # fmt: skip

    config = CampaignConfig(seed=0, runs=RUNS, n_resamples=200, sequential=SequentialPolicy())
    flaky = compare_results(rows("baseline", 2), rows("candidate", 1), config=config)
    assert flaky.sequential is not None and flaky.sequential.gate == "end_of_suite"
    full = compare_results(rows("baseline", 2), rows("candidate", 0), config=config)
    assert full.sequential is not None and full.sequential.gate == "critical_regression"
    monitor = SequentialMonitor(population_size=N)
    assert monitor.update(-0.5, critical=True).state.gate is None
    assert monitor.update(-1.0, critical=True).state.gate == "critical_regression"
