"""Fail fast on a broken arm: the sink wrapper, and a campaign stopped and resumed through it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import slow_suite

from ablation.errors import CampaignAborted
from ablation.run.campaign import CampaignRun, run_ablation_campaign
from ablation.run.failfast import BrokenArm, FailFastSink, infrastructure_signature
from ablation.schema import TaskResult
from ablation.store.run_store import RunStore


def _error(arm: str, kind: str, message: str = "down", stage: str = "agent") -> TaskResult:
    return TaskResult(
        task_id=f"t{id(message)}", arm=arm, status="error", passed=False, error_stage=stage,
        error_type=kind, error_message=message,
    )  # type: ignore[arg-type]


def _sink(limit: int = 3, planned: int = 10) -> tuple[FailFastSink, list[TaskResult]]:
    seen: list[TaskResult] = []
    sink = FailFastSink(
        seen.append, planned={"baseline": planned, "candidate": planned},
        agents={"baseline": "b", "candidate": "http://x/"}, limit=limit, campaign_id="c1",
    )
    return sink, seen


def test_the_same_infrastructure_error_k_times_stops_after_storing_the_trial() -> None:
    sink, seen = _sink()
    sink(_error("candidate", "AgentConnectionError", "refused 1"))
    sink(_error("baseline", "RuntimeError"))
    sink(_error("candidate", "AgentConnectionError", "refused 2"))
    with pytest.raises(BrokenArm) as caught:
        sink(_error("candidate", "AgentConnectionError", "refused 3"))
    assert len(seen) == 4  # every trial reached the store first
    exc = caught.value
    assert isinstance(exc, CampaignAborted)
    assert (exc.arm, exc.agent) == ("candidate", "http://x/")
    assert "first 3 trial(s)" in str(exc) and "--resume c1" in str(exc)
    assert "\n" not in str(exc)


@pytest.mark.parametrize(
    "kinds",
    [
        ["AgentConnectionError", "AgentConnectionError", "RuntimeError"],  # not all the same
        ["RuntimeError"] * 3,  # an agent's own failure is not infrastructure
        ["AgentConnectionError", "ModuleNotFoundError", "AgentConnectionError"],
    ],
)
def test_mixed_or_ordinary_errors_never_stop(kinds: list[str]) -> None:
    sink, _ = _sink()
    for i, kind in enumerate(kinds):
        sink(_error("candidate", kind, f"m{i}"))
    sink(_error("candidate", "AgentConnectionError", "later"))  # after the first K: not inspected


def test_completed_trials_and_timeouts_are_not_infrastructure() -> None:
    assert infrastructure_signature(TaskResult(task_id="a", arm="candidate", passed=True)) is None
    timeout = TaskResult(
        task_id="a", arm="candidate", status="timeout", passed=False, error_stage="timeout",
        error_type="Timeout",
    )
    assert infrastructure_signature(timeout) is None
    assert infrastructure_signature(_error("candidate", "ImportError", stage="verifier")) is None


def test_http_statuses_differ_and_command_not_found_counts() -> None:
    a = infrastructure_signature(_error("candidate", "AgentHttpError", "x: HTTP 503 Service Unavailable"))
    b = infrastructure_signature(_error("candidate", "AgentHttpError", "x: HTTP 404 Not Found"))
    assert a == "AgentHttpError HTTP 503" and a != b
    started = _error("candidate", "AgentProcessError", "cmd:nope: cannot start the command: FileNotFoundError")
    assert infrastructure_signature(started) == "AgentProcessError"
    assert infrastructure_signature(_error("candidate", "AgentProcessError", "exit status 3")) is None


def test_fewer_planned_trials_than_k_inspects_all_and_zero_disables() -> None:
    sink, _ = _sink(limit=10, planned=2)
    sink(_error("candidate", "ConnectionRefusedError", "1"))
    with pytest.raises(BrokenArm):
        sink(_error("candidate", "ConnectionRefusedError", "2"))
    off, _ = _sink(limit=0, planned=2)
    for i in range(5):
        off(_error("candidate", "ConnectionRefusedError", str(i)))


def _echo(task: dict) -> dict:
    return task


def _refusing(task: dict) -> int:
    raise ConnectionRefusedError("[Errno 111] Connection refused")


def test_a_campaign_with_a_broken_arm_is_aborted_and_resumable(tmp_path: Path) -> None:
    tasks = slow_suite.make_tasks(30)
    info = CampaignRun()
    with pytest.raises(BrokenArm):
        run_ablation_campaign(
            _echo, _refusing, tasks, store=tmp_path / "runs.db", run_info=info,
        )
    with RunStore(tmp_path / "runs.db") as store:
        record = store.get_campaign(info.campaign_id or "")
        assert record.status == "aborted"
        stored = store.count(record.campaign_id, arm="candidate")
    assert 10 <= stored < 30
    report = run_ablation_campaign(
        _echo, _refusing, tasks, store=tmp_path / "runs.db", resume=True, fail_fast=0,
    )
    assert report.candidate.errors == 30
