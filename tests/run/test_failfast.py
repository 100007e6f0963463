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


def test_the_same_infrastructure_error_k_times_stops_without_storing_the_broken_trials() -> None:
    sink, seen = _sink()
    sink(_error("candidate", "AgentConnectionError", "refused 1"))
    sink(_error("baseline", "RuntimeError"))
    sink(_error("candidate", "AgentConnectionError", "refused 2"))
    with pytest.raises(BrokenArm) as caught:
        sink(_error("candidate", "AgentConnectionError", "refused 3"))
    assert [r.arm for r in seen] == ["baseline"]  # the broken arm's trials are not kept
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
    assert stored == 0  # its broken trials were not stored: the resume runs them all
    report = run_ablation_campaign(
        _echo, _refusing, tasks, store=tmp_path / "runs.db", resume=True, fail_fast=0,
    )
    assert report.candidate.errors == 30


def test_trials_held_while_an_arm_may_be_broken_are_passed_on_once_it_cannot() -> None:
    sink, seen = _sink(limit=3)
    sink(_error("candidate", "AgentConnectionError", "refused 1"))
    sink(_error("candidate", "AgentConnectionError", "refused 2"))
    assert seen == []  # held: the arm may still prove broken
    sink(_error("candidate", "RuntimeError", "its own failure"))
    assert [r.error_message for r in seen] == ["refused 1", "refused 2", "its own failure"]
    held, kept = _sink(limit=3)
    held(_error("baseline", "AgentConnectionError", "refused"))
    held.close()  # the campaign ended (or was interrupted) before the arm was judged
    assert [r.error_message for r in kept] == ["refused"]


def _flaky_service(task: dict) -> dict:
    if not (Path(task["dir"]) / "up").exists():
        raise ConnectionRefusedError("[Errno 111] Connection refused")
    return {k: v for k, v in task.items() if k != "dir"}


def _echo_task(task: dict) -> dict:
    return {k: v for k, v in task.items() if k != "dir"}


def test_resuming_once_the_service_is_back_reports_no_outage_as_regressions(tmp_path: Path) -> None:
    """The resume the message proposes, after the fix: the two arms behave alike, so nothing
    may be reported as a regression (before, the outage's trials were kept as failures)."""
    from ablation import AblationTask

    tasks = [
        AblationTask(task_id=f"t{i:02d}", input_data={"n": i, "dir": str(tmp_path)}, expected_output={"n": i})
        for i in range(21)
    ]
    store = tmp_path / "runs.db"
    with pytest.raises(BrokenArm):
        run_ablation_campaign(_echo_task, _flaky_service, tasks, store=store)
    (tmp_path / "up").touch()
    report = run_ablation_campaign(_echo_task, _flaky_service, tasks, store=store, resume=True)
    assert (report.table.regressions, report.candidate.errors, report.verdict) == (0, 0, "pass")
    assert report.n_paired == 21


def test_resuming_after_fixing_the_agents_code_needs_no_override(tmp_path: Path) -> None:
    """The fix is a code change: the broken arm stores no trial, so the resume takes the new
    code (and records it); the report then has the fixed agent's trials only."""
    import json

    from helpers.cli import run_here

    suite = tmp_path / "suite.py"
    suite.write_text(
        "from ablation import AblationTask\n"
        "tasks = [AblationTask(task_id=f't{i:02d}', input_data=i, expected_output=i) for i in range(21)]\n"
    )
    agents = tmp_path / "agents.py"
    agents.write_text("def base(x):\n    return x\n\ndef cand(x):\n    raise ConnectionRefusedError('down')\n")
    store = tmp_path / "runs.db"
    args = ["run", str(suite), "--baseline", f"{agents}:base", "--candidate", f"{agents}:cand",
            "--store", str(store), "--no-progress", "--format", "json"]  # fmt: skip
    broken = run_here(args)
    assert broken.returncode == 1 and "is broken" in broken.stderr
    agents.write_text("def base(x):\n    return x\n\ndef cand(x):\n    return x\n")
    fixed = run_here([*args, "--resume"])
    assert fixed.returncode == 0, fixed.stderr
    report = json.loads(fixed.stdout)
    assert (report["table"]["regressions"], report["candidate"]["errors"], report["n_paired"]) == (0, 0, 21)
    again = run_here([*args, "--resume"])  # the new code was recorded: nothing changed since
    assert again.returncode == 0 and "changed since" not in again.stderr
