"""A report's drill-downs hold what they show of each trial, never every run's whole trial.

References: the drill-downs built from whole trials (``tests/helpers/details_oracle.py``, every
trial of a shown task alive at once, each view straight from its :class:`TaskResult`), swapped
in for the report's own, whose JSON report must be the same bytes; and tracemalloc's peak, which
with every run of a drill-down task alive at once is at least the runs' traces together.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ablation import CampaignConfig, RunStore, TaskResult, compare_results
from ablation.analysis import build
from ablation.analysis.build import build_report
from ablation.analysis.in_memory import split_arms
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.stored import report_stored_campaign
from ablation.config import Provenance
from ablation.outputs import TrialUsage
from ablation.render import render
from ablation.report import AblationReport
from ablation.spans import TrialSpans
from tests.helpers.details_oracle import whole_trial_details

ARMS = ("baseline", "candidate")


def _spans(tools: list[str]) -> TrialSpans:
    """Spans of one model call and ``tools`` tool calls under it."""
    model = ('{"name": "chat", "id": "01", "parent": null, "start_s": 0.0, "duration_s": 1.0, "status": "ok",'
             ' "error": null, "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",'
             ' "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3}}')  # fmt: skip
    calls = [
        f'{{"name": "tool {t}", "id": "1{k}", "parent": "01", "start_s": 0.5, "duration_s": 0.1, "status": "ok",'
        f' "error": null, "attributes": {{"gen_ai.tool.name": "{t}"}}}}'
        for k, t in enumerate(tools)
    ]
    return TrialSpans.pack([model, *calls])


def _trace(tools: list[str], text: str) -> list[Any]:
    """A pydantic-ai message list calling ``tools``, each call's arguments ``text``."""
    return [
        {"kind": "request", "parts": [{"kind": "user-prompt", "content": "go"}]},
        *({"kind": "response", "parts": [{"kind": "tool-call", "tool": t, "args": {"q": text}}]} for t in tools),
        {"kind": "response", "parts": [{"kind": "text", "content": "done"}]},
    ]


def _trial(task: int, arm: str, run: int, runs: int, *, step: str = "x") -> TaskResult:
    """Trial ``run`` of ``runs`` of task ``t{task}``: tasks 0-3 regress (the candidate fails its
    last two runs, the last an error for an even task), 4-5 improve, 6-8 are unchanged; traces,
    spans, usage, inputs and expected outputs recorded by some runs."""
    cand = arm == "candidate"
    regress, improve = task < 4, 4 <= task < 6
    passed = not (cand and regress and run >= runs - 2) and not (improve and not cand)
    error = cand and regress and run == runs - 1 and task % 2 == 0
    tools = ["search", "fetch"][: 1 + (task + run) % 2] if arm == "baseline" else ["search", "refund"]
    return TaskResult(
        task_id=f"t{task}", arm=arm, run=run, passed=passed and not error,  # type: ignore[arg-type]
        status="error" if error else "completed", error_type="Boom" if error else None,
        error_message="it broke" if error else None,
        output={"answer": task, "by": arm} if task % 3 == 0 else f"the answer is {task} says {arm} run {run}",
        latency_s=0.5 + task / 10 + run / 100, quality={"rubric": 0.25 * (run + 1)} if task % 2 else {},
        usage=TrialUsage(input_tokens=10 + task, output_tokens=run + 1) if task % 2 == 0 else None,
        trace=_trace(tools, step) if task != 5 else None, spans=_spans(tools) if task % 3 == 1 else None,
        input={"q": f"question {task}"} if cand or run else None,
        expected_output=f"the answer is {task}" if run == 1 else None,
        verifier_note="checked" if run == 2 else None,
    )  # fmt: skip


def _trials(runs: int, tasks: range = range(9), **kwargs: Any) -> list[TaskResult]:
    return [_trial(t, arm, r, runs, **kwargs) for t in tasks for arm in ARMS for r in range(runs)]


def _store(path: Path, trials: list[TaskResult], runs: int) -> Path:
    ids = sorted({r.task_id for r in trials})
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(runs=runs, n_resamples=200, seed=3), suite_fingerprint="f",
            task_digests=dict.fromkeys(ids, "d"), baseline_agent="m:b", candidate_agent="m:c",
        )  # fmt: skip
        for trial in trials:  # one at a time: a batch of long traces is not held at once
            store.append_many(cid, [trial])
        store.set_status(cid, "complete")
    return path


def _both(make: Callable[[], AblationReport], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The JSON report as built, and as built with the whole-trial drill-downs swapped in."""
    ours = make()
    assert ours.details, "a report without drill-downs compares nothing"
    with monkeypatch.context() as patch:
        patch.setattr(build, "details", whole_trial_details)
        reference = make()
    return render(ours, "json"), render(reference, "json")


@pytest.mark.parametrize(("runs", "update"), [(3, {}), (1, {}), (3, {"on_error": "exclude"})])
def test_a_stored_campaign_report_is_the_same_bytes_as_from_whole_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: int, update: dict[str, Any]
) -> None:
    path = _store(tmp_path / "s.db", _trials(runs), runs)
    with RunStore(path, read_only=True) as store:
        ours, reference = _both(lambda: report_stored_campaign(store, config_update=update)[0], monkeypatch)
    assert ours == reference
    report = AblationReport.model_validate_json(ours)
    assert {d.task_id for d in report.details} == {f"t{i}" for i in range(6)}
    shown = report.details[0]  # t0: recorded input and expected output, every run, tools, spans
    assert shown.input == {"q": "question 0"} and shown.expected_output == ("the answer is 0" if runs > 1 else None)
    assert shown.candidate is not None and shown.candidate.tools == ["search", "refund"]
    assert len(shown.candidate_runs) == (runs if runs > 1 else 0) and shown.diff
    assert any(v.spans is not None for d in report.details for v in (d.baseline, d.candidate) if v is not None)


def test_in_memory_lookups_give_the_same_bytes_as_from_whole_trials(monkeypatch: pytest.MonkeyPatch) -> None:
    trials = _trials(3)
    base = [r for r in trials if r.arm == "baseline"]
    cand = [r for r in trials if r.arm == "candidate"]
    config = CampaignConfig(n_resamples=200, seed=3)
    ours, reference = _both(lambda: compare_results(base, cand, config=config), monkeypatch)
    assert ours == reference
    sides = split_arms(trials)
    by_key = {(r.task_id, r.arm): r for r in reversed(trials)}  # a plain mapping: first runs by get

    def plain() -> AblationReport:
        data = pair_columns(sides["baseline"][1], sides["candidate"][1], trial_lookup=by_key)
        return build_report(data, config=config, provenance=Provenance(suite_fingerprint="f"))

    ours, reference = _both(plain, monkeypatch)
    assert ours == reference


#: Characters of each tool call's arguments in the memory test's traces: 2 MB a trial (and its
#: text in the store), 24 trials in the drill-downs.
STEP = 1_000_000


def test_the_drilldowns_of_long_traces_hold_one_trial_at_a_time(tmp_path: Path) -> None:
    trials = _trials(3, range(4), step="y" * STEP)
    path = _store(tmp_path / "s.db", trials, 3)
    del trials
    with RunStore(path, read_only=True) as store:
        report_stored_campaign(store)  # the modules a report imports are not counted below
        tracemalloc.start()
        try:
            report, _ = report_stored_campaign(store)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(report.details) == 4 and len(report.details[0].candidate_runs) == 3
    # Every run alive at once holds 24 traces of >= 1-2 MB (each decoded, most with their text).
    assert peak < 12 * STEP, f"peak {peak / 1e6:.1f} MB"
