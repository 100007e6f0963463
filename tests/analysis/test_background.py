"""The exact MDE computed on a thread of its own gives the same report as in one thread; a
campaign loads its report's statistics modules while its agents run."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from helpers.cli import fresh_json
from helpers.random_trials import campaign

from ablation.analysis import build
from ablation.analysis.background import REPORT_STATISTICS, in_background, preload
from ablation.config import CampaignConfig


def test_the_call_runs_on_another_thread_and_its_error_reaches_the_getter() -> None:
    seen: list[str] = []

    def call() -> int:
        seen.append(threading.current_thread().name)
        return 7

    with in_background(call, True) as result:
        assert result() == 7
    assert seen and seen[0].startswith("ablation-stats")
    with in_background(call, False) as result:
        assert result() == 7
    assert seen[-1] == threading.current_thread().name

    def broken() -> int:
        raise ValueError("mde failed")

    with pytest.raises(ValueError, match="mde failed"), in_background(broken, True) as result:
        result()


@pytest.mark.parametrize("seed", [0])
def test_report_is_the_same_with_and_without_the_second_thread(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = campaign(seed, 1500)
    config = CampaignConfig(n_resamples=300, seed=seed)

    def report(threshold: int) -> Any:
        monkeypatch.setattr(build, "_PARALLEL", threshold)
        return build.compare_results(baseline, candidate, config=config)

    alone, beside = report(10**12), report(0)
    assert alone.minimum_detectable_effect is not None
    assert alone.model_dump_json() == beside.model_dump_json()


def test_a_campaign_loads_the_reports_statistics_while_its_agents_run() -> None:
    """The report's first call imported ~20-30 ms of statistics modules after the last trial;
    they now load on a daemon thread while the agents wait. The agents here look at
    ``sys.modules`` after their own wait, before any report exists."""
    code = """
import asyncio, json, sys
from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.analysis.background import REPORT_STATISTICS
seen = []
async def agent(x):
    await asyncio.sleep(0.2)
    seen.append(sorted(m for m in REPORT_STATISTICS if m not in sys.modules))
    return x
tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
run_ablation_campaign(agent, agent, tasks, config=CampaignConfig(concurrency=8))
print(json.dumps([[m for m in REPORT_STATISTICS if m in sys.modules], seen]))
"""
    loaded, seen = fresh_json(code)
    assert loaded == list(REPORT_STATISTICS)
    assert seen and all(missing == [] for missing in seen), seen


def test_report_statistics_name_every_module_a_first_report_imports() -> None:
    """The list cannot fall behind the report: what a first report (latencies, costs,
    categories, repeated runs) imports from ``ablation.stats`` and ``numpy.random`` is all
    imported by loading :data:`~ablation.analysis.background.REPORT_STATISTICS`: in one fresh
    interpreter, the list is loaded and the first report then imports none of them."""
    preloaded, report = fresh_json("""
import json, sys
from ablation import TaskResult, compare_results
from ablation.analysis.background import REPORT_STATISTICS, preload
rows = [TaskResult(task_id=f"t{i % 40}", arm="baseline", run=i // 40, passed=i % 3 > 0,
                   latency_s=1 + i / 7, cost=0.01 * (i % 5), category=f"c{i % 3}") for i in range(120)]
other = [r.model_copy(update={"passed": r.run != 1, "latency_s": 2 + r.latency_s % 1}) for r in rows]
before = set(sys.modules)
preload(REPORT_STATISTICS).join()
loaded = set(sys.modules)
assert compare_results(rows, other).n_paired == 40
print(json.dumps([sorted(loaded - before), sorted(set(sys.modules) - loaded)]))
""")

    def statistics(names: list[str]) -> list[str]:
        return [m for m in names if m.startswith(("ablation.stats.", "numpy.random"))]

    assert statistics(preloaded)  # left unloaded by the package's import: the check below says something
    assert statistics(report) == []


def test_preload_starts_nothing_when_every_module_is_loaded() -> None:
    assert preload(["json", "threading"]) is None
    thread = preload(["json", "no_such_module_for_ablation_tests"])
    assert thread is not None and thread.daemon and thread.name == "ablation-preload"
    thread.join(5)
    assert not thread.is_alive()


def test_a_fork_waits_for_the_preloads_to_end(tmp_path: Any) -> None:
    """A child forked while a preload is mid-import would hold a half-run module (and a lock
    of a thread it does not have). The fork waits: the child sees the module whole."""
    (tmp_path / "slow_module_for_preload.py").write_text(
        "import time\ntime.sleep(0.5)\nDONE = True\n", encoding="utf-8"
    )
    code = f"""
import json, os, sys, time
sys.path.insert(0, {str(tmp_path)!r})
from ablation.analysis.background import preload
preload(["slow_module_for_preload"])
time.sleep(0.1)  # the preload is now inside the module's half-second sleep
pid = os.fork()
if pid == 0:
    module = sys.modules.get("slow_module_for_preload")
    os._exit(0 if getattr(module, "DONE", False) else 3)
_, status = os.waitpid(pid, 0)
print(json.dumps(os.waitstatus_to_exitcode(status)))
"""
    assert fresh_json(code) == 0


def test_a_large_report_imports_its_statistics_before_pairing_a_small_one_does_not() -> None:
    """At LARGE rows the statistics (and scipy's bulk binomial tails) are loaded before the
    pairing builds its large containers; a small report keeps its lazy imports (start-up)."""
    code = """
import json, sys
from ablation.analysis import pair_arms
from ablation.analysis.background import LARGE, LARGE_REPORT_STATISTICS, REPORT_STATISTICS
from ablation.analysis.build import compare_columns
from ablation.columns import TrialColumns
import numpy as np
wanted = (*REPORT_STATISTICS, *LARGE_REPORT_STATISTICS)
seen = {}
def stop(*a, **k):
    seen["at_pairing"] = [m for m in wanted if m in sys.modules]
    raise SystemExit
pair_arms.pair_columns = stop
for n in (10, LARGE):
    ids = np.array([f"t{i}" for i in range(n)], dtype=object)
    arm = TrialColumns.verdicts("baseline", ids, np.ones(n, dtype=bool))
    try:
        compare_columns(arm, arm, names=("b", "c"))
    except SystemExit:
        pass
    seen[n] = seen.pop("at_pairing")
print(json.dumps([seen[10], seen[LARGE], list(wanted)]))
"""
    small, large, wanted = fresh_json(code)
    assert large == wanted
    assert "scipy.special" not in small and "ablation.stats.power" not in small
