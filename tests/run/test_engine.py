"""The engine: agent forms, isolation, errors as data, timeouts, concurrency, retries, determinism."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
import time
from typing import Any

import numpy as np
import pytest

from ablation import (
    AblationEngine,
    AblationTask,
    CampaignAborted,
    CampaignConfig,
    RetryPolicy,
    run_ablation_campaign,
    run_ablation_campaign_async,
)

FAST = CampaignConfig(n_resamples=500, timeout_s=10)


def suite(n: int = 6, **extra: Any) -> list[AblationTask]:
    return [
        AblationTask(task_id=f"t{i}", input_data=i, expected_output=i * 2, **extra)
        for i in range(n)
    ]


def double(x: int) -> int:
    return x * 2


def test_async_agent_is_awaited_and_passes() -> None:
    async def agent(x: int) -> int:
        await asyncio.sleep(0.001)
        return x * 2

    report = run_ablation_campaign(double, agent, suite(), config=FAST)
    assert report.candidate.passes == 6
    assert report.table.both_pass == 6


def test_object_with_run_and_dict_with_run() -> None:
    class Agent:
        def run(self, x: int) -> int:
            return x * 2

    class AsyncAgent:
        async def run(self, x: int) -> int:
            return x * 2

    for candidate in (Agent(), AsyncAgent(), {"run": double}, {"run": AsyncAgent().run}):
        report = run_ablation_campaign(double, candidate, suite(3), config=FAST)
        assert report.candidate.passes == 3, candidate


@pytest.mark.parametrize("bad", ["constant", 42, None, 3.5])
def test_non_agent_raises_type_error(bad: Any) -> None:
    with pytest.raises(TypeError, match=type(bad).__name__):
        run_ablation_campaign(double, bad, suite(2), config=FAST)


def test_mutating_baseline_cannot_change_candidate_input() -> None:
    seen: list[list[int]] = []

    def greedy(items: list[int]) -> int:
        items.append(99)
        return len(items)

    def observer(items: list[int]) -> int:
        seen.append(list(items))
        return len(items)

    tasks = [AblationTask(task_id="a", input_data=[1, 2, 3], expected_output=3)]
    config = CampaignConfig(n_resamples=500, runs=4)
    report = run_ablation_campaign(greedy, observer, tasks, config=config)
    assert seen == [[1, 2, 3]] * 4
    assert tasks[0].input_data == [1, 2, 3]
    assert report.candidate.passes == 4 and report.baseline.passes == 0


def test_verifier_returning_non_bool_is_error_not_pass() -> None:
    tasks = [AblationTask(task_id="a", input_data=1, expected_output=2, verifier=lambda o, t: "no")]
    report = run_ablation_campaign(double, double, tasks, config=FAST)
    view = report.baseline
    assert view.passes == 0 and view.errors == 1
    results = _results(double, double, tasks)
    assert all(r.status == "error" and r.error_stage == "verifier" for r in results)
    assert "str" in (results[0].error_message or "")


def test_verifier_raising_is_recorded() -> None:
    def verifier(output: Any, task: AblationTask) -> bool:
        return {}["missing"]

    results = _results(double, double, [AblationTask(task_id="a", input_data=1, verifier=verifier)])
    assert {r.error_type for r in results} == {"KeyError"}
    assert all(r.error_stage == "verifier" and not r.passed for r in results)


def test_numpy_output_against_list_does_not_crash() -> None:
    tasks = [AblationTask(task_id="a", input_data=None, expected_output=[1, 2])]
    report = run_ablation_campaign(lambda _: np.array([1, 2]), lambda _: [1, 2], tasks, config=FAST)
    assert report.table.both_pass == 1


def test_agent_exception_becomes_data() -> None:
    def flaky(x: int) -> int:
        if x == 3:
            return int(1 / 0)
        return x * 2

    tasks = suite()
    results = _results(double, flaky, tasks)
    broken = next(r for r in results if r.task_id == "t3" and r.arm == "candidate")
    assert broken.status == "error"
    assert broken.error == "ZeroDivisionError: division by zero"
    assert "Traceback" in (broken.error_traceback or "") and "1 / 0" in broken.error_traceback
    report = run_ablation_campaign(double, flaky, tasks, config=FAST)
    assert report.candidate.errors == 1
    assert report.candidate.passes == 5
    assert report.regressions == ["t3"]


def test_sync_agent_raising_stop_iteration_is_an_error_not_a_timeout() -> None:
    def stopping(x: int) -> int:
        if x == 2:
            raise StopIteration("exhausted")
        return x * 2

    config = CampaignConfig(n_resamples=500, timeout_s=30)
    start = time.perf_counter()
    results = _results(double, stopping, suite(4), config=config)
    assert time.perf_counter() - start < 25  # not held until the timeout
    broken = next(r for r in results if r.task_id == "t2" and r.arm == "candidate")
    assert (broken.status, broken.error_stage, broken.error_type) == ("error", "agent", "RuntimeError")
    assert "StopIteration: exhausted" in (broken.error_traceback or "")
    assert sum(r.status == "completed" for r in results) == 7


def test_stop_iteration_in_a_user_executor_or_a_threaded_verifier_is_an_error() -> None:
    # asyncio futures refuse StopIteration: through run_in_executor (a user's executor) and
    # wrap_future (sync verifiers and scorers run in a thread), the await waited until the
    # timeout, or forever without one
    def stopping(x: int) -> int:
        if x == 2:
            raise StopIteration("exhausted")
        return x * 2

    def verifier(output: Any, task: AblationTask) -> bool:
        if task.task_id == "t1":
            raise StopIteration("no more")
        return bool(output == task.expected_output)

    config = CampaignConfig(n_resamples=500, timeout_s=30)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = AblationEngine(config, executor=pool).run(double, stopping, suite(4))
    checked = _results(double, double, suite(4, verifier=verifier), config=config)
    assert time.perf_counter() - start < 25  # neither held until the timeout
    broken = next(r for r in results if r.task_id == "t2" and r.arm == "candidate")
    assert (broken.status, broken.error_stage, broken.error_type) == ("error", "agent", "RuntimeError")
    assert "StopIteration: exhausted" in (broken.error_traceback or "")
    assert sum(r.status == "completed" for r in results) == 7
    refused = [r for r in checked if r.task_id == "t1"]
    assert len(refused) == 2 and all(
        (r.status, r.error_stage, r.error_type) == ("error", "verifier", "RuntimeError")
        for r in refused
    )
    assert all(r.status == "completed" for r in checked if r.task_id != "t1")


def test_timeout_is_recorded_quickly_and_others_finish() -> None:
    def sleepy(x: int) -> int:
        if x == 1:
            time.sleep(10)
        return x * 2

    async def async_sleepy(x: int) -> int:
        if x == 2:
            await asyncio.sleep(10)
        return x * 2

    config = CampaignConfig(n_resamples=500, timeout_s=0.5, concurrency=4)
    start = time.perf_counter()
    results = _results(sleepy, async_sleepy, suite(), config=config)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.5
    timed_out = {(r.task_id, r.arm) for r in results if r.status == "timeout"}
    assert timed_out == {("t1", "baseline"), ("t2", "candidate")}
    assert sum(r.status == "completed" for r in results) == 10


def test_concurrency_bound_is_exact() -> None:
    active = 0
    peak = 0

    async def agent(x: int) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.02)
        active -= 1
        return x * 2

    config = CampaignConfig(n_resamples=500, concurrency=8)
    run_ablation_campaign(agent, agent, suite(16), config=config)  # 32 trials
    assert peak == 8


def test_sync_agents_bounded_by_thread_pool() -> None:
    lock = threading.Lock()
    active = 0
    peak = 0

    def agent(x: int) -> int:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1
        return x * 2

    run_ablation_campaign(
        agent, agent, suite(12), config=CampaignConfig(n_resamples=500, concurrency=3)
    )
    assert peak == 3


def test_same_seed_same_report_and_order_invariance() -> None:
    def cand(x: int) -> int:
        return x * 2 if x % 3 else x

    def base(x: int) -> int:
        return x * 2 if x % 4 else -1

    tasks = suite(20)
    config = CampaignConfig(n_resamples=1000, seed=7)
    one = run_ablation_campaign(base, cand, tasks, config=config)
    two = run_ablation_campaign(base, cand, tasks, config=config)
    three = run_ablation_campaign(base, cand, list(reversed(tasks)), config=config)

    def stable(report: Any) -> dict[str, Any]:
        data = report.model_dump(exclude={"provenance", "latency", "details"})
        for arm in ("baseline", "candidate"):
            for key in ("latency_mean_s", "latency_median_s", "latency_p90_s"):
                data[arm].pop(key)
        return data

    assert stable(one) == stable(two) == stable(three)
    assert one.provenance.suite_fingerprint == three.provenance.suite_fingerprint


def test_arm_order_is_seeded() -> None:
    def order_of(seed: int) -> list[str]:
        calls: list[str] = []
        engine = AblationEngine(CampaignConfig(seed=seed, concurrency=1, n_resamples=500))
        engine.run(
            lambda x: calls.append("b") or x * 2, lambda x: calls.append("c") or x * 2, suite(20)
        )
        return ["".join(calls[i : i + 2]) for i in range(0, 40, 2)]

    first = order_of(1)
    assert first == order_of(1)
    assert {"bc", "cb"} == set(first)
    assert first != order_of(2)


def test_injected_clock_measures_agent_call_only() -> None:
    ticks = itertools.count()
    config = CampaignConfig(n_resamples=500, concurrency=1)
    engine = AblationEngine(config, clock=lambda: float(next(ticks)))
    results = engine.run(double, double, suite(2))
    # one trial at a time; two clock reads around the agent call: latency is exactly one tick,
    # while the trial's wall time (setup, verifier, scoring included) spans more ticks
    assert {r.latency_s for r in results} == {1.0}
    assert all(r.wall_s is not None and r.wall_s >= 3.0 for r in results)


def test_errors_never_enter_latency() -> None:
    def broken(x: int) -> int:
        if x < 2:
            raise RuntimeError("down")
        return x * 2

    report = run_ablation_campaign(double, broken, suite(6), config=FAST)
    assert report.latency is not None
    assert report.latency.n_pairs == 4
    assert report.latency.n_left_out == 2


def _results(
    baseline: Any, candidate: Any, tasks: list[AblationTask], config: CampaignConfig = FAST
) -> list[Any]:
    return AblationEngine(config).run(baseline, candidate, tasks)


class Flaky:
    """Raises ``exc`` on the first ``failures`` calls per task, then answers."""

    def __init__(self, failures: int, exc: type[BaseException] = ConnectionError) -> None:
        self.failures = failures
        self.exc = exc
        self.calls: dict[int, int] = {}

    def __call__(self, x: int) -> int:
        self.calls[x] = self.calls.get(x, 0) + 1
        if self.calls[x] <= self.failures:
            raise self.exc(f"attempt {self.calls[x]} failed")
        return x * 2


def retry_config(
    attempts: int, retry_on: tuple[type[BaseException], ...] = (ConnectionError,)
) -> CampaignConfig:
    policy = RetryPolicy(
        max_attempts=attempts, initial_wait_s=0, max_wait_s=0, jitter_s=0, retry_on=retry_on
    )
    return CampaignConfig(n_resamples=500, retry=policy)


def test_retry_then_pass_records_attempts() -> None:
    results = _results(double, Flaky(2), suite(1), retry_config(3))
    cand = next(r for r in results if r.arm == "candidate")
    assert cand.passed and cand.status == "completed"
    assert cand.attempts == 3
    assert cand.attempt_errors == (
        "ConnectionError: attempt 1 failed",
        "ConnectionError: attempt 2 failed",
    )


def test_single_attempt_is_error() -> None:
    results = _results(double, Flaky(2), suite(1), retry_config(1))
    cand = next(r for r in results if r.arm == "candidate")
    assert cand.status == "error" and cand.error_type == "ConnectionError" and cand.attempts == 1


def test_unlisted_exception_not_retried() -> None:
    agent = Flaky(1, AssertionError)
    results = _results(double, agent, suite(1), retry_config(5))
    cand = next(r for r in results if r.arm == "candidate")
    assert cand.status == "error" and cand.error_type == "AssertionError"
    assert cand.attempts == 1 and agent.calls[0] == 1


def test_retries_exhausted_keep_every_attempt() -> None:
    results = _results(double, Flaky(10), suite(1), retry_config(3))
    cand = next(r for r in results if r.arm == "candidate")
    assert cand.status == "error" and cand.attempts == 3 and len(cand.attempt_errors) == 3


def test_rate_limit_spaces_calls() -> None:
    stamps: list[float] = []

    async def agent(x: int) -> int:
        stamps.append(time.monotonic())
        return x * 2

    config = CampaignConfig(n_resamples=500, rate_limit_per_s=50, concurrency=8)
    AblationEngine(config).run(double, agent, suite(10))
    stamps.sort()
    assert len(stamps) == 10
    # 50 calls/s -> slots 20 ms apart, shared by all 8 workers: 10 calls span at least 9 slots
    # (less a little event-loop wake-up jitter); without the limit they would start together.
    assert stamps[-1] - stamps[0] >= 0.175
    # Any three consecutive calls hold at least two slots (40 ms): a thread that wakes late can
    # bring one call close to the next on a busy machine, but not three within 20 ms.
    assert all(c - a > 0.020 for a, c in zip(stamps, stamps[2:], strict=False))


def test_on_error_abort_stops_campaign() -> None:
    def broken(x: int) -> int:
        raise ValueError("boom")

    config = CampaignConfig(n_resamples=500, on_error="abort", concurrency=1)
    with pytest.raises(CampaignAborted, match="boom"):
        run_ablation_campaign(double, broken, suite(5), config=config)


def test_quality_scorers_and_their_errors() -> None:
    class Length:
        name = "length"

        def __call__(self, output: Any, task: AblationTask) -> float:
            if task.task_id == "t1":
                return float("nan")
            return float(len(str(output)))

    report = run_ablation_campaign(
        double, double, suite(4), config=FAST, quality_scorers=[Length()]
    )
    q = report.quality["length"]
    assert q.n_pairs == 3 and q.n_left_out == 1
    assert q.scorer_errors_baseline == 1 and q.scorer_errors_candidate == 1


def test_async_twin_gives_same_report() -> None:
    tasks = suite(8)
    sync = run_ablation_campaign(double, lambda x: x, tasks, config=FAST)
    async_ = asyncio.run(run_ablation_campaign_async(double, lambda x: x, tasks, config=FAST))
    assert sync.table == async_.table and sync.uplift == async_.uplift


def test_setup_and_teardown_hooks() -> None:
    calls: list[str] = []
    tasks = suite(
        2,
        setup=lambda t: calls.append(f"setup {t.task_id}"),
        teardown=lambda t: calls.append(f"teardown {t.task_id}"),
    )
    run_ablation_campaign(
        double, double, tasks, config=CampaignConfig(n_resamples=500, concurrency=1)
    )
    assert calls.count("setup t0") == 2 and calls.count("teardown t1") == 2


def test_agent_own_timeout_error_keeps_its_message() -> None:
    def agent(x: int) -> int:
        raise TimeoutError("upstream model took too long")

    results = _results(double, agent, suite(1))
    cand = next(r for r in results if r.arm == "candidate")
    assert cand.status == "error"  # the agent failed; the trial did not hit our time limit
    assert cand.error == "TimeoutError: upstream model took too long"


def test_verifier_notes_reach_the_trial() -> None:
    from ablation import verifiers

    def picky(output: Any, task: AblationTask) -> bool:  # runs in a worker thread
        verifiers.note(f"expected {task.expected_output}, got {output}")
        return output == task.expected_output

    sandboxed = verifiers.code_tests(time_limit_s=0.5)  # counted from the code's start: a timeout
    tasks = [
        AblationTask(task_id="picky", input_data=1, expected_output=2, verifier=picky),
        AblationTask(task_id="loop", input_data=None, verifier=sandboxed,
                     metadata={"tests": "assert f() == 1\n"}),
    ]

    def agent(x: Any) -> Any:
        return "def f():\n    while True:\n        pass\n" if x is None else x + 1

    results = {(r.task_id, r.arm): r for r in _results(agent, agent, tasks)}
    assert results[("picky", "baseline")].verifier_note == "expected 2, got 2"
    loop = results[("loop", "candidate")]
    assert loop.status == "completed" and not loop.passed
    assert loop.verifier_note and loop.verifier_note.startswith("timeout")


def test_sync_and_async_twins_share_one_signature() -> None:
    import inspect

    assert inspect.signature(run_ablation_campaign) == inspect.signature(run_ablation_campaign_async)
    assert run_ablation_campaign.__name__ == "run_ablation_campaign"


def test_agent_reporting_a_nan_metric_is_an_agent_error_not_a_crash() -> None:
    from ablation import AgentOutput

    def agent(x: int) -> AgentOutput:
        return AgentOutput(output=x * 2, cost=0.01, metrics={"tokens_per_s": float("nan")})

    results = _results(double, agent, suite(2))
    cand = [r for r in results if r.arm == "candidate"]
    assert all(r.status == "error" and r.error_stage == "agent" for r in cand)
    assert "tokens_per_s" in (cand[0].error_message or "")


def test_a_sink_can_stop_the_campaign_and_in_flight_trials_are_dropped() -> None:
    import asyncio as _asyncio

    from ablation import AblationEngine, AblationTask, CampaignConfig
    from ablation.errors import StopCampaign

    seen: list[str] = []

    def sink(result: object) -> None:
        seen.append(result.task_id)  # type: ignore[attr-defined]
        if len(seen) == 6:
            raise StopCampaign("decided after 6 trials")

    async def agent(x: int) -> int:
        await _asyncio.sleep(0.01 * (x % 3))
        return x

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(50)]
    engine = AblationEngine(CampaignConfig(concurrency=4), sink=sink)
    results = engine.run(agent, agent, tasks)
    assert engine.stopped == "decided after 6 trials"
    assert len(seen) == 6 and sorted(r.task_id for r in results) == sorted(seen)
