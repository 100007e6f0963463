"""Campaigns with a run store: retries kept as data, and a stored baseline reused by candidates.

Through the Python API (:func:`ablation.run_ablation_campaign` with ``store=``) and through the
command line (``--candidate A --candidate B``, ``--reuse-baseline``; run in this process, no
process behaviour is checked). Agent calls are counted by closures, and for the command line by the
file counter of ``helpers.slow_agents``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, slow_agents, slow_suite

from ablation import (
    CampaignAborted,
    CampaignConfig,
    CampaignRun,
    ConfigError,
    ResumeMismatchError,
    RetryPolicy,
    RunStore,
    run_ablation_campaign,
)

FAST = CampaignConfig(n_resamples=200, seed=11)
NO_WAIT = {"initial_wait_s": 0, "max_wait_s": 0, "jitter_s": 0}


def _double(task: dict[str, Any]) -> int:
    return 3 * task["n"]


class _Script:
    """A sync agent that raises ``errors[k]`` on its k-th call for a task, then answers.

    Counts every call per task (thread-safe: sync agents run in a thread pool).
    """

    def __init__(self, *errors: BaseException) -> None:
        self.errors = errors
        self.calls: Counter[int] = Counter()
        self._lock = threading.Lock()

    def __call__(self, task: dict[str, Any]) -> int:
        with self._lock:
            self.calls[task["n"]] += 1
            k = self.calls[task["n"]]
        if k <= len(self.errors):
            raise self.errors[k - 1]
        return 3 * task["n"]


def _retry_config(**retry: Any) -> CampaignConfig:
    policy = RetryPolicy(max_attempts=3, retry_on=(ConnectionError,), **NO_WAIT, **retry)
    return FAST.model_copy(update={"retry": policy})


# --------------------------------------------------------------------------- retries


def test_retried_success_is_stored_with_both_failed_attempts(tmp_path: Path) -> None:
    tasks = slow_suite.make_tasks(6)
    agent = _Script(ConnectionError("reset by peer"), ConnectionError("reset again"))
    info = CampaignRun()
    report = run_ablation_campaign(
        _double, agent, tasks, config=_retry_config(), store=tmp_path / "runs.db", run_info=info
    )
    assert report.candidate.passes == 6
    assert report.candidate.retried == 6
    assert report.baseline.retried == 0
    assert set(agent.calls.values()) == {3}
    with RunStore(tmp_path / "runs.db") as store:
        stored = store.results(info.campaign_id or "", arm="candidate")
    assert len(stored) == 6
    for result in stored:
        assert (result.status, result.passed, result.attempts) == ("completed", True, 3)
        assert result.attempt_errors == (
            "ConnectionError: reset by peer",
            "ConnectionError: reset again",
        )
        assert result.error is None
        assert result.wall_s is not None and result.latency_s is not None
        assert result.latency_s <= result.wall_s


def test_exhausted_retries_record_every_attempt(tmp_path: Path) -> None:
    tasks = slow_suite.make_tasks(3)
    agent = _Script(*(ConnectionResetError(f"down #{k}") for k in (1, 2, 3)))
    info = CampaignRun()
    # Every trial of the arm fails with one connection error: fail-fast would stop the campaign
    # (tested in tests/run/test_failfast.py); here every attempt must run, so it is off.
    run_ablation_campaign(
        _double, agent, tasks, config=_retry_config(), store=tmp_path / "runs.db", run_info=info,
        fail_fast=0,
    )
    assert set(agent.calls.values()) == {3}
    with RunStore(tmp_path / "runs.db") as store:
        stored = store.results(info.campaign_id or "", arm="candidate")
    for result in stored:
        assert (result.status, result.passed, result.attempts) == ("error", False, 3)
        assert result.error_type == "ConnectionResetError"
        assert result.attempt_errors == tuple(f"ConnectionResetError: down #{k}" for k in (1, 2, 3))


def test_assertion_error_is_never_retried(tmp_path: Path) -> None:
    tasks = slow_suite.make_tasks(4)
    agent = _Script(AssertionError("wrong tool call"), ConnectionError("unreachable"))
    info = CampaignRun()
    report = run_ablation_campaign(
        _double, agent, tasks, config=_retry_config(), store=tmp_path / "runs.db", run_info=info
    )
    assert set(agent.calls.values()) == {1}
    assert report.candidate.errors == 4
    assert report.candidate.retried == 0
    with RunStore(tmp_path / "runs.db") as store:
        stored = store.results(info.campaign_id or "", arm="candidate")
    for result in stored:
        assert (result.status, result.attempts, result.error_stage) == ("error", 1, "agent")
        assert result.error == "AssertionError: wrong tool call"
        assert result.attempt_errors == ("AssertionError: wrong tool call",)


# --------------------------------------------------------------------------- baseline reuse


def _counted(name: str, fn: Callable[[dict[str, Any]], int], calls: Counter[str]) -> Any:
    lock = threading.Lock()

    def agent(task: dict[str, Any]) -> int:
        with lock:
            calls[name] += 1
        return fn(task)

    agent.name = name  # type: ignore[attr-defined]
    return agent


@pytest.fixture
def instant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents of ``helpers.slow_agents`` answer at once."""
    monkeypatch.setenv("SLOW_AGENTS_SCALE", "0")
    monkeypatch.delenv("SLOW_AGENTS_COUNTER_DIR", raising=False)


