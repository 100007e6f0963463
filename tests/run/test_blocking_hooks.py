"""Sync set-up and tear-down hooks that block: they hold their own trial, never the others.

A sync hook was called on the event loop's thread. A tear-down that slept 1.5 s with
``timeout_s=1`` and eight trials in flight ran the trials one after another and made the
others, whose agent answered at once, timeouts "during agent" (their deadlines passed while the
loop was held), and a tear-down that never returned held the campaign for ever. A sync hook now
runs in a daemon thread as a sync verifier does; a set-up that overruns is its own trial's timeout
during set-up, a tear-down bounded by ``timeout_s`` as a scorer call is.

The tests run each hook in one trial of several: the reference is a hook that returns at once,
with which every trial passes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig, TaskResult

RELEASE = threading.Event()  # set after each test: the hooks it abandoned then end


@pytest.fixture(autouse=True)
def release_blocked_hooks() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()


def _block(task: AblationTask) -> None:
    RELEASE.wait(30)


def _run(**hooks: Any) -> dict[str, TaskResult]:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i, **(hooks if i == 0 else {}))
             for i in range(6)]  # fmt: skip
    engine = AblationEngine(CampaignConfig(timeout_s=0.5, concurrency=6))
    return {r.task_id: r for r in engine.run(lambda x: x, lambda x: x, tasks, arms=("candidate",))}


def _others_pass(results: dict[str, TaskResult]) -> None:
    assert [(r.status, r.passed) for k, r in sorted(results.items()) if k != "t0"] == [("completed", True)] * 5


def test_a_blocking_setup_times_out_its_own_trial_during_setup() -> None:
    results = _run(setup=_block)
    _others_pass(results)
    assert (results["t0"].status, results["t0"].error_message) == (
        "timeout", "trial exceeded timeout_s=0.5 during setup"
    )


def test_a_blocking_teardown_is_bounded_and_holds_no_other_trial() -> None:
    results = _run(teardown=_block)
    _others_pass(results)
    assert (results["t0"].status, results["t0"].error_message) == (
        "timeout", "trial exceeded timeout_s=0.5 during teardown"
    )


def test_hooks_that_return_leave_every_trial_passing() -> None:
    _others_pass(results := _run(setup=lambda t: None, teardown=lambda t: None))
    assert (results["t0"].status, results["t0"].passed) == ("completed", True)
