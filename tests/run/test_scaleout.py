"""Running at scale: sync agents on a Dask cluster, and progress reporting that costs nothing.

The Dask tests run on a real ``distributed.LocalCluster`` with two worker processes: the command
line's own (``--dask-local 2``), or, for the Python API tests, one cluster of
:func:`dask_executor` shared by the module (each of those tests only runs campaigns on it, none
stops a worker; a test that does has a cluster of its own, ``test_dask_worker_death.py``). The
workers import the agents by name (``helpers.slow_agents``), so the ``tests`` directory is put on
their ``PYTHONPATH``; each agent call records its process id, which shows that the calls ran on
the workers and not in the test process.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, slow_agents, slow_suite

from ablation import (
    CampaignConfig,
    CampaignRun,
    RunStore,
    run_ablation_campaign,
)
from ablation.config import SequentialPolicy
from ablation.run.progress import RichProgress

pytest.importorskip("distributed")

FAST = CampaignConfig(n_resamples=200, seed=7, timeout_s=60)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _set_worker_env(monkeypatch: pytest.MonkeyPatch, counter: Path) -> None:
    """Environment inherited by Dask workers: importable helpers, short sleeps, a call counter."""
    monkeypatch.setenv("PYTHONPATH", cli.cli_env()["PYTHONPATH"])
    monkeypatch.setenv("SLOW_AGENTS_SCALE", "0.2")
    monkeypatch.setenv("SLOW_AGENTS_COUNTER_DIR", str(counter))


@pytest.fixture
def worker_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The workers' environment (:func:`_set_worker_env`) with this test's own call counter."""
    counter = tmp_path / "calls"
    counter.mkdir()
    _set_worker_env(monkeypatch, counter)
    return counter


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Executor, Path]]:
    """The executor of one ``dask_executor(local_workers=2)`` and the call counter of its workers.

    The workers take their environment when they start, so it is set while the cluster starts
    (and only then: the other tests of the module see their own).
    """
    from ablation.run.scaleout import dask_executor

    counter = tmp_path_factory.mktemp("calls")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _set_worker_env(monkeypatch, counter)
        cluster = dask_executor(local_workers=2)
        executor = cluster.__enter__()
    try:
        yield executor, counter
    finally:
        cluster.__exit__(None, None, None)


@pytest.fixture
def on_cluster(
    shared_cluster: tuple[Executor, Path], monkeypatch: pytest.MonkeyPatch
) -> tuple[Executor, Path]:
    """The shared cluster with its call counter emptied; this process counts its calls there too."""
    executor, counter = shared_cluster
    for path in counter.iterdir():
        path.unlink()
    _set_worker_env(monkeypatch, counter)
    return executor, counter


def _stable(report: Any) -> Any:
    return cli.stable(json.loads(report.model_dump_json()))


# --------------------------------------------------------------------------- Dask


@pytest.mark.slow
@pytest.mark.xdist_group("run-scaleout-cluster")  # one worker starts the shared cluster
def test_dask_executor_gives_the_local_report(
    on_cluster: tuple[Executor, Path], tmp_path: Path
) -> None:
    executor, worker_env = on_cluster
    tasks = slow_suite.make_tasks(40)
    local = run_ablation_campaign(slow_agents.baseline, slow_agents.candidate, tasks, config=FAST)
    assert slow_agents.callers(worker_env, "baseline") == {os.getpid()}
    (worker_env / "baseline.calls").unlink()
    (worker_env / "candidate.calls").unlink()

    info = CampaignRun()
    remote = run_ablation_campaign(
        slow_agents.baseline, slow_agents.candidate, tasks, config=FAST,
        store=tmp_path / "runs.db", executor=executor, run_info=info,
    )  # fmt: skip
    assert _stable(remote) == _stable(local)
    assert remote.table.regressions == 4 and remote.table.improvements == 2
    assert remote.baseline.errors == remote.candidate.errors == 0
    workers = slow_agents.callers(worker_env, "baseline") | slow_agents.callers(
        worker_env, "candidate"
    )
    assert os.getpid() not in workers
    assert len(workers) == 2
    assert slow_agents.calls(worker_env, "baseline") == 40
    with RunStore(tmp_path / "runs.db") as store:  # results streamed back into the local store
        assert store.count(info.campaign_id or "") == 80


@pytest.mark.slow
@pytest.mark.xdist_group("run-scaleout-cluster")
def test_dask_executor_ships_agents_loaded_by_path_after_it_opened(
    on_cluster: tuple[Executor, Path],
) -> None:
    """An agent loaded from a file after the executor opened reaches the workers. The executor is
    :func:`dask_executor`'s for a scheduler address (``--dask-scheduler``): a client of its own on
    the shared cluster, shut down through the Executor protocol."""
    from ablation.run.scaleout import dask_executor
    from ablation.sources.agent_specs import load_agent

    shared, worker_env = on_cluster
    tasks = slow_suite.make_tasks(6)
    with dask_executor(scheduler=shared._client.scheduler.address) as executor:  # type: ignore[attr-defined]
        # Loaded while the cluster is up: the module is new to the executor.
        baseline = load_agent(f"{cli.REPO}/{cli.AGENTS}:baseline")
        candidate = load_agent(f"{cli.REPO}/{cli.AGENTS}:candidate")
        report = run_ablation_campaign(baseline, candidate, tasks, config=FAST, executor=executor)
        executor.shutdown(wait=True)  # the Executor protocol, as ``with executor:`` calls it
    assert report.baseline.errors == report.candidate.errors == 0, report.details
    assert report.regressions == [] and report.improvements == []
    assert os.getpid() not in slow_agents.callers(worker_env, "candidate")


