"""Dask: a worker killed by a trial costs that trial only, and Dask's logs stay off stderr.

End to end through ``ablation run --dask-local 2``: the candidate ends its worker process
(``os._exit(3)``) on one task. That candidate trial is the campaign's only error
(never a baseline trial that shared the dying worker), and stderr holds nothing; with
``--verbose``, Dask's records appear as ``ablation.dask`` diagnostics (checked on the logging
bridge itself, without a cluster).

A candidate that kills its worker on every task, on a real ``LocalCluster`` of one worker
process. A ``LocalCluster`` closes a worker's nanny for good when the restarted worker is not
back ``distributed.deploy.lost-worker-timeout`` (15 s by default) after a death; the tests set it
to 0 s so that this happens at the first death instead of after a quarter of a minute. These
clusters fork their workers from a server process that imported ``distributed`` once
(``distributed.worker.multiprocessing-method: forkserver``, as Dask's own tests do), so a start
or a restart after a death is a fork, not an interpreter start with its imports: the workers are
real processes all the same, killed for real; the tests share one server (one xdist group).

- Given the client's own executor (``client.get_executor()``), the campaign ends within seconds,
  not after ``timeout_s``: the culprit is charged ``KilledWorker``, and every trial left without
  a worker gets ``NoWorkerLeft`` naming the cause (the cluster closed its workers, or, for a
  client that knows only the scheduler's address, no worker for the grace period), never a
  timeout, and no baseline trial is blamed. The completeness gate fails the report.
- :func:`dask_executor` keeps its nannies whatever ``lost-worker-timeout`` says, so every trial
  runs: each candidate trial is charged ``KilledWorker``, every baseline trial completes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import cli_env, run

pytest.importorskip("distributed")

_AGENTS = '''
import os
import time


def ok(x):
    time.sleep(0.02)
    return 3 * x["n"]


def killer(x):
    time.sleep(0.02)
    if x["n"] == 5:
        os._exit(3)
    return 3 * x["n"]


def always_kill(x):
    time.sleep(0.02)
    os.kill(os.getpid(), 9)
'''


@pytest.mark.first
@pytest.mark.slow
def test_a_dead_worker_is_charged_to_its_own_trial(tmp_path: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    proc = run(
        ["run", "tests/helpers/slow_suite.py", "--baseline", f"{agents}:ok", "--candidate",
         f"{agents}:killer", "--dask-local", "2", "--no-store", "--no-progress", "--format",
         "json", "--fail-fast", "0"],
        cli_env(SLOW_SUITE_TASKS="24"),
        timeout=180,
    )  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    groups = report["errors"]["groups"]
    assert [(g["arm"], g["error_type"], g["task_ids"]) for g in groups] == [
        ("candidate", "KilledWorker", ["t005"])
    ]
    assert report["baseline"]["errors"] == 0
    assert report["improvements"] == []
    assert proc.stderr == ""


@pytest.mark.parametrize("level", [logging.DEBUG, logging.WARNING])
def test_dask_records_are_ablation_debug_records(
    caplog: pytest.LogCaptureFixture, level: int
) -> None:
    from ablation.run.scaleout import _dask_logs_as_debug

    logging.getLogger("ablation").setLevel(level)
    try:
        with caplog.at_level(level, logger="ablation"), _dask_logs_as_debug():
            logging.getLogger("distributed.scheduler").error("Task x marked as failed")
    finally:
        logging.getLogger("ablation").setLevel(logging.NOTSET)
    seen = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    if level == logging.DEBUG:
        assert seen == [
            ("ablation.dask", logging.DEBUG, "distributed.scheduler: ERROR: Task x marked as failed")
        ]
    else:
        assert seen == []


# --------------------------------------------------------------------------- no worker left


@pytest.fixture
def agents(tmp_path: Path) -> tuple[Any, Any]:
    """The baseline ``ok`` and the candidate ``always_kill``, loaded from a file (sent by value)."""
    from ablation.sources.agent_specs import load_agent

    path = tmp_path / "agents.py"
    path.write_text(_AGENTS)
    return load_agent(f"{path}:ok"), load_agent(f"{path}:always_kill")


@pytest.fixture(scope="module")
def forked_workers() -> Iterator[None]:
    """Dask workers forked from one server process for the module (module docstring), which is
    stopped at the end. The server imports what a worker of these tests runs (``distributed`` and
    the module that runs an attempt) instead of Dask's default list (numpy, pandas, lz4 too)."""
    import multiprocessing.forkserver

    import dask
    from distributed.utils import get_mp_context

    try:
        with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
            get_mp_context().set_forkserver_preload(["distributed", "ablation.run.scaleout"])
            yield
    finally:
        with contextlib.suppress(Exception):  # private, as in CPython's own tests
            multiprocessing.forkserver._forkserver._stop()  # type: ignore[attr-defined]


