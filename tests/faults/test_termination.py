"""End to end: SIGTERM and SIGHUP stop ``ablation run`` the way Ctrl-C does.

CI cancellation, ``timeout``, ``docker stop`` and Kubernetes send SIGTERM. The command must exit 1
with one line, mark the stored campaign ``interrupted``, kill the ``cmd:`` agents and
process-isolation workers it started, and leave a campaign that ``--resume`` finishes. Every
process the campaign starts is found in ``/proc`` by a unique argument (``cmd:`` agents) or a
unique environment tag (workers, which inherit the run's environment).
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
import uuid
from pathlib import Path

import pytest
from helpers.cli import campaigns, cli_env, interrupt, run_here, start, wait_until
from helpers.procs import processes_with_arg

TAG = "ABLATION_TERMINATION_TEST_TAG"

#: A ``cmd:`` agent that answers ``3 * n``, but first waits while a file ``hold`` beside it
#: exists. Its argument is the test's unique tag.
_WAITER = (
    "import json, os, sys, time\n"
    "x = json.load(sys.stdin)\n"
    "while os.path.exists(os.path.join(os.path.dirname(sys.argv[0]), 'hold')):\n"
    "    time.sleep(0.05)\n"
    "print(json.dumps(3 * x['n']))\n"
)


def _tagged_env(tag: str) -> list[int]:
    """Pids of live processes whose environment carries ``TAG=tag``."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _default_dispositions() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.first
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_termination_interrupts_kills_command_agents_and_resumes(
    tmp_path: Path, sig: signal.Signals
) -> None:
    tag = uuid.uuid4().hex
    gate = tmp_path / "hold"
    gate.write_text("")
    script = tmp_path / "waiter.py"
    script.write_text(_WAITER)
    agent = "cmd:" + shlex.join([sys.executable, str(script), tag])
    store = tmp_path / "runs.db"
    args = [
        "run", "tests/helpers/slow_suite.py", "--baseline", "tests/helpers/hostile_agents.py:ok",
        "--candidate", agent, "--store", str(store), "--concurrency", "4", "--no-progress",
        "--format", "json",
    ]  # fmt: skip
    env = cli_env(SLOW_SUITE_TASKS="4")  # four candidate trials: all in flight, all waiting
    # as from a terminal: under nohup (SIGHUP ignored, inherited) ablation rightly keeps ignoring it
    proc = start(args, env, preexec_fn=_default_dispositions)
    wait_until(lambda: len(processes_with_arg(tag.encode())) >= 4, timeout=60, proc=proc)
    out, err = interrupt(proc, sig)

    assert proc.returncode == 1, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "interrupted" in lines[0] and "--resume" in lines[0]
    [(campaign_id, status, done)] = campaigns(store)
    assert status == "interrupted"
    assert campaign_id in lines[0]
    assert done < 8
    wait_until(lambda: processes_with_arg(tag.encode()) == [], timeout=10)

    gate.unlink()  # the agents now answer at once
    hint = shlex.split(lines[0].split("Resume with:", 1)[1])
    assert hint[:2] == ["ablation", "run"]
    resumed = run_here(hint[1:], {"SLOW_SUITE_TASKS": "4", "SLOW_SUITE_CHANGE": None})  # no signal
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["n_paired"] == 4
    assert campaigns(store) == [(campaign_id, "complete", 8)]


