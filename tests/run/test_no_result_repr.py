"""The blocking entry points never format their result: ``asyncio.run`` did, once per call.

From the main thread, ``asyncio.run`` restores the SIGINT handler, and ``signal.getsignal`` and
``signal.signal`` each fail to make an enum of the handler; each failure's message is the repr of
the finished task, with its result (``ablation/eventloop.py``): 1.19 s each for a 10⁶-task report,
seconds for large agent outputs. The checks run one after the other in one fresh interpreter's
main thread (started once for the module), where ``asyncio.run`` installs its handler as it does
under ``ablation run`` from a terminal; the reprs of reports, trials and outputs are counted for
each entry point on its own.
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
    found = {}
    for which in sys.argv[1:]:
        counts.update(report=0, trial=0, output=0)
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
        found[which] = dict(counts)
    print(json.dumps(found))
    """
)


ENTRIES = ("campaign", "engine", "agent", "coroutine")
pytestmark = pytest.mark.xdist_group("run-no-result-repr")  # one worker starts the interpreter


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, int]]:
    """Entry point -> the reprs counted while it ran, every entry point run in one interpreter."""
    folder = tmp_path_factory.mktemp("no-result-repr")
    script = folder / "check.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), *ENTRIES], cwd=folder, capture_output=True, text=True,
        timeout=120, check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert list(found) == list(ENTRIES)
    return found


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_blocking_run_formats_no_result(entry: str, counted: dict[str, dict[str, int]]) -> None:
    assert counted[entry] == {"report": 0, "trial": 0, "output": 0}
