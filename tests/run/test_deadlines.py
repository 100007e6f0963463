"""Trial deadlines on one shared timer expire exactly the scopes that asyncio.timeout would, never
before their own deadline, and survive the engine being run again on a new loop."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig, RetryPolicy
from ablation.run.deadlines import Deadlines

LIMIT = 0.15


async def _guarded(sleep_s: float, deadlines: Deadlines | None) -> tuple[bool, float]:
    """Sleep under a deadline (shared timer, or asyncio.timeout when ``deadlines`` is None)."""
    start = time.monotonic()
    try:
        async with asyncio.timeout(None if deadlines else LIMIT) as scope:
            if deadlines is not None:
                deadlines.add(scope)
            try:
                await asyncio.sleep(sleep_s)
            finally:
                if deadlines is not None:
                    deadlines.discard(scope)
    except TimeoutError:
        return True, time.monotonic() - start
    return False, time.monotonic() - start


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shared_timer_expires_the_same_scopes_as_asyncio_timeout(seed: int) -> None:
    rng = random.Random(seed)
    # Starts spread over more than one limit, so the timer has to move from deadline to deadline;
    # each sleep is far from the limit, so which scopes expire does not depend on scheduling.
    starts = [rng.uniform(0, 2 * LIMIT) for _ in range(12)]
    sleeps = [rng.choice([LIMIT / 5, 6 * LIMIT]) for _ in starts]

    async def campaign(deadlines: Deadlines | None) -> list[tuple[bool, float]]:
        async def one(start: float, sleep_s: float) -> tuple[bool, float]:
            await asyncio.sleep(start)
            return await _guarded(sleep_s, deadlines)

        return await asyncio.gather(*(one(a, s) for a, s in zip(starts, sleeps, strict=True)))

    shared = asyncio.run(campaign(Deadlines(LIMIT)))
    reference = asyncio.run(campaign(None))
    assert [expired for expired, _ in shared] == [expired for expired, _ in reference]
    assert [expired for expired, _ in shared] == [s > LIMIT for s in sleeps]
    for expired, elapsed in shared:
        if expired:  # never before its own deadline, and it does fire
            assert LIMIT <= elapsed < 6 * LIMIT


def _one_task() -> list[AblationTask]:
    return [AblationTask(task_id="t", input_data=1, expected_output=1)]


def test_engine_run_again_on_a_new_loop_still_times_out() -> None:
    def hangs(x: int) -> int:
        time.sleep(1.0)
        return x

    engine = AblationEngine(CampaignConfig(timeout_s=0.1))
    for _ in range(2):  # each run starts its own event loop
        results = engine.run(hangs, hangs, _one_task())
        assert [r.status for r in results] == ["timeout", "timeout"]


@pytest.mark.parametrize("timeout_s", [None, 30.0])
def test_errors_and_retries_are_recorded_alike_with_and_without_a_timeout(
    timeout_s: float | None,
) -> None:
    calls: dict[str, int] = {}

    def flaky(x: int) -> int:
        calls[str(x)] = calls.get(str(x), 0) + 1
        if x % 3 == 0:
            raise ConnectionError(f"down {x}")
        if x % 3 == 1 and calls[str(x)] == 1:
            raise ConnectionError(f"blip {x}")
        return x

    retry = RetryPolicy(max_attempts=2, initial_wait_s=0, max_wait_s=0, jitter_s=0)
    config = CampaignConfig(timeout_s=timeout_s, retry=retry)
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(6)]
    results = AblationEngine(config).run(flaky, lambda x: x, tasks, arms=("baseline",))
    got = {r.task_id: (r.status, r.error_stage, r.error_type, r.attempts, r.attempt_errors)
           for r in results}  # fmt: skip
    for i in range(6):
        if i % 3 == 0:
            errors = (f"ConnectionError: down {i}",) * 2
            assert got[f"t{i}"] == ("error", "agent", "ConnectionError", 2, errors)
        elif i % 3 == 1:
            assert got[f"t{i}"] == ("completed", None, None, 2, (f"ConnectionError: blip {i}",))
        else:
            assert got[f"t{i}"] == ("completed", None, None, 1, ())


def test_a_trial_that_holds_the_gil_past_its_deadline_is_a_timeout() -> None:
    """The loop cannot run the expiry while a thread holds the GIL; when the agent returns, its
    result and the expiry are due together, and the result once won now and then (a trial of
    0.15 s under timeout_s=0.02 recorded as completed and passed)."""
    import re

    def holds_the_gil(x: int) -> int:
        re.match(r"(a+)+$", "a" * 22 + "b")  # exponential backtracking in C, GIL held ~0.15 s
        return x

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(16)]
    config = CampaignConfig(timeout_s=0.02, concurrency=1)
    results = AblationEngine(config).run(holds_the_gil, holds_the_gil, tasks, arms=("candidate",))
    assert [r.status for r in results] == ["timeout"] * 16
    assert {(r.error_stage, r.passed) for r in results} == {("timeout", False)}
    assert all("during agent" in (r.error_message or "") for r in results)


def test_overdue_is_true_from_the_deadline_on_before_the_timer_ran() -> None:
    async def check() -> tuple[bool, bool]:
        deadlines = Deadlines(0.05)
        async with asyncio.timeout(None) as scope:
            deadlines.add(scope)
            before = deadlines.overdue(scope)
            time.sleep(0.08)  # blocks the loop: the timer cannot run
            after = deadlines.overdue(scope)
            deadlines.discard(scope)
        return before, after

    assert asyncio.run(check()) == (False, True)
