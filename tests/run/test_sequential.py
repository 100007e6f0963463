"""Sequential campaigns through the Python API: order, stopping point, resume, runs, candidates
(on a Dask cluster: ``test_scaleout.py``).

The expected stopping pair is always recomputed here from the agents' failure rules with the
statistics module's own :meth:`SequentialMonitor.replay` over the outcomes in run order, never
read back from the code under test.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import slow_suite

from ablation import CampaignConfig, RunStore, TaskResult, run_ablation_campaign
from ablation.agents.callables import as_agent
from ablation.analysis.build import compare_results
from ablation.analysis.sequential import STOPPED_EARLY, sequential_order
from ablation.config import GatePolicy, SequentialPolicy
from ablation.errors import StopCampaign
from ablation.run.sequential import SequentialSink, sequential_tasks
from ablation.schema import AblationTask
from ablation.stats import SequentialMonitor

N = 120
TASKS = slow_suite.make_tasks(N)


def baseline(task: dict[str, Any]) -> int:
    return -1 if task["n"] % 10 == 3 else 3 * task["n"]


def worse(task: dict[str, Any]) -> int:
    """Regresses every task with n % 10 in (5, 9): 20% regressions, no improvement."""
    return -1 if task["n"] % 10 in (3, 5, 9) else 3 * task["n"]


def same(task: dict[str, Any]) -> int:
    return baseline(task)


def _outcome(n: int, candidate: Any) -> float:
    b = baseline({"n": n}) == 3 * n
    c = candidate({"n": n}) == 3 * n
    return float(c) - float(b)


def expected_stop(candidate: Any, config: CampaignConfig, n_tasks: int = N) -> SequentialMonitor:
    """The monitor over the outcomes in run order, from the agents' rules (reference)."""
    order = sequential_order([slow_suite.task_id(n) for n in range(n_tasks)], config.seed)
    outs = [_outcome(int(tid[1:]), candidate) for tid in order]
    assert config.sequential is not None
    mon = SequentialMonitor(
        alpha=config.alpha,
        margin=config.gates.noninferiority_margin,
        n_candidates=config.sequential.candidates,
        population_size=n_tasks,
        futility_after=config.sequential.futility_after,
    )
    for d in outs:
        mon = mon.update(d)
        if mon.decided:
            break
    return mon


def _config(**kw: Any) -> CampaignConfig:
    base: dict[str, Any] = {
        "n_resamples": 200, "concurrency": 4, "seed": 11, "sequential": SequentialPolicy()
    }
    base.update(kw)
    return CampaignConfig(**base)


def test_order_is_seeded_and_independent_of_the_suite_order() -> None:
    ids = [f"t{i}" for i in range(50)]
    a = sequential_order(ids, 3)
    assert sequential_order(list(reversed(ids)), 3) == a
    assert sequential_order(ids, 4) != a
    assert sorted(a) == sorted(ids)
    # the relative order of a subset is the order in the whole suite
    assert sequential_order(ids[:20], 3) == [t for t in a if t in set(ids[:20])]


def test_sink_feeds_pairs_in_run_order_whatever_the_completion_order() -> None:
    config = _config(runs=2)
    tasks = sequential_tasks(TASKS, config.seed)
    trials = [
        TaskResult(task_id=t.task_id, arm=arm, run=run, passed=(f(t.input_data) == 3 * t.input_data["n"]))
        for t in tasks for run in range(2) for arm, f in (("baseline", baseline), ("candidate", worse))
    ]
    states = []
    for seed in range(3):
        shuffled = trials[:]
        random.Random(seed).shuffle(shuffled)
        sink = SequentialSink(None, config, tasks)
        for r in shuffled:
            with contextlib.suppress(StopCampaign):  # after the decision trials are ignored
                sink(r)
        states.append(sink.monitor.state)
    reference = expected_stop(worse, config)  # runs are identical, so outcomes are the same
    assert all(s == states[0] for s in states)
    assert states[0].decided_at == reference.decided_at
    assert states[0].gate == reference.gate == "regression"


def test_clearly_worse_candidate_stops_early_and_lists_unrun_tasks(tmp_path: Path) -> None:
    config = _config()
    report = run_ablation_campaign(baseline, worse, TASKS, config=config, store=tmp_path / "r.db")
    ref = expected_stop(worse, config)
    s = report.sequential
    assert s is not None and s.stopped_early and s.gate == "regression"
    assert s.pairs == ref.decided_at < N
    assert s.agent_calls == 2 * s.pairs and s.agent_calls_saved == 2 * (N - s.pairs)
    assert report.n_paired == s.pairs
    not_run = [e for e in report.excluded if e.reason.startswith(STOPPED_EARLY)]
    assert len(not_run) == N - s.pairs
    assert report.verdict == "fail"
    regression_gate = next(g for g in report.gates if g.name == "no significant regression")
    assert regression_gate.status == "fail" and "e-value" in regression_gate.evidence
    # The stored campaign rebuilds the same sequential section.
    with RunStore(tmp_path / "r.db") as store:
        from ablation.analysis.stored import report_stored_campaign

        again, _ = report_stored_campaign(store)
    assert again.sequential == s


