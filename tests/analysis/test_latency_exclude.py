"""A task's latency is the mean of its completed trials' latencies and the time limit for each
timed-out trial, whatever ``on_error`` says (``analysis/latency_censoring.py``). Under
``on_error="exclude"`` the counted runs already leave the timed-out trials out, and they were
taken off a second time: with 2 time-outs in 3 runs the completed run was dropped and the task
counted at the limit alone, and the latency ratio and its gate's p moved with it.

The reference is the rule computed here from the trials: (limit + sum of completed) / runs.
"""

from __future__ import annotations

import pytest

from ablation import CampaignConfig, TaskResult, compare_results

LIMIT, FAST, N = 0.5, 0.05, 6


def _trials(arm: str, timeouts: int) -> list[TaskResult]:
    out = []
    for i in range(N):
        for run in range(3):
            if run < timeouts:
                out.append(TaskResult(task_id=f"t{i}", arm=arm, run=run, status="timeout", passed=False,
                                      latency_s=LIMIT, error_stage="timeout", error_type="Timeout"))  # fmt: skip
            else:
                out.append(TaskResult(task_id=f"t{i}", arm=arm, run=run, passed=True, latency_s=FAST + i / 1000))
    return out


@pytest.mark.parametrize("timeouts", [1, 2])
@pytest.mark.parametrize("on_error", ["fail", "exclude"])
def test_latency_counts_each_timeout_at_the_limit_once(on_error: str, timeouts: int) -> None:
    config = CampaignConfig(n_resamples=200, runs=3, timeout_s=LIMIT, on_error=on_error)  # type: ignore[arg-type]
    report = compare_results(_trials("baseline", 0), _trials("candidate", timeouts), config=config)
    assert report.latency is not None
    expected = [(timeouts * LIMIT + (3 - timeouts) * (FAST + i / 1000)) / 3 for i in range(N)]
    assert report.latency.candidate_mean == pytest.approx(sum(expected) / N, rel=1e-12)
    assert report.latency.baseline_mean == pytest.approx(sum(FAST + i / 1000 for i in range(N)) / N, rel=1e-12)
