"""An async agent runs on the event loop's thread, the main one under the command, where it can
replace the handlers that stop a campaign: one that ignored SIGTERM let a cancelled CI job run to
its end (exit 0), one that restored the default killed the process with the campaign left
``running``. The handler is put back after the call and the trial records the change."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from helpers.cli import cli_env, start, stored_trials, wait_until

from ablation import AblationTask, CampaignConfig, run_ablation_campaign

TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(3)]


async def echo(x: int) -> int:
    return x


async def ignores_sigterm(x: int) -> int:
    signal.signal(signal.SIGTERM, lambda *_: None)
    await asyncio.sleep(0)
    return x


def test_the_handler_is_restored_and_the_trial_records_it() -> None:
    before = signal.getsignal(signal.SIGTERM)
    report = run_ablation_campaign(echo, ignores_sigterm, TASKS, config=CampaignConfig(concurrency=1))
    assert signal.getsignal(signal.SIGTERM) is before
    [group] = report.errors.groups
    assert (group.arm, group.error_type, group.count) == ("candidate", "SignalHandlerChanged", 3)
    assert "SIGTERM" in group.example and "restored" in group.example
    # awaiting side by side, the first trial to end after a change records it; none is left
    report = run_ablation_campaign(echo, ignores_sigterm, TASKS * 1, config=CampaignConfig(concurrency=3))
    assert signal.getsignal(signal.SIGTERM) is before
    assert report.errors.groups and report.errors.groups[0].error_type == "SignalHandlerChanged"


_AGENTS = """
import asyncio, signal

async def ok(x):
    await asyncio.sleep(0.2)
    return x

async def ignores(x):
    signal.signal(signal.SIGTERM, lambda *_: None)
    return x
"""

_SUITE = """
from ablation import AblationTask
tasks = [AblationTask(task_id=f"t{i:02d}", input_data=i, expected_output=i) for i in range(60)]
"""


def test_sigterm_after_an_agent_replaced_the_handler_still_interrupts(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(_AGENTS)
    (tmp_path / "suite.py").write_text(_SUITE)
    store = tmp_path / "runs.db"
    args = ["run", str(tmp_path / "suite.py"), "--baseline", f"{tmp_path / 'agents.py'}:ignores",
            "--candidate", f"{tmp_path / 'agents.py'}:ok", "--store", str(store), "--concurrency",
            "1", "--fail-fast", "0", "--no-progress", "--format", "json"]  # fmt: skip
    proc = start(args, cli_env())
    try:
        # both arms' first trials are stored: the baseline replaced the handler at least once
        wait_until(lambda: stored_trials(store) >= 4, timeout=60, proc=proc)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err[-2000:]
    assert "interrupted" in err and out == ""
