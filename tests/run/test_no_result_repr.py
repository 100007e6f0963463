"""The blocking entry points never format their result: ``asyncio.run`` did, once per call.

From the main thread, ``asyncio.run`` restores the SIGINT handler, and ``signal.getsignal`` and
``signal.signal`` each fail to make an enum of the handler; each failure's message is the repr of
the finished task, with its result (``ablation/eventloop.py``): 1.19 s each for a 10⁶-task report,
seconds for large agent outputs. Each check runs in a fresh interpreter's main thread, where ``asyncio.run`` installs its
handler as it does under ``ablation run`` from a terminal; the reprs of reports, trials and
outputs are counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, signal, sys
    import threading
    from ablation import AblationEngine, AblationTask, CampaignConfig, run_ablation_campaign
    from ablation.agents.callables import as_agent
    from ablation.eventloop import run_coroutine
    from ablation.report import AblationReport
    from ablation.schema import TaskResult

    assert threading.current_thread() is threading.main_thread()
    # as in an interactive shell (a job started with "&" by a shell without job control inherits
    # SIGINT ignored, and then asyncio.run leaves the handler alone)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    counts = {"report": 0, "trial": 0, "output": 0}

    def counting(kind, real):
        def __repr__(self):
            counts[kind] += 1
            return real(self)
        return __repr__

    AblationReport.__repr__ = counting("report", AblationReport.__repr__)
    TaskResult.__repr__ = counting("trial", TaskResult.__repr__)

    class Output:
        def __repr__(self):
            counts["output"] += 1
            return "Output()"

    async def answer():
        return Output()

    def agent(x):
        return x

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(5)]
    config = CampaignConfig(n_resamples=100)
    which = sys.argv[1]
    if which == "campaign":
        run_ablation_campaign(agent, agent, tasks, config=config)
    elif which == "engine":
        AblationEngine(config).run(agent, agent, tasks)
    elif which == "agent":
        as_agent(lambda x: answer()).call_sync(None)
    elif which == "coroutine":
        assert isinstance(run_coroutine(answer()), Output)
        try:
            run_coroutine(asyncio.sleep(0, result=1 / 0))
        except ZeroDivisionError:
            pass
    print(json.dumps(counts))
    """
)


@pytest.mark.parametrize("entry", ["campaign", "engine", "agent", "coroutine"])
def test_a_blocking_run_formats_no_result(entry: str, tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), entry], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"report": 0, "trial": 0, "output": 0}
