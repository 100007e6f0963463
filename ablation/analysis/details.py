"""The report's drill-downs: the trials of the first regressions and improvements, side by side."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ablation.analysis.pairing import PairedData
from ablation.report import PairDetail, TrialView
from ablation.schema import TaskResult, to_jsonable

__all__ = ["MAX_DETAILS", "details"]

#: Regressions, and improvements, shown with their trials.
MAX_DETAILS = 500


def _view(result: TaskResult | None) -> TrialView | None:
    if result is None:
        return None
    return TrialView(
        status=result.status,
        passed=result.passed if result.completed else None,
        output=result.output,
        error=result.error,
        note=result.verifier_note,
        latency_s=result.latency_s,
        quality=dict(result.quality),
        attempts=result.attempts,
    )


def _first_trials(
    trials: Mapping[tuple[str, str], TaskResult], keys: list[tuple[str, str]]
) -> Mapping[tuple[str, str], TaskResult]:
    """The trials of ``keys`` from a drill-down lookup, in one read where it offers ``many``
    (a stored campaign's :class:`~ablation.analysis.stored.StoredTrials`)."""
    many = getattr(trials, "many", None)
    if callable(many):
        found: Mapping[tuple[str, str], TaskResult] = many(keys)
        return found
    return {key: value for key in keys if (value := trials.get(key)) is not None}


def details(data: PairedData, masks: tuple[np.ndarray, ...]) -> list[PairDetail]:
    """Side-by-side trials of the first :data:`MAX_DETAILS` regressions and improvements."""
    run = 0 if data.trials else None  # the first run's trials are shown, when there are trials
    shown = [
        (kind, int(i))
        for kind, mask in (("regression", masks[1]), ("improvement", masks[2]))
        for i in np.flatnonzero(mask)[:MAX_DETAILS]
    ]
    keys = [(data.task_ids[i], arm) for _, i in shown for arm in ("baseline", "candidate")]
    trials = _first_trials(data.trials, keys) if data.trials else {}
    out: list[PairDetail] = []
    for kind, i in shown:
        tid = data.task_ids[i]
        out.append(
            PairDetail(
                task_id=tid,
                kind=kind,  # type: ignore[arg-type]
                category=data.categories[i],
                critical=bool(data.critical[i]),
                run=run,
                expected_output=(
                    to_jsonable(data.tasks[tid].expected_output) if tid in data.tasks else None
                ),
                baseline=_view(trials.get((tid, "baseline"))),
                candidate=_view(trials.get((tid, "candidate"))),
            )
        )
    return out
