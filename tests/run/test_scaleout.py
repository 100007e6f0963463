"""Running at scale: sync agents on a Dask cluster, and progress reporting that costs nothing.

The Dask tests start a real ``distributed.LocalCluster`` with two worker processes. The workers
import the agents by name (``helpers.slow_agents``), so the ``tests`` directory is put on their
``PYTHONPATH``; each agent call records its process id, which shows that the calls ran on the
workers and not in the test process.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
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
from ablation.run.progress import RichProgress

pytest.importorskip("distributed")

FAST = CampaignConfig(n_resamples=200, seed=7, timeout_s=60)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def worker_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Environment inherited by Dask workers: importable helpers, short sleeps, a call counter."""
    monkeypatch.setenv("PYTHONPATH", cli.cli_env()["PYTHONPATH"])
    monkeypatch.setenv("SLOW_AGENTS_SCALE", "0.2")
    counter = tmp_path / "calls"
    counter.mkdir()
    monkeypatch.setenv("SLOW_AGENTS_COUNTER_DIR", str(counter))
    return counter


def _stable(report: Any) -> Any:
    return cli.stable(json.loads(report.model_dump_json()))


# --------------------------------------------------------------------------- Dask


@pytest.mark.slow
def test_dask_executor_gives_the_local_report(worker_env: Path, tmp_path: Path) -> None:
    from ablation.run.scaleout import dask_executor

    tasks = slow_suite.make_tasks(40)
    local = run_ablation_campaign(slow_agents.baseline, slow_agents.candidate, tasks, config=FAST)
    assert slow_agents.callers(worker_env, "baseline") == {os.getpid()}
    (worker_env / "baseline.calls").unlink()
    (worker_env / "candidate.calls").unlink()

    info = CampaignRun()
    with dask_executor(local_workers=2) as executor:
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
def test_dask_executor_ships_agents_loaded_by_path_after_it_opened(worker_env: Path) -> None:
    from ablation.run.scaleout import dask_executor
    from ablation.sources.agent_specs import load_agent

    tasks = slow_suite.make_tasks(6)
    with dask_executor(local_workers=1) as executor:
        # Loaded while the cluster is up: the module is new to the executor.
        baseline = load_agent(f"{cli.REPO}/{cli.AGENTS}:baseline")
        candidate = load_agent(f"{cli.REPO}/{cli.AGENTS}:candidate")
        report = run_ablation_campaign(baseline, candidate, tasks, config=FAST, executor=executor)
        executor.shutdown(wait=True)  # the Executor protocol, as ``with executor:`` calls it
    assert report.baseline.errors == report.candidate.errors == 0, report.details
    assert report.regressions == [] and report.improvements == []
    assert os.getpid() not in slow_agents.callers(worker_env, "candidate")


@pytest.mark.first
@pytest.mark.slow
def test_cli_dask_local_end_to_end(worker_env: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    args = cli.run_args(
        store, agents="helpers.slow_agents", extra=["--dask-local", "2", "--seed", "7"]
    )
    env = cli.cli_env(SLOW_SUITE_TASKS="40")
    proc = cli.start(args, env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert (report["table"]["regressions"], report["table"]["improvements"]) == (4, 2)
    assert report["baseline"]["errors"] == report["candidate"]["errors"] == 0
    workers = slow_agents.callers(worker_env, "baseline") | slow_agents.callers(
        worker_env, "candidate"
    )
    assert proc.pid not in workers
    assert len(workers) == 2
    assert cli.campaigns(store)[0][1:] == ("complete", 80)

    # the same campaign without Dask, in this process (the Dask run above is the real process)
    local = cli.run_here(cli.run_args(tmp_path / "local.db", agents="helpers.slow_agents",
                                      extra=["--seed", "7"]), {"SLOW_SUITE_TASKS": "40"})  # fmt: skip
    assert local.returncode == 0, local.stderr
    assert cli.stable(json.loads(local.stdout)) == cli.stable(report)


@pytest.mark.slow
def test_cli_dask_local_with_agents_given_by_path(worker_env: Path, tmp_path: Path) -> None:
    """``file.py:name`` agents live in a module only the client has: they must reach the workers."""
    env = cli.cli_env(SLOW_SUITE_TASKS="40")
    log = tmp_path / "stderr.txt"
    args = cli.run_args(tmp_path / "runs.db", extra=["--dask-local", "2", "--seed", "7"])
    with log.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-c", cli.LAUNCH, *args], cwd=cli.REPO, env=env,
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
    workers = slow_agents.callers(worker_env, "baseline") | slow_agents.callers(
        worker_env, "candidate"
    )
    assert proc.pid not in workers
    assert len(workers) == 2


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


