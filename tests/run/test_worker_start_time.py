"""With process isolation, starting a worker and loading the agent in it is no trial's time.

A worker's first call used to include its interpreter start and the load of the agent's module:
an instant agent whose module loads in 0.5 s was a timeout under ``timeout_s=0.25`` on every
worker's first call (and after a timeout kills its worker, on the next call again), and the
first call of each worker had the start as its latency. The engine now has a worker loaded for
the trial before the trial's clock runs (``ProcessIsolation.ready`` in the engine's turn).
"""

from __future__ import annotations

import pytest
from helpers.slow_loading_agent import LOAD_S, echo

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.run import isolation

TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(2)]


def test_a_slow_worker_start_is_not_a_timeout_of_the_first_trial() -> None:
    config = CampaignConfig(isolation="process", concurrency=1, timeout_s=LOAD_S / 2)
    results = AblationEngine(config).run(echo, echo, TASKS)
    assert [(r.task_id, r.arm, r.status) for r in results if r.status != "completed"] == []
    assert len(results) == 4 and all(r.passed for r in results)


def test_a_worker_start_is_not_in_the_latency(monkeypatch: pytest.MonkeyPatch) -> None:
    # The latency clock counts the workers started: an attempt that started one measures 1.
    started: list[object] = []
    start = isolation.ProcessIsolation._start

    def counted(self: isolation.ProcessIsolation) -> object:
        started.append(self)
        return start(self)

    monkeypatch.setattr(isolation.ProcessIsolation, "_start", counted)
    config = CampaignConfig(isolation="process", concurrency=1)
    results = AblationEngine(config, clock=lambda: float(len(started))).run(echo, echo, TASKS)
    assert len(started) == 1
    assert [(r.task_id, r.arm, r.latency_s) for r in results] == [
        (r.task_id, r.arm, 0.0) for r in results
    ]


def test_an_agent_whose_load_overran_the_wait_is_not_waited_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A module that hangs on import: the first trial waits LOAD_WAIT_S for the load, then times
    # out on its own clock; later trials go straight to the call (their timeout only), instead of
    # each waiting the load's wait again (LOAD_WAIT_S, 60 s by default, per trial).
    from helpers.hanging_import_agent import echo as hangs

    monkeypatch.setattr(isolation, "LOAD_WAIT_S", 0.2)
    loads: list[str] = []
    request = isolation.ProcessIsolation._request

    def counted(self: isolation.ProcessIsolation, arm: str, input_blob: bytes | None) -> bytes:
        if input_blob is None:
            loads.append(arm)
        return request(self, arm, input_blob)

    monkeypatch.setattr(isolation.ProcessIsolation, "_request", counted)
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
    config = CampaignConfig(isolation="process", concurrency=1, timeout_s=0.2)
    results = AblationEngine(config).run(hangs, hangs, tasks)
    assert [r.status for r in results] == ["timeout"] * 8
    assert len(loads) == 1, loads  # both arms run the same agent: one overrun for both
