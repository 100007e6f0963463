"""Process isolation (issue 11): an agent that kills its process costs one trial, not the campaign.

End to end through the command line (``tests/helpers/cli.py``) on a small ``slow_suite.py``
where the candidate of ``tests/helpers/isolation_agents.py`` misbehaves on task ``t001`` only, plus
Python API tests of the engine. The command runs in this process (``run_here``: the faults happen
in the workers it starts, not in the run's own process) except where the run's process is the
subject: an ``os._exit`` under thread isolation, Ctrl-C, ``kill -9``, and the agents that hang (a
hang must fail the test, not hold it), which get a command-line process of their own. Every
campaign carries a unique environment tag, which its worker processes inherit: after each
campaign, ``/proc`` is scanned for processes with that tag, so a worker left behind (or
re-parented to init) is found.

On the code before process isolation, ``--isolation`` is an unknown flag (exit 1, no report) and
``CampaignConfig(isolation=...)`` is an unknown field; under thread isolation ``os._exit`` or a
segfault ends the whole run (shown by the contrast test below).
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import isolation_agents
from helpers.cli import cli_env, run, run_here, stable, start, wait_until
from helpers.procs import alive

from ablation import AblationEngine, AblationTask, CampaignConfig, run_ablation_campaign
from ablation.errors import AgentSpecError, ConfigError
from ablation.run.isolation import WorkerDied, live_workers
from ablation.run.isolation_worker import WORKER_MARKER
from ablation.store.run_store import RunStore

AGENTS = "tests/helpers/isolation_agents.py"
TAG = "ABLATION_ISOLATION_TEST_TAG"


# ---------------------------------------------------------------------------- helpers
def _tagged(tag: str) -> list[int]:
    """Pids of live processes whose environment carries ``TAG=tag`` (zombies have none)."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found




def _args(store: Path, candidate: str, *extra: str, baseline: str = "ok") -> list[str]:
    """``ablation run`` on the slow suite; two trials at once (under process isolation, two
    workers, each an interpreter start, not eight) unless ``extra`` sets ``--concurrency``."""
    return [
        "run", "tests/helpers/slow_suite.py", "--baseline", f"{AGENTS}:{baseline}",
        "--candidate", f"{AGENTS}:{candidate}", "--format", "json", "--no-progress",
        "--store", str(store), "--seed", "3", "--concurrency", "2", *extra,
    ]


def _campaign(
    tmp_path: Path, candidate: str, *extra: str, baseline: str = "ok", tasks: int = 4, here: bool = True
):  # fmt: skip
    """Run one campaign; return the finished command, the tag of its processes and the seconds it
    took. ``here``: in this process (the workers inherit the tag and the ``PYTHONPATH`` that lets
    them import ``helpers``), else in a command-line process that is killed past 120 s."""
    tag = uuid.uuid4().hex
    args = _args(tmp_path / "runs.db", candidate, *extra, baseline=baseline)
    began = time.monotonic()
    if here:
        env = {"SLOW_SUITE_TASKS": str(tasks), TAG: tag, "PYTHONPATH": cli_env()["PYTHONPATH"]}
        proc = run_here(args, env)
    else:
        proc = run(args, cli_env(SLOW_SUITE_TASKS=str(tasks), **{TAG: tag}), timeout=120)
    return proc, tag, time.monotonic() - began


def _trials(store: Path) -> dict[tuple[str, str], tuple[str, str | None, str | None]]:
    """``(task_id, arm) -> (status, error_type, error_message)`` of every stored trial."""
    with RunStore(store) as run_store:
        record = run_store.latest_campaign()
        assert record is not None
        results = run_store.results(record.campaign_id)
    return {(r.task_id, r.arm): (r.status, r.error_type, r.error_message) for r in results}


def _one_fault(tmp_path: Path, trials: dict[Any, Any]) -> tuple[str, str | None, str | None]:
    """Every trial is stored and completed except the candidate's on ``t001``, which is returned."""
    assert len(trials) == 8
    others = {k: v for k, v in trials.items() if k != ("t001", "candidate")}
    assert all(status == "completed" for status, _, _ in others.values()), others
    return trials[("t001", "candidate")]


# ---------------------------------------------------------------------------- end to end
@pytest.mark.slow
def test_os_exit_costs_one_trial_and_the_worker_is_replaced(tmp_path: Path) -> None:
    proc, tag, _ = _campaign(tmp_path, "hard_exit", "--isolation", "process", "--concurrency", "1")
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert report["provenance"]["isolation"] == "process"
    status, error_type, message = _one_fault(tmp_path, _trials(tmp_path / "runs.db"))
    assert (status, error_type) == ("error", "WorkerDied")
    assert "exited with status 3" in str(message) and "'t001'" in str(message)
    assert _tagged(tag) == []
    # The stored campaign shows where its agents ran, in every format.
    store = str(tmp_path / "runs.db")
    stored = run_here(["report", "latest", "--store", store, "--format", "json"])
    assert json.loads(stored.stdout)["provenance"]["isolation"] == "process", stored.stderr
    shown = run_here(["report", "latest", "--store", store, "--format", "markdown"])
    assert "isolation=process" in shown.stdout, shown.stderr


