"""Quality scorers under ``timeout_s``: a scorer that never returns is that scorer's error.

Each campaign here runs under a guard (``asyncio.wait_for``) far above the trial limit, so a
scorer left unbounded fails the test instead of holding it forever; no test asserts a duration.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig, TaskResult

#: Seconds a campaign may take before the guard fails the test (the trial limit is 0.5 s).
GUARD_S = 60.0
TIMEOUT_S = 0.5


def suite(n: int = 4) -> list[AblationTask]:
    return [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i * 2) for i in range(n)]


def double(x: int) -> int:
    return x * 2


@pytest.fixture
def never_set() -> Iterator[threading.Event]:
    """An event no scorer sees set during the test; set afterwards to free abandoned threads."""
    event = threading.Event()
    yield event
    event.set()


class Blocked:
    """A sync scorer blocked on ``event`` for task ``t1`` (runs in a daemon thread)."""

    name = "blocked"

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, output: Any, task: AblationTask) -> float:
        if task.task_id == "t1":
            self.event.wait()
        return 1.0


class Forever:
    """An async scorer that awaits forever for task ``t2`` (it yields to the loop)."""

    name = "forever"

    async def __call__(self, output: Any, task: AblationTask) -> float:
        if task.task_id == "t2":
            await asyncio.Event().wait()
        return 2.0


class Length:
    name = "length"

    def __call__(self, output: Any, task: AblationTask) -> float:
        return float(len(str(output)))


class OwnTimeout:
    """A scorer raising its own ``TimeoutError`` at once: an error with its message, no overrun."""

    name = "own"

    def __call__(self, output: Any, task: AblationTask) -> float:
        raise TimeoutError("judge endpoint said 504")


def run_guarded(scorers: list[Any], timeout_s: float | None = TIMEOUT_S) -> list[TaskResult]:
    config = CampaignConfig(n_resamples=500, timeout_s=timeout_s, concurrency=4)
    engine = AblationEngine(config, quality_scorers=scorers)

    async def main() -> list[TaskResult]:
        return await asyncio.wait_for(engine.run_async(double, double, suite()), GUARD_S)

    return asyncio.run(main())


def test_hung_sync_and_async_scorers_are_their_errors_and_other_values_kept(
    never_set: threading.Event,
) -> None:
    results = run_guarded([Blocked(never_set), Forever(), Length()])
    assert len(results) == 8
    for r in results:
        # The verdict is the verifier's: scoring never turns a trial into a timeout.
        assert (r.status, r.passed, r.error_type) == ("completed", True, None), r
        expected_errors = {}
        if r.task_id == "t1":
            expected_errors["blocked"] = f"Timeout: scorer 'blocked' exceeded timeout_s={TIMEOUT_S}"
        if r.task_id == "t2":
            expected_errors["forever"] = f"Timeout: scorer 'forever' exceeded timeout_s={TIMEOUT_S}"
        assert r.quality_errors == expected_errors
        expected = {"blocked": 1.0, "forever": 2.0, "length": float(len(str(r.output)))}
        for name in expected_errors:
            del expected[name]
        assert r.quality == expected


def test_a_scorers_own_timeout_error_keeps_its_message() -> None:
    results = run_guarded([OwnTimeout(), Length()])
    assert {r.quality_errors["own"] for r in results} == {"TimeoutError: judge endpoint said 504"}
    assert all(set(r.quality) == {"length"} for r in results)


def test_without_a_timeout_scorers_run_unbounded() -> None:
    results = run_guarded([Length()], timeout_s=None)
    assert all(r.quality == {"length": float(len(str(r.output)))} for r in results)
    assert all(r.quality_errors == {} for r in results)