@pytest.mark.slow
def test_sigterm_kills_process_isolation_workers(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    args = [
        "run", "tests/helpers/slow_suite.py", "--baseline", "tests/helpers/isolation_agents.py:ok",
        "--candidate", "tests/helpers/isolation_agents.py:hang", "--isolation", "process",
        "--timeout", "600", "--store", str(tmp_path / "runs.db"), "--no-progress",
        "--format", "json",
    ]  # fmt: skip
    proc = start(args, cli_env(SLOW_SUITE_TASKS="4", **{TAG: tag}))
    wait_until(lambda: len(_tagged_env(tag)) >= 2, timeout=60, proc=proc)  # the run and a worker
    _, err = interrupt(proc, signal.SIGTERM)
    assert proc.returncode == 1, err
    assert len(err.strip().splitlines()) == 1, err
    assert "interrupted" in err
    wait_until(lambda: _tagged_env(tag) == [], timeout=10)
    [(_, status, _)] = campaigns(tmp_path / "runs.db")
    assert status == "interrupted"


@pytest.mark.slow
def test_sigterm_while_loading_the_suite_is_one_line(tmp_path: Path) -> None:
    """Before any campaign starts (here: a suite whose import hangs), SIGTERM is still one line."""
    suite = tmp_path / "suite.py"
    ready = tmp_path / "ready"
    suite.write_text(
        f"import pathlib, time\npathlib.Path({str(ready)!r}).write_text('')\ntime.sleep(600)\n"
    )
    args = [
        "run", str(suite), "--baseline", "tests/helpers/hostile_agents.py:ok",
        "--candidate", "tests/helpers/hostile_agents.py:ok", "--no-store", "--no-progress",
    ]  # fmt: skip
    proc = start(args, cli_env())
    wait_until(ready.exists, timeout=60, proc=proc)
    _, err = interrupt(proc, signal.SIGTERM)
    assert proc.returncode == 1, err
    assert len(err.strip().splitlines()) == 1, err
    assert "interrupted" in err


@pytest.mark.slow
def test_sigterm_when_sigint_is_ignored(tmp_path: Path) -> None:
    """A job started with ``&`` by a script ignores SIGINT; SIGTERM still stops it cleanly."""
    from helpers.cli import stored_trials

    store = tmp_path / "runs.db"
    args = [
        "run", "tests/helpers/slow_suite.py", "--baseline", "tests/helpers/slow_agents.py:baseline",
        "--candidate", "tests/helpers/slow_agents.py:candidate", "--store", str(store),
        "--no-progress", "--format", "json", "--concurrency", "4",
    ]  # fmt: skip
    proc = start(
        args, cli_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    wait_until(lambda: stored_trials(store) >= 10, timeout=60, proc=proc)
    _, err = interrupt(proc, signal.SIGTERM)
    assert proc.returncode == 1, err
    [line] = err.strip().splitlines()
    assert "interrupted" in line and "--resume" in line
    [(_, status, _)] = campaigns(store)
    assert status == "interrupted"


_INLINE_SUITE = """
import os, time
from ablation import AblationTask

MARK = os.environ["INLINE_VERIFIER_MARK"]


def slow_check(output, task):
    open(MARK, "w").close()
    end = time.monotonic() + 3.0
    while time.monotonic() < end:  # on the loop's thread, in Python: where a signal lands
        pass
    return output == task.expected_output


slow_check.inline = True
tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i, verifier=slow_check)
         for i in range(4)]
"""

_ECHO = "def echo(x):\n    return x\n"


@pytest.mark.slow
def test_sigterm_inside_an_inline_verifier_stops_the_campaign(tmp_path: Path) -> None:
    """With SIGINT ignored, SIGTERM raises where the main thread is; inside a verifier running on
    the loop's thread it was taken for that trial's error and the campaign ran on (exit 0)."""
    (tmp_path / "suite.py").write_text(_INLINE_SUITE)
    (tmp_path / "agents.py").write_text(_ECHO)
    mark, store = tmp_path / "verifying", tmp_path / "runs.db"
    args = ["run", str(tmp_path / "suite.py"), "--baseline", f"{tmp_path / 'agents.py'}:echo",
            "--candidate", f"{tmp_path / 'agents.py'}:echo", "--store", str(store),
            "--no-progress", "--format", "json", "--concurrency", "1"]  # fmt: skip
    proc = start(
        args, cli_env(INLINE_VERIFIER_MARK=mark),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    wait_until(mark.exists, timeout=60, proc=proc)
    _, err = interrupt(proc, signal.SIGTERM)
    assert proc.returncode == 1, err
    [line] = err.strip().splitlines()
    assert "interrupted" in line
    [(_, status, _)] = campaigns(store)
    assert status == "interrupted"