@pytest.mark.slow
def test_os_exit_under_thread_isolation_ends_the_run(tmp_path: Path) -> None:
    """The contrast: without process isolation the agent's ``os._exit`` is the run's exit (so the
    run has a process of its own)."""
    proc, _, _ = _campaign(tmp_path, "hard_exit", "--concurrency", "1", here=False)
    assert proc.returncode == 3
    assert proc.stdout == ""


@pytest.mark.slow
def test_segfault_costs_one_trial(tmp_path: Path) -> None:
    proc, tag, _ = _campaign(tmp_path, "segfault", "--isolation", "process")
    assert proc.returncode in (0, 2), proc.stderr
    status, error_type, message = _one_fault(tmp_path, _trials(tmp_path / "runs.db"))
    assert (status, error_type) == ("error", "WorkerDied")
    assert "killed by SIGSEGV" in str(message) and "'t001'" in str(message)
    assert _tagged(tag) == []


@pytest.mark.slow
def test_system_exit_is_the_trials_error(tmp_path: Path) -> None:
    proc, tag, _ = _campaign(tmp_path, "system_exit", "--isolation", "process")
    assert proc.returncode in (0, 2), proc.stderr
    status, error_type, message = _one_fault(tmp_path, _trials(tmp_path / "runs.db"))
    assert (status, error_type, message) == ("error", "SystemExit", "4")
    assert _tagged(tag) == []


@pytest.mark.slow
def test_memory_cap_turns_a_huge_allocation_into_the_trials_error(tmp_path: Path) -> None:
    proc, tag, _ = _campaign(
        tmp_path, "hog", "--isolation", "process", "--worker-memory-mb", "512"
    )
    assert proc.returncode in (0, 2), proc.stderr
    status, error_type, _ = _one_fault(tmp_path, _trials(tmp_path / "runs.db"))
    assert (status, error_type) == ("error", "MemoryError")
    assert _tagged(tag) == []


@pytest.mark.slow
def test_a_trial_past_its_timeout_kills_its_worker(tmp_path: Path) -> None:
    """A sync call sleeping in C (the baseline) and an async agent that never awaits (the
    candidate), in one campaign: each a timeout, no hang (the run has a process of its own, so
    that a hang fails the test instead of holding it)."""
    proc, tag, seconds = _campaign(
        tmp_path, "busy", "--isolation", "process", "--timeout", "2", baseline="hang", here=False
    )
    assert proc.returncode in (0, 2), proc.stderr
    trials = _trials(tmp_path / "runs.db")
    assert len(trials) == 8
    faults = {key: trial[:2] for key, trial in trials.items() if key[0] == "t001"}
    assert faults == {("t001", arm): ("timeout", "Timeout") for arm in ("baseline", "candidate")}
    others = [trial for key, trial in trials.items() if key[0] != "t001"]
    assert all(status == "completed" for status, _, _ in others), trials
    assert seconds < 30
    assert _tagged(tag) == []


@pytest.mark.slow
def test_an_output_that_cannot_be_pickled_is_the_trials_error(tmp_path: Path) -> None:
    proc, tag, _ = _campaign(tmp_path, "unpicklable", "--isolation", "process")
    assert proc.returncode in (0, 2), proc.stderr
    status, error_type, message = _one_fault(tmp_path, _trials(tmp_path / "runs.db"))
    assert (status, error_type) == ("error", "UnsendableOutput")
    assert "generator" in str(message) and "'t001'" in str(message)
    assert _tagged(tag) == []


@pytest.mark.slow
def test_honest_agents_give_the_same_report_as_threads(tmp_path: Path) -> None:
    """Same pass/fail per task, same statistics; only the recorded isolation differs."""
    reports = {}
    for mode in ("thread", "process"):
        folder = tmp_path / mode
        folder.mkdir()
        proc, tag, _ = _campaign(
            folder, "wrong_on_even", "--isolation", mode, baseline="ok_async", tasks=12
        )
        assert proc.returncode in (0, 2), proc.stderr
        assert _tagged(tag) == []
        reports[mode] = stable(json.loads(proc.stdout))
    assert reports["thread"]["provenance"].pop("isolation") == "thread"
    assert reports["process"]["provenance"].pop("isolation") == "process"
    assert reports["process"]["regressions"] == [f"t{n:03d}" for n in range(0, 12, 2)]
    assert reports["thread"] == reports["process"]


