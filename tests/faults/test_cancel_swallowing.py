"""User code that swallows its cancellation ends its trial at the deadline; nothing waits for it.

An async agent, verifier, scorer or hook doing ``while True: try: await ... except BaseException:
pass`` never ends when cancelled. A plain ``await`` of it held the trial, the campaign and (as
``asyncio.run`` waits for every task it cancels) the process exit forever. Now the call is
abandoned: the trial is a timeout naming it, the campaign ends and the process exits.

Each campaign runs in a subprocess with a bound of its own, so a hang is a failure here, never a
hung test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import REPO, cli_env, run

#: One worker runs the campaign of the module fixture once; each campaign is a subprocess.
pytestmark = [pytest.mark.xdist_group("cancel-swallowing"), pytest.mark.slow]

USER_CODE = '''
import asyncio
import time

from ablation import AblationTask


async def swallow():
    while True:
        try:
            await asyncio.sleep(0.05)
        except BaseException:
            pass


async def stubborn(inp):
    if inp["kind"] == "agent":
        await swallow()
    return 1


def baseline(inp):
    if inp["kind"] == "thread":  # a sync agent that never returns (thread isolation)
        while True:
            time.sleep(0.05)
    return 1


async def stubborn_verifier(output, task):
    await swallow()


def inline_verifier(output, task):  # cheap and sync, yet it returns a coroutine
    return swallow()


inline_verifier.inline = True


async def stubborn_hook(task):
    await swallow()


async def scorer(output, task):
    if task.task_id == "scorer":
        await swallow()
    return 1.0


def task(task_id, kind="", **hooks):
    return AblationTask(task_id=task_id, input_data={"kind": kind}, expected_output=1, **hooks)


tasks = [
    task("agent", "agent"),
    task("thread", "thread"),
    task("verifier", verifier=stubborn_verifier),
    task("inline", verifier=inline_verifier),
    task("setup", setup=stubborn_hook),
    task("teardown", teardown=stubborn_hook),
    task("scorer"),
    task("fine"),
]
'''

CAMPAIGN = """
import json, user_code
from ablation import AblationEngine, CampaignConfig

engine = AblationEngine(
    CampaignConfig(timeout_s=0.3, concurrency=16), quality_scorers=[user_code.scorer]
)
results = engine.run(user_code.baseline, user_code.stubborn, user_code.tasks)
print(json.dumps({f"{r.task_id}/{r.arm}": r.model_dump(mode="json") for r in results}))
"""


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every trial of the campaign, ``"task/arm" -> TaskResult`` as JSON (the process exited)."""
    folder = tmp_path_factory.mktemp("swallow")
    (folder / "user_code.py").write_text(textwrap.dedent(USER_CODE))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CAMPAIGN], cwd=folder, env=cli_env(PYTHONPATH=f"{folder}:{REPO}"),
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the campaign (or the process exit) was still waiting after 30 s")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _timed_out(trial: dict[str, Any], named: str) -> None:
    assert trial["status"] == "timeout", trial
    message = trial["error_message"]
    assert "exceeded timeout_s=0.3" in message
    assert f"{named} did not end when cancelled and was abandoned" in message, message


def test_async_agent_swallowing_cancellation_is_a_timeout_naming_it(trials: dict[str, Any]) -> None:
    _timed_out(trials["agent/candidate"], "the agent 'user_code:stubborn'")
    assert trials["agent/baseline"]["status"] == "completed"
    assert trials["fine/candidate"]["status"] == "completed"  # the campaign went on


def test_async_verifier_swallowing_cancellation(trials: dict[str, Any]) -> None:
    for arm in ("baseline", "candidate"):
        _timed_out(trials[f"verifier/{arm}"], "the verifier 'user_code:stubborn_verifier'")


def test_inline_verifiers_coroutine_is_awaited_and_abandoned(trials: dict[str, Any]) -> None:
    _timed_out(trials["inline/candidate"], "the verifier 'user_code:inline_verifier'")


def test_hooks_swallowing_cancellation(trials: dict[str, Any]) -> None:
    _timed_out(trials["setup/candidate"], "the setup hook")
    teardown = trials["teardown/candidate"]
    assert teardown["status"] == "timeout"
    assert "during teardown; the teardown hook did not end when cancelled" in teardown["error_message"]


def test_scorer_swallowing_cancellation_is_its_error(trials: dict[str, Any]) -> None:
    trial = trials["scorer/baseline"]
    assert trial["status"] == "completed" and trial["passed"] is True
    (error,) = trial["quality_errors"].values()
    assert "exceeded timeout_s=0.3; it did not end when cancelled and was abandoned" in error
    assert trials["fine/baseline"]["quality"] == {"user_code:scorer": 1.0}


def test_sync_agent_that_never_returns_is_abandoned_in_its_thread(trials: dict[str, Any]) -> None:
    trial = trials["thread/baseline"]
    assert trial["status"] == "timeout"
    assert trial["error_message"] == "trial exceeded timeout_s=0.3 during agent"


def test_command_line_ends_and_exits(tmp_path: Path) -> None:
    """The command of the report: ``--timeout`` bounds the trial and the process exits."""
    (tmp_path / "user_code.py").write_text(textwrap.dedent(USER_CODE))
    spec = f"{tmp_path / 'user_code.py'}"
    args = [
        "run", spec, "--baseline", f"{spec}:baseline", "--candidate", f"{spec}:stubborn",
        "--timeout", "0.3", "--format", "json", "--no-progress", "--store", str(tmp_path / "runs.db"),
    ]  # fmt: skip
    try:
        proc = run(args, cli_env(PYTHONPATH=f"{tmp_path}:{REPO}"), timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("ablation run was still running after 30 s")
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_tasks"] == 8
