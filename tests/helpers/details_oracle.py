"""The drill-downs as built from whole trials: every trial of a shown task alive at once.

A reference for :func:`ablation.analysis.details.details`, which keeps only what it shows of each
trial: built from the lookup's ``all_runs``/``many``/``get`` (whole :class:`TaskResult` s), each
view straight from the trial, the word diff from the two trials' outputs. Swapped in for
``ablation.analysis.build.details``, it gives the report the drill-downs must equal byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ablation.analysis.details import MAX_DETAILS, word_diff
from ablation.analysis.pairing import PairedData
from ablation.report import PairDetail, TrialView
from ablation.schema import TaskResult, to_jsonable

Key = tuple[str, str]


def _tools(result: TaskResult) -> list[str]:
    return [
        str(part.get("tool"))
        for message in result.trace or ()
        if isinstance(message, dict)
        for part in message.get("parts", ())
        if isinstance(part, dict) and part.get("kind") == "tool-call"
    ]


def _view(result: TaskResult | None) -> TrialView | None:
    if result is None:
        return None
    spans = result.spans.summary() if result.spans is not None else None
    return TrialView(
        status=result.status,
        passed=result.passed if result.completed else None,
        output=result.output,
        error=result.error,
        note=result.verifier_note,
        latency_s=result.latency_s,
        quality=dict(result.quality),
        attempts=result.attempts,
        run=result.run,
        tools=spans.tools if spans is not None and spans.tools else _tools(result),
        usage=result.usage.model_dump(exclude_defaults=True) if result.usage is not None else None,
        spans=spans,
    )


def _first(results: Sequence[TaskResult], passed: bool) -> TaskResult | None:
    for r in results:
        if bool(r.completed and r.passed) == passed:
            return r
    return results[0] if results else None


def _trials(data: PairedData, keys: list[Key]) -> dict[Key, list[TaskResult]]:
    trials: Mapping[Key, TaskResult] = data.trials
    if not trials:
        return {}
    all_runs = getattr(trials, "all_runs", None)
    if data.runs > 1 and callable(all_runs):
        found: dict[Key, list[TaskResult]] = all_runs(keys)
        return found
    many = getattr(trials, "many", None)
    if callable(many):
        first: Mapping[Key, TaskResult] = many(keys)
    else:
        first = {key: value for key in keys if (value := trials.get(key)) is not None}
    return {key: [value] for key, value in first.items()}


def _recorded(base_runs: Sequence[TaskResult], cand_runs: Sequence[TaskResult], name: str) -> Any:
    return next((value for r in (*base_runs, *cand_runs) if (value := getattr(r, name)) is not None), None)


def _detail(data: PairedData, kind: str, i: int, runs: Mapping[Key, list[TaskResult]]) -> PairDetail:
    tid = data.task_ids[i]
    base_runs, cand_runs = runs.get((tid, "baseline"), []), runs.get((tid, "candidate"), [])
    regression = kind == "regression"
    base, cand = _first(base_runs, regression), _first(cand_runs, not regression)
    task = data.tasks.get(tid)
    same_run = base is not None and cand is not None and base.run == cand.run
    return PairDetail(
        task_id=tid,
        kind=kind,  # type: ignore[arg-type]
        category=data.categories[i],
        critical=bool(data.critical[i]),
        run=base.run if same_run and base is not None else None,
        expected_output=to_jsonable(task.expected_output) if task is not None else _recorded(
            base_runs, cand_runs, "expected_output"),
        input=to_jsonable(getattr(task, "input_data", None)) if task is not None else _recorded(
            base_runs, cand_runs, "input"),
        baseline=_view(base),
        candidate=_view(cand),
        baseline_runs=[v for r in base_runs if (v := _view(r)) is not None] if len(base_runs) > 1 else [],
        candidate_runs=[v for r in cand_runs if (v := _view(r)) is not None] if len(cand_runs) > 1 else [],
        diff=word_diff(base.output, cand.output) if base is not None and cand is not None else [],
    )


def whole_trial_details(data: PairedData, masks: tuple[np.ndarray, ...]) -> list[PairDetail]:
    """The drill-downs of the first :data:`MAX_DETAILS` regressions and improvements, from
    whole trials."""
    shown = [
        (kind, int(i))
        for kind, mask in (("regression", masks[1]), ("improvement", masks[2]))
        for i in np.flatnonzero(mask)[:MAX_DETAILS]
    ]
    keys = [(data.task_ids[i], arm) for _, i in shown for arm in ("baseline", "candidate")]
    runs = _trials(data, keys)
    return [_detail(data, kind, i, runs) for kind, i in shown]