@pytest.mark.slow
def test_ctrl_c_leaves_no_worker(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    env = cli_env(SLOW_SUITE_TASKS="4", **{TAG: tag})
    args = _args(tmp_path / "runs.db", "hang", "--isolation", "process", "--timeout", "600")
    proc = start(args, env)
    try:
        wait_until(lambda: len(_tagged(tag)) >= 2, timeout=60, proc=proc)  # the run and a worker
        time.sleep(1.0)  # the workers are busy (one of them hangs)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert "interrupted" in err
    wait_until(lambda: _tagged(tag) == [], timeout=10)


@pytest.mark.slow
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    """``kill -9`` of the run cannot run its clean-up; the workers still go (PR_SET_PDEATHSIG)."""
    tag = uuid.uuid4().hex
    env = cli_env(SLOW_SUITE_TASKS="4", **{TAG: tag})
    args = _args(tmp_path / "runs.db", "hang", "--isolation", "process", "--timeout", "600")
    proc = start(args, env)
    try:
        wait_until(lambda: len(_tagged(tag)) >= 2, timeout=60, proc=proc)
        time.sleep(1.0)
    finally:
        proc.kill()
        proc.communicate()
    wait_until(lambda: _tagged(tag) == [], timeout=10)


def test_isolation_in_pyproject_is_type_checked(tmp_path: Path) -> None:
    from ablation.cli.settings import load_tool_settings

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.ablation]\nisolation = "proc"\n')
    with pytest.raises(ConfigError, match=r"\[tool\.ablation\] isolation"):
        load_tool_settings(pyproject)
    pyproject.write_text('[tool.ablation]\nisolation = "process"\nworker-memory-mb = 512\n')
    assert load_tool_settings(pyproject) == {"isolation": "process", "worker_memory_mb": 512}


def test_a_memory_cap_without_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="needs isolation='process'"):
        CampaignConfig(worker_memory_mb=512)
    assert CampaignConfig(isolation="process", worker_memory_mb=512).worker_memory_mb == 512


# ---------------------------------------------------------------------------- Python API
def _tasks(n: int = 4) -> list[AblationTask]:
    return [
        AblationTask(task_id=f"t{i:03d}", input_data={"n": i}, expected_output=3 * i)
        for i in range(n)
    ]


def test_a_lambda_cannot_be_sent_and_the_error_says_what_to_do() -> None:
    config = CampaignConfig(isolation="process")
    with pytest.raises(AgentSpecError) as info:
        run_ablation_campaign(isolation_agents.ok, lambda x: 3 * x["n"], _tasks(), config=config)
    message = str(info.value)
    assert "cannot be sent to a worker process" in message and "<lambda>" in message
    assert "module-level function" in message and "isolation='thread'" in message
    assert live_workers() == []


def test_a_closure_cannot_be_sent() -> None:
    factor = 3

    def closure(x: dict[str, int]) -> int:
        return factor * x["n"]

    with pytest.raises(AgentSpecError, match="cannot be sent to a worker process"):
        AblationEngine(CampaignConfig(isolation="process")).run(
            isolation_agents.ok, closure, _tasks()
        )


def test_process_isolation_and_an_executor_do_not_combine() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool, pytest.raises(ConfigError, match="executor"):
        AblationEngine(CampaignConfig(isolation="process"), executor=pool).run(
            isolation_agents.ok, isolation_agents.ok, _tasks()
        )


def test_python_api_runs_agents_in_workers_and_kills_them_at_the_end() -> None:
    engine = AblationEngine(CampaignConfig(isolation="process", concurrency=2, timeout_s=60))
    results = engine.run(isolation_agents.ok_async, isolation_agents.pid, _tasks())
    by_key = {(r.task_id, r.arm): r for r in results}
    worker_pid = by_key[("t000", "candidate")].output
    assert isinstance(worker_pid, int) and worker_pid != os.getpid()
    assert all(r.passed for k, r in by_key.items() if k != ("t000", "candidate"))
    assert live_workers() == []
    assert not alive(worker_pid)
    cmdline = Path("/proc/self/cmdline").read_bytes()
    assert WORKER_MARKER.encode() not in cmdline


def test_an_agents_exception_keeps_its_type_and_the_workers_traceback() -> None:
    engine = AblationEngine(CampaignConfig(isolation="process", timeout_s=60, concurrency=2))
    results = engine.run(isolation_agents.ok, isolation_agents.raises, _tasks(2))
    failed = next(r for r in results if r.arm == "candidate" and r.task_id == "t001")
    assert (failed.status, failed.error_type, failed.error_message) == (
        "error", "ValueError", "bad input 1"
    )
    assert "isolation_agents.py" in str(failed.error_traceback)  # the worker's frames


def test_worker_died_names_the_status_and_the_task() -> None:
    engine = AblationEngine(CampaignConfig(isolation="process", timeout_s=60, concurrency=1))
    results = engine.run(isolation_agents.ok, isolation_agents.hard_exit, _tasks(3))
    failed = next(r for r in results if r.arm == "candidate" and r.task_id == "t001")
    assert failed.error_type == WorkerDied.__name__
    assert "exited with status 3" in str(failed.error_message)
    later = next(r for r in results if r.arm == "candidate" and r.task_id == "t002")
    assert later.passed  # the worker was replaced
    assert live_workers() == []