@pytest.mark.usefixtures("instant")
def test_candidates_reuse_a_stored_baseline_without_calling_it(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    tasks = slow_suite.make_tasks(40)
    calls: Counter[str] = Counter()
    baseline = _counted("baseline", slow_agents.baseline, calls)
    first = CampaignRun()
    report_a = run_ablation_campaign(
        baseline, _counted("A", slow_agents.candidate, calls), tasks, config=FAST, store=store,
        run_info=first,
    )  # fmt: skip
    assert calls == {"baseline": 40, "A": 40}
    assert report_a.provenance.baseline_reused_from is None
    with RunStore(store) as s:
        ran_at = s.get_campaign(first.campaign_id or "").created_at

    reports = {}
    for name, fn in (("B", slow_agents.candidate_b), ("C", slow_agents.candidate_c)):
        info = CampaignRun()
        reports[name] = run_ablation_campaign(
            baseline, _counted(name, fn, calls), tasks, config=FAST, store=store,
            reuse_baseline=first.campaign_id, run_info=info,
        )  # fmt: skip
        assert info.executed == {"baseline": 0, "candidate": 40}
        assert info.reused == {"baseline": 40, "candidate": 0}
        with RunStore(store) as s:
            assert s.get_campaign(info.campaign_id or "").status == "complete"
            assert s.count(info.campaign_id or "", arm="baseline") == 40
    assert calls == {"baseline": 40, "A": 40, "B": 40, "C": 40}  # no extra baseline call

    for report in reports.values():
        assert report.provenance.baseline_reused_from == first.campaign_id
        assert report.provenance.baseline_ran_at == ran_at
        assert report.provenance.baseline_agent == "baseline"
        assert report.baseline == report_a.baseline
    assert reports["B"].improvements == ["t013", "t033"]
    assert reports["B"].regressions == []
    assert reports["C"].regressions == ["t009", "t019", "t029", "t039"]


@pytest.mark.usefixtures("instant")
def test_reusing_a_baseline_from_another_suite_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    info = CampaignRun()
    run_ablation_campaign(
        slow_agents.baseline, slow_agents.candidate, slow_suite.make_tasks(20), config=FAST,
        store=store, run_info=info,
    )  # fmt: skip
    called: list[int] = []

    def candidate(task: dict[str, Any]) -> int:
        called.append(task["n"])
        return 3 * task["n"]

    with pytest.raises(ResumeMismatchError, match="'t007'"):
        run_ablation_campaign(
            slow_agents.baseline, candidate, slow_suite.make_tasks(20, changed="t007"),
            config=FAST, store=store, reuse_baseline=info.campaign_id,
        )  # fmt: skip
    with pytest.raises(ResumeMismatchError, match="'t020'"):
        run_ablation_campaign(
            slow_agents.baseline, candidate, slow_suite.make_tasks(21), config=FAST,
            store=store, reuse_baseline=info.campaign_id,
        )  # fmt: skip
    with pytest.raises(ConfigError, match="runs"):
        run_ablation_campaign(
            slow_agents.baseline, candidate, slow_suite.make_tasks(20),
            config=FAST.model_copy(update={"runs": 2}), store=store,
            reuse_baseline=info.campaign_id,
        )  # fmt: skip
    assert called == []
    with RunStore(store) as s:
        assert len(s.list_campaigns()) == 1  # a refused reuse leaves nothing behind


@pytest.mark.usefixtures("instant")
def test_reusing_a_baseline_run_with_other_trial_settings_is_refused(tmp_path: Path) -> None:
    # Baseline trials that ran under a 1 s timeout, paired with candidate trials under 30 s,
    # would compare the settings, not the agents: refused as a resume with them is.
    store, tasks = tmp_path / "runs.db", slow_suite.make_tasks(6)
    info = CampaignRun()
    run_ablation_campaign(
        slow_agents.baseline, slow_agents.candidate, tasks, store=store, run_info=info,
        config=FAST.model_copy(update={"timeout_s": 1.0}),
    )  # fmt: skip
    called: list[int] = []

    def candidate(task: dict[str, Any]) -> int:
        called.append(task["n"])
        return 3 * task["n"]

    with pytest.raises(ConfigError, match=r"cannot reuse .*config\.timeout_s changed: 1\.0 -> 30\.0"):
        run_ablation_campaign(
            slow_agents.baseline, candidate, tasks, store=store, reuse_baseline=info.campaign_id,
            config=FAST.model_copy(update={"timeout_s": 30.0}),
        )  # fmt: skip
    assert called == []
    with RunStore(store) as s:
        assert len(s.list_campaigns()) == 1


def test_cli_several_candidates_share_one_baseline_run(tmp_path: Path) -> None:
    store, counter = tmp_path / "runs.db", tmp_path / "calls"
    counter.mkdir()
    here = {"SLOW_AGENTS_SCALE": "0", "SLOW_SUITE_TASKS": "40", "SLOW_AGENTS_COUNTER_DIR": counter,
            "SLOW_SUITE_CHANGE": None}  # every run below: the command in this process
    proc = cli.run_here(cli.run_args(store, candidates=("candidate", "candidate_b")), here)
    assert proc.returncode == 0, proc.stderr
    assert {a: slow_agents.calls(counter, a) for a in ("baseline", "candidate", "candidate_b")} == {
        "baseline": 40, "candidate": 40, "candidate_b": 40,
    }  # fmt: skip

    payload = json.loads(proc.stdout)  # one document: every candidate's report, then a summary
    names = [f"{cli.AGENTS}:candidate", f"{cli.AGENTS}:candidate_b"]
    assert [c["name"] for c in payload["candidates"]] == names
    report_a, report_b = (c["report"] for c in payload["candidates"])
    summary = payload["summary"]
    first_id = report_a["provenance"]["campaign_id"]
    assert report_a["provenance"]["baseline_reused_from"] is None
    assert report_b["provenance"]["baseline_reused_from"] == first_id
    assert report_b["provenance"]["baseline_ran_at"]
    assert report_b["baseline"]["passes"] == report_a["baseline"]["passes"] == 36
    assert report_b["improvements"] == ["t013", "t033"]
    assert [row["name"] for row in summary["rows"]] == names
    assert [row["regressions"] for row in summary["rows"]] == [4, 0]
    assert all(row["holm_pvalue"] >= row["mcnemar_pvalue"] for row in summary["rows"])
    assert [status for _, status, _ in cli.campaigns(store)] == ["complete", "complete"]

    # A later run reuses the stored baseline by id: the baseline agent is not called again.
    again = cli.run_here(
        cli.run_args(store, candidates=("candidate_c",), extra=["--reuse-baseline", first_id]), here
    )
    assert again.returncode == 0, again.stderr
    assert slow_agents.calls(counter, "baseline") == 40
    assert slow_agents.calls(counter, "candidate_c") == 40
    report_c = json.loads(again.stdout)
    assert report_c["provenance"]["baseline_reused_from"] == first_id
    assert report_c["regressions"] == ["t009", "t019", "t029", "t039"]

    changed = {**here, "SLOW_SUITE_CHANGE": "t021"}
    refused = cli.run_here(
        cli.run_args(store, candidates=("candidate_c",), extra=["--reuse-baseline", first_id]),
        changed,
    )
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert "'t021'" in line
    assert slow_agents.calls(counter, "candidate_c") == 40


def test_aborted_campaign_is_marked_aborted(tmp_path: Path) -> None:
    from ablation import (
        AblationTask,
        CampaignAborted,
        CampaignConfig,
        RunStore,
        run_ablation_campaign,
    )

    def broken(x: int) -> int:
        raise RuntimeError("down")

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
    config = CampaignConfig(on_error="abort", concurrency=1, n_resamples=200)
    with pytest.raises(CampaignAborted, match="down"):
        run_ablation_campaign(lambda x: x, broken, tasks, config=config, store=tmp_path / "r.db")
    with RunStore(tmp_path / "r.db") as store:
        record = store.latest_campaign()
        assert record is not None and record.status == "aborted"
        assert record.n_trials >= 1  # the finished trials, the failing one included, are kept


@pytest.mark.usefixtures("instant")
def test_a_reused_baseline_that_stopped_part_way_is_run_where_it_holds_nothing(tmp_path: Path) -> None:
    # The first campaign aborts at its candidate's first error, with few baseline trials stored:
    # the campaign reusing its baseline runs the baseline on the other tasks (and only there), so
    # it pairs every task instead of leaving the others unpaired for good.
    store, tasks = tmp_path / "runs.db", slow_suite.make_tasks(12)
    calls: Counter[str] = Counter()
    baseline = _counted("baseline", slow_agents.baseline, calls)

    def broken(task: dict[str, Any]) -> int:
        raise ValueError("broken candidate")

    first = CampaignRun()
    with pytest.raises(CampaignAborted):
        run_ablation_campaign(
            baseline, broken, tasks, store=store, run_info=first,
            config=FAST.model_copy(update={"on_error": "abort", "concurrency": 1}),
        )  # fmt: skip
    with RunStore(store) as s:
        held = s.count(first.campaign_id or "", arm="baseline")
    assert 0 < held < len(tasks)

    info = CampaignRun()
    report = run_ablation_campaign(
        baseline, _counted("B", slow_agents.candidate_b, calls), tasks, config=FAST, store=store,
        reuse_baseline=first.campaign_id, run_info=info,
    )  # fmt: skip
    assert (report.n_paired, report.excluded) == (len(tasks), [])
    assert info.reused == {"baseline": held, "candidate": 0}
    assert info.executed == {"baseline": len(tasks) - held, "candidate": len(tasks)}
    assert calls == {"baseline": len(tasks), "B": len(tasks)}  # each task's baseline ran once
    assert report.provenance.baseline_reused_from == first.campaign_id