def test_resume_replays_stored_pairs_and_stops_at_the_same_pair(tmp_path: Path) -> None:
    config = _config(concurrency=1)
    full = run_ablation_campaign(baseline, worse, TASKS, config=config)
    stop_after = 20
    assert full.sequential is not None and full.sequential.pairs > stop_after  # interrupted before
    calls = {"n": 0}

    def flaky_candidate(task: dict[str, Any]) -> int:
        calls["n"] += 1
        if calls["n"] > stop_after:  # a real Ctrl-C to this process (an agent's own raise is data)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # not done before the interrupt lands
        return worse(task)

    store = tmp_path / "r.db"
    with pytest.raises(KeyboardInterrupt):
        run_ablation_campaign(
            baseline, as_agent(flaky_candidate, name="c"), TASKS, config=config, store=store
        )
    # The interrupting wrapper is other code than `worse` under the same name: an explicit opt-out.
    resumed = run_ablation_campaign(
        baseline, as_agent(worse, name="c"), TASKS, config=config, store=store, resume=True,
        allow_changed_agent=True,
    )
    assert resumed.sequential is not None and full.sequential is not None
    assert resumed.sequential.model_dump() == full.sequential.model_dump()
    assert resumed.table == full.table and resumed.excluded == full.excluded


def test_repeated_runs_use_the_task_as_the_unit() -> None:
    config = _config(runs=3)
    report = run_ablation_campaign(baseline, worse, TASKS, config=config)
    s = report.sequential
    assert s is not None and s.runs == 3
    assert s.pairs == expected_stop(worse, config).decided_at
    assert s.agent_calls == 2 * 3 * s.tasks_run


def test_margin_and_futility_decide_when_nothing_regresses() -> None:
    config = _config(
        gates=GatePolicy(noninferiority_margin=0.1), sequential=SequentialPolicy(futility_after=30)
    )
    report = run_ablation_campaign(baseline, same, TASKS, config=config)
    ref = expected_stop(same, config)
    s = report.sequential
    assert s is not None and s.gate == ref.gate and s.pairs == ref.decided_at
    ni = next(g for g in report.gates if g.name == "non-inferiority")
    assert ni.status == ("pass" if s.gate == "non_inferior" else "inconclusive")


def test_critical_regression_decides_at_once() -> None:
    tasks = [t.model_copy(update={"critical": t.input_data["n"] % 10 == 5}) for t in TASKS]
    config = _config()
    report = run_ablation_campaign(baseline, worse, tasks, config=config)
    order = sequential_order([t.task_id for t in tasks], config.seed)
    first = next(i for i, tid in enumerate(order, start=1) if int(tid[1:]) % 10 == 5)
    s = report.sequential
    assert s is not None and s.gate == "critical_regression" and s.tasks_run == first
    assert report.critical_regressions


def test_alpha_is_split_across_candidates_and_baseline_is_completed(tmp_path: Path) -> None:
    config = _config(sequential=SequentialPolicy(candidates=2))
    store = tmp_path / "r.db"
    first = run_ablation_campaign(baseline, worse, TASKS, config=config, store=store)
    second = run_ablation_campaign(
        baseline, same, TASKS, config=config, store=store,
        reuse_baseline=first.provenance.campaign_id,
    )
    assert first.sequential is not None and second.sequential is not None
    assert first.sequential.alpha_per_candidate == pytest.approx(0.025)
    assert first.sequential.pairs == expected_stop(worse, config).decided_at
    # the identical candidate never regresses: it runs the whole suite, with the baseline trials
    # the first campaign did not run
    assert second.sequential.gate == "end_of_suite" and second.n_paired == N


def test_sequential_replay_of_result_files_matches_the_monitor() -> None:
    rng = random.Random(5)
    ids = [f"x{i:03d}" for i in range(300)]
    before = [TaskResult(task_id=t, arm="baseline", passed=rng.random() < 0.7) for t in ids]
    after = [
        TaskResult(task_id=t, arm="candidate", passed=b.passed and rng.random() < 0.8)
        for t, b in zip(ids, before, strict=True)
    ]
    config = _config(seed=2)
    report = compare_results(before, after, config=config)
    by_id = {r.task_id: float(a.passed) - float(r.passed) for r, a in zip(before, after, strict=True)}
    outs = [by_id[t] for t in sequential_order(ids, 2)]
    ref = SequentialMonitor(alpha=0.05, population_size=300)
    for d in outs:
        ref = ref.update(d)
        if ref.decided:
            break
    assert report.sequential is not None
    assert (report.sequential.gate, report.sequential.pairs) == (ref.gate, ref.decided_at)
    assert report.sequential.e_value == pytest.approx(ref.state.e_value)


def test_unrelated_suite_size_does_not_change_the_tasks() -> None:
    tasks: list[AblationTask] = list(TASKS)
    assert {t.task_id for t in sequential_tasks(tasks, 1)} == {t.task_id for t in tasks}


def test_interrupted_campaign_is_undecided_and_waits_at_the_first_gap() -> None:
    ids = [f"y{i:02d}" for i in range(40)]
    order = sequential_order(ids, 0)
    missing = order[10]  # a gap: later tasks are not fed to the monitor, as in the live run
    before = [TaskResult(task_id=t, arm="baseline", passed=True) for t in ids if t != missing]
    after = [TaskResult(task_id=t, arm="candidate", passed=True) for t in ids if t != missing]
    report = compare_results(before, after, expected_ids=ids, config=_config(seed=0))
    s = report.sequential
    assert s is not None and s.gate == "undecided" and s.pairs == 10
    assert not s.stopped_early