@pytest.fixture
def nannies_given_up_fast(forked_workers: None) -> Iterator[None]:
    import dask

    with dask.config.set({"distributed.deploy.lost-worker-timeout": "0s"}):
        yield


def _tasks(n: int) -> list[Any]:
    from ablation import AblationTask

    return [AblationTask(task_id=f"t{i}", input_data={"n": i}, expected_output=3 * i) for i in range(n)]


def _errors(report: Any) -> dict[str, dict[str, list[str]]]:
    out: dict[str, dict[str, list[str]]] = {"baseline": {}, "candidate": {}}
    for g in report.errors.groups:
        out[g.arm][g.error_type] = sorted(g.task_ids)
    return out


@pytest.mark.slow
@pytest.mark.xdist_group("run-dask-forkserver")  # one worker starts the fork server
@pytest.mark.parametrize("client_of", ["cluster", "scheduler address"])
def test_trials_without_a_worker_left_are_infrastructure_errors_at_once(
    agents: tuple[Any, Any], nannies_given_up_fast: None, client_of: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from distributed import Client, LocalCluster

    from ablation import CampaignConfig, run_ablation_campaign
    from ablation.analysis.completeness import GATE_COMPLETENESS
    from ablation.run import scaleout

    monkeypatch.setattr(scaleout, "_NO_WORKER_GRACE_S", 1.0)
    # a time limit far above what the campaign takes on a loaded machine (13 s seen at load 30)
    config = CampaignConfig(seed=3, concurrency=2, timeout_s=120, n_resamples=200)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    ) as cluster, Client(cluster if client_of == "cluster" else cluster.scheduler_address) as client:  # fmt: skip
        started = time.monotonic()
        report = run_ablation_campaign(  # fail_fast=0: the report, not a stopped campaign
            *agents, _tasks(8), config=config, executor=client.get_executor(), fail_fast=0
        )
        took = time.monotonic() - started
    errors = _errors(report)
    assert took < config.timeout_s / 2, errors  # nobody waited for a timeout
    assert set(errors["baseline"]) == {"NoWorkerLeft"}  # the culprit's deaths are not blamed on it
    assert set(errors["candidate"]) <= {"KilledWorker", "NoWorkerLeft"}
    assert errors["candidate"]["KilledWorker"]  # the trials that ran killed their worker
    killed = set(errors["candidate"]["KilledWorker"])
    assert killed.isdisjoint(errors["candidate"].get("NoWorkerLeft", []))
    assert report.baseline.timeouts == report.candidate.timeouts == 0
    assert report.candidate.errors == 8
    example = next(g.example for g in report.errors.groups if g.error_type == "NoWorkerLeft")
    assert "no Dask worker left to run the trial" in example
    cause = "LocalCluster has closed all its workers" if client_of == "cluster" else (
        "the scheduler has had no worker for"
    )
    assert cause in example
    gates = {g.name: g.status for g in report.gates}
    assert gates[GATE_COMPLETENESS] == "fail"
    assert report.verdict != "pass"


@pytest.mark.slow
@pytest.mark.xdist_group("run-dask-forkserver")
def test_dask_executor_keeps_its_nannies_so_every_trial_runs(
    agents: tuple[Any, Any], nannies_given_up_fast: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ablation import CampaignConfig, run_ablation_campaign
    from ablation.run import scaleout
    from ablation.run.scaleout import dask_executor

    # Two tasks: once a death closed the nanny, a candidate trial is left that never ran. Every
    # candidate trial kills the worker twice (once more to be charged), each death a restart of
    # the one worker that every trial waits for: a time limit, and a grace for a scheduler
    # without workers, that no restart on a loaded machine reaches (a closed nanny needs no grace
    # to be a cause: the cluster holds no worker at once).
    monkeypatch.setattr(scaleout, "_NO_WORKER_GRACE_S", 120.0)
    config = CampaignConfig(seed=3, concurrency=2, timeout_s=120, n_resamples=200)
    with dask_executor(local_workers=1) as executor:
        report = run_ablation_campaign(*agents, _tasks(2), config=config, executor=executor)
    assert _errors(report) == {"baseline": {}, "candidate": {"KilledWorker": ["t0", "t1"]}}
    assert report.baseline.errors == 0 and report.baseline.n_trials == 2
