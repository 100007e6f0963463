"""The wait for a rate-limit slot is no part of a trial: not its latency, not its ``timeout_s``.

Six instant trials per arm at 10 calls per second, all in flight at once, wait up to half a
second for their slots; with ``timeout_s=0.15`` the last ones used to be recorded as timeouts of
the agent (and the others' waits as its latency), though the agent never ran that long.
"""

from __future__ import annotations

import asyncio
import contextlib

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.run.deadlines import Deadlines

TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(6)]


def _echo(x: int) -> int:
    return x


def test_trials_waiting_for_a_rate_limit_slot_do_not_time_out() -> None:
    config = CampaignConfig(rate_limit_per_s=10, concurrency=12, timeout_s=0.15)
    results = AblationEngine(config).run(_echo, _echo, TASKS)
    assert len(results) == 2 * len(TASKS)
    assert [(r.task_id, r.arm, r.status, r.passed) for r in results if r.status != "completed"] == []
    assert all(r.passed for r in results)


def test_a_paused_scope_does_not_expire_and_keeps_the_time_it_had_left() -> None:
    async def check() -> tuple[bool, bool, bool]:
        deadlines = Deadlines(0.05)
        async with asyncio.timeout(None) as scope:
            deadlines.add(scope)
            with deadlines.paused(scope):
                await asyncio.sleep(0.1)  # twice the limit, with its clock stopped
                paused_overdue = deadlines.overdue(scope)
            resumed_overdue = deadlines.overdue(scope)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(1)  # the rest of its limit runs out: expired and cancelled
            deadlines.discard(scope)
        return paused_overdue, resumed_overdue, scope.expired()

    # a scope that expired while paused would end the first sleep: TimeoutError, the test fails
    assert asyncio.run(check()) == (False, False, True)
