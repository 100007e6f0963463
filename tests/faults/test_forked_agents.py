"""Thread-mode agents that fork or leave children behind, end to end through ``ablation run``.

- a copy of the process forked by an agent (sync in a worker thread, or async on the event loop)
  ends as soon as it returns into ablation, while the campaign still runs, and stores nothing;
- a forked copy that stays alive does not hold the campaign's lock: after ``kill -9`` of the
  run, ``--resume`` is not refused;
- under ``--isolation process`` the worker's forked copy never answers for it (it once posted
  its result, which the worker's own replaced);
- children an agent started and left running (plain, or in a session of their own) are killed
  when the command ends.

Processes are found in ``/proc`` (pids the children write to files, or a unique argument).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import uuid
from pathlib import Path

import pytest
from helpers.cli import cli_env, kill, run, run_here, start, stored_trials, wait_until
from helpers.procs import alive, processes_with_arg

_AGENTS = '''
import asyncio, os, subprocess, sys, time

OUT = os.environ["FORK_OUT"]
TAG = os.environ["FORK_TAG"]
HOLD = os.path.join(OUT, "hold")  # while it exists, the tasks after task 0 wait


def _held():
    while os.path.exists(HOLD):
        time.sleep(0.01)


def _note(kind):
    with open(os.path.join(OUT, f"{kind}-{os.getpid()}"), "w"):
        pass


def ok(x):
    return 3 * x["n"]


def forks(x):
    """Task 0 forks; parent and copy both return (the copy into ablation). Later tasks wait."""
    if x["n"] == 0 and os.fork() == 0:
        _note("copy")
    elif x["n"] > 0:
        _held()
    return 3 * x["n"]


async def forks_async(x):
    if x["n"] == 0 and os.fork() == 0:
        _note("copy")
    elif x["n"] > 0:
        while os.path.exists(HOLD):
            await asyncio.sleep(0.01)
    return 3 * x["n"]


def forks_and_sleeps(x):
    """Task 0 forks a copy that sleeps inside the agent; later tasks wait."""
    if x["n"] == 0 and os.fork() == 0:
        _note("sleeper")
        time.sleep(600)
        os._exit(0)
    if x["n"] > 0:
        _held()
    return 3 * x["n"]


def forks_wrong(x):
    """The copy returns the right answer, the process that called the agent a wrong one."""
    pid = os.fork()
    if pid == 0:
        return 3 * x["n"]
    os.waitpid(pid, 0)
    return -1


def spawns(x):
    """Leaves two children running: one in ablation's session, one in a session of its own."""
    if x["n"] == 0:
        for own_session in (False, True):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", TAG],
                             start_new_session=own_session)
    return 3 * x["n"]
'''




def _pids(folder: Path, kind: str) -> list[int]:
    return [int(p.name.split("-")[1]) for p in folder.glob(f"{kind}-*")]


def _setup(tmp_path: Path, tasks: int, *, held: bool = False) -> tuple[Path, dict[str, str], str]:
    """The agents, their environment and tag; ``held``: the tasks after task 0 wait until the
    file ``out/hold`` is removed (the campaign runs until the test lets it end)."""
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    out = tmp_path / "out"
    out.mkdir()
    if held:
        (out / "hold").write_text("")
    tag = uuid.uuid4().hex
    env = cli_env(SLOW_SUITE_TASKS=str(tasks), FORK_OUT=out, FORK_TAG=tag)
    return agents, env, tag


def _args(agents: Path, candidate: str, store: Path, *extra: str) -> list[str]:
    return ["run", "tests/helpers/slow_suite.py", "--baseline", f"{agents}:ok", "--candidate",
            f"{agents}:{candidate}", "--store", str(store), "--no-progress", "--format", "json",
            "--concurrency", "1", *extra]  # fmt: skip


@pytest.mark.first
@pytest.mark.slow
@pytest.mark.parametrize("candidate", ["forks", "forks_async"])
def test_a_forked_copy_ends_when_it_returns_into_ablation(tmp_path: Path, candidate: str) -> None:
    agents, env, _ = _setup(tmp_path, tasks=4, held=True)
    store = tmp_path / "runs.db"
    proc = start(_args(agents, candidate, store), env)
    try:
        wait_until(lambda: bool(_pids(tmp_path / "out", "copy")), timeout=60, proc=proc)
        [copy] = _pids(tmp_path / "out", "copy")
        wait_until(lambda: not alive(copy), timeout=5)
        assert proc.poll() is None  # the copy ended on its own, before the campaign did
        (tmp_path / "out" / "hold").unlink()  # the campaign may end now
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            kill(proc)
    assert proc.returncode == 0, err
    assert json.loads(out)["n_paired"] == 4
    with sqlite3.connect(store) as db:
        [(n, distinct)] = db.execute(
            "select count(*), count(distinct task_id || arm) from trials"
        ).fetchall()
    assert n == distinct == 8  # the copy stored nothing


@pytest.mark.first
@pytest.mark.slow
def test_a_forked_copy_does_not_hold_the_lock_after_kill_9(tmp_path: Path) -> None:
    agents, env, _ = _setup(tmp_path, tasks=8, held=True)
    store = tmp_path / "runs.db"
    first = start(_args(agents, "forks_and_sleeps", store), env)
    sleepers: list[int] = []
    try:
        # task 0's pair is stored; the candidate's task 1 waits (or its baseline runs first).
        # The copy notes its pid on its own schedule: the pair may be stored before it runs.
        wait_until(lambda: stored_trials(store) >= 2 and bool(_pids(tmp_path / "out", "sleeper")),
                   timeout=60, proc=first)
        sleepers = _pids(tmp_path / "out", "sleeper")
        assert sleepers and all(alive(p) for p in sleepers)
        first.kill()  # SIGKILL: no clean-up runs; the sleeping copy lives on (holding the pipes)
        first.wait(timeout=30)
        assert 2 <= stored_trials(store) < 16  # stopped half-way
        (tmp_path / "out" / "hold").unlink()  # the resumed tasks answer at once
        # in this process: the lock is taken as by any resumer (a record lock of this process)
        resumed = run_here(_args(agents, "forks_and_sleeps", store, "--resume"), env)
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["n_paired"] == 8
    finally:
        for pid in sleepers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if first.poll() is None:
            first.kill()
            first.wait()
        for stream in (first.stdout, first.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.slow
def test_children_left_by_an_agent_are_killed_at_the_end(tmp_path: Path) -> None:
    agents, env, tag = _setup(tmp_path, tasks=4)
    proc = run(_args(agents, "spawns", tmp_path / "runs.db"), env)
    assert proc.returncode == 0, proc.stderr
    wait_until(lambda: processes_with_arg(tag.encode()) == [], timeout=5)


@pytest.mark.slow
def test_a_forked_copy_of_a_process_worker_never_answers(tmp_path: Path) -> None:
    agents, env, _ = _setup(tmp_path, tasks=4)
    # in this process: the fork happens in the isolation worker, a process either way
    proc = run_here(_args(agents, "forks_wrong", tmp_path / "runs.db", "--isolation", "process"), env)
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    # every answer recorded is the worker's own (-1): four regressions, whatever the copy said
    assert report["table"]["regressions"] == 4 and report["table"]["both_pass"] == 0