@pytest.mark.slow
@pytest.mark.xdist_group("run-scaleout-cluster")
def test_dask_executor_stops_a_sequential_campaign_at_the_same_pair(
    on_cluster: tuple[Executor, Path], tmp_path: Path
) -> None:
    """Trials end out of order on the workers; the campaign stops at the pair it stops at locally."""
    executor, _ = on_cluster
    tasks = slow_suite.make_tasks(120)
    config = CampaignConfig(n_resamples=200, concurrency=4, seed=5, sequential=SequentialPolicy())
    local = run_ablation_campaign(slow_agents.baseline, slow_agents.candidate_c, tasks, config=config)
    remote = run_ablation_campaign(
        slow_agents.baseline, slow_agents.candidate_c, tasks, config=config,
        store=tmp_path / "runs.db", executor=executor,
    )  # fmt: skip
    assert local.sequential is not None and local.sequential.stopped_early
    assert remote.sequential == local.sequential
    assert remote.table == local.table


@pytest.mark.first
@pytest.mark.slow
def test_cli_dask_local_end_to_end(worker_env: Path, tmp_path: Path) -> None:
    """``--dask-local 2`` runs both arms on the two workers and gives the report of the same command
    without Dask. The baseline is named by module (the workers import it); the candidate is a
    ``file.py:name`` agent, whose module only the client has: it must reach the workers."""
    store = tmp_path / "runs.db"

    def args(store: Path, *extra: str) -> list[str]:
        return [
            "run", cli.SUITE, "--baseline", "helpers.slow_agents:baseline", "--candidate",
            f"{cli.AGENTS}:candidate", "--store", str(store), "--concurrency", "8", "--no-progress",
            "--format", "json", "--seed", "7", *extra,
        ]  # fmt: skip

    log = tmp_path / "stderr.txt"
    with log.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-c", cli.LAUNCH, *args(store, "--dask-local", "2")], cwd=cli.REPO,
            env=cli.cli_env(SLOW_SUITE_TASKS="40"),
            stdout=subprocess.PIPE, stderr=err_file, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            # A worker that cannot unpickle the agent makes the run hang: fail fast instead.
            cli.wait_until(
                lambda: proc.poll() is not None or "No module named '_ablation_file_" in log.read_text(),
                timeout=120, interval=0.1,
            )  # fmt: skip
            out = proc.communicate(timeout=30)[0] if proc.poll() is not None else ""
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
    assert proc.returncode == 0, log.read_text()[-3000:]
    report = json.loads(out)
    assert (report["table"]["regressions"], report["table"]["improvements"]) == (4, 2)
    assert report["baseline"]["errors"] == report["candidate"]["errors"] == 0
    by_module = slow_agents.callers(worker_env, "baseline")
    by_path = slow_agents.callers(worker_env, "candidate")
    assert proc.pid not in by_module | by_path
    assert by_module and by_path  # each arm ran on the workers
    assert len(by_module | by_path) == 2
    assert cli.campaigns(store)[0][1:] == ("complete", 80)

    # the same campaign without Dask, in this process (the Dask run above is the real process)
    local = cli.run_here(args(tmp_path / "local.db"), {"SLOW_SUITE_TASKS": "40"})
    assert local.returncode == 0, local.stderr
    assert cli.stable(json.loads(local.stdout)) == cli.stable(report)


# --------------------------------------------------------------------------- progress


def test_rich_progress_shows_per_arm_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    monkeypatch.setenv("SLOW_AGENTS_SCALE", "0")
    monkeypatch.delenv("SLOW_AGENTS_COUNTER_DIR", raising=False)

    def candidate(task: dict[str, Any]) -> int:
        if task["n"] % 10 == 0:
            raise RuntimeError("tool crashed")
        return slow_agents.candidate(task)

    console_file = io.StringIO()
    console = Console(file=console_file, force_terminal=True, width=200, color_system="standard")
    report = run_ablation_campaign(
        slow_agents.baseline, candidate, slow_suite.make_tasks(40), config=FAST,
        progress=RichProgress(console),
    )  # fmt: skip
    assert report.candidate.errors == 4
    text = ANSI.sub("", console_file.getvalue())
    # Baseline fails n % 10 == 3; the candidate fails n % 10 == 7 and n in (3, 23), and crashes
    # on n % 10 == 0.
    assert "baseline: 36 pass 4 fail 0 err" in text
    assert "candidate: 30 pass 6 fail 4 err" in text
    assert "80/80" in text


