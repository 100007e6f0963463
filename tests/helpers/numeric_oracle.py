"""The lists and trial counts of a numeric comparison, written out one task at a time.

The oracle of :func:`ablation.analysis.numeric.compare_numeric`'s id lists (paired, regressions,
improvements, one-arm ids, missing and unknown ids) and its ``trials`` counts: plain loops over
the dicts, in the order the module docstring gives (the order of first appearance over the runs
and values of the baseline, then the candidate's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ablation.analysis.numeric import ArmRuns

#: ``task -> (runs seen, runs with a value)`` of one arm, the oracle's form of an arm's trials.
Runs = dict[str, tuple[frozenset[int], frozenset[int]]]


def as_arm_runs(runs: Runs) -> ArmRuns:
    """The :class:`ArmRuns` of ``runs``: one row per task and run seen, tasks in the dict's order
    (a task with no run seen is listed and has no row)."""
    rows = [(i, run, run in valued) for i, (seen, valued) in enumerate(runs.values()) for run in sorted(seen)]
    code, run, given = zip(*rows, strict=True) if rows else ((), (), ())
    return ArmRuns(list(runs), np.array(code, np.int64), np.array(run, np.int64), np.array(given, bool))


def by_task(runs: ArmRuns) -> Runs:
    """``runs`` task by task: the oracle's form (:data:`Runs`)."""
    seen: dict[str, set[int]] = {t: set() for t in runs.tasks}
    valued: dict[str, set[int]] = {t: set() for t in runs.tasks}
    for code, run, given in zip(runs.code.tolist(), runs.run.tolist(), runs.valued.tolist(), strict=True):
        seen[runs.tasks[code]].add(run)
        if given:
            valued[runs.tasks[code]].add(run)
    return {t: (frozenset(seen[t]), frozenset(valued[t])) for t in runs.tasks}


def numeric_lists(
    baseline: dict[str, float], candidate: dict[str, float], *, lower: bool, delta: float,
    expected_ids: Sequence[str] | None = None, runs: tuple[Runs, Runs] | None = None,
) -> dict[str, Any]:  # fmt: skip
    seen = list(dict.fromkeys([*(runs[0] if runs else ()), *baseline, *(runs[1] if runs else ()), *candidate]))
    universe = list(dict.fromkeys(str(i) for i in expected_ids)) if expected_ids is not None else seen
    inside = set(universe)
    ids = [t for t in baseline if t in candidate and t in inside]
    better = {t: (baseline[t] - candidate[t]) if lower else (candidate[t] - baseline[t]) for t in ids}
    if runs is None:
        trials = {arm: [sum(t in v for t in universe), len(universe)]
                  for arm, v in (("baseline", baseline), ("candidate", candidate))}  # fmt: skip
    else:
        empty: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
        done, total = [0, 0], 0
        for task in universe:
            (seen_b, done_b), (seen_c, done_c) = runs[0].get(task, empty), runs[1].get(task, empty)
            total += max(1, len(seen_b | seen_c))
            done[0] += len(done_b)
            done[1] += len(done_c)
        trials = {"baseline": [done[0], total], "candidate": [done[1], total]}
    return {
        "n_pairs": len(ids),
        "regressions": [t for t in ids if better[t] < -delta],
        "improvements": [t for t in ids if better[t] > delta],
        "only_baseline": [t for t in baseline if t not in candidate],
        "only_candidate": [t for t in candidate if t not in baseline],
        "n_expected": len(universe),
        "missing_baseline": [t for t in universe if t not in baseline],
        "missing_candidate": [t for t in universe if t not in candidate],
        "unknown": [t for t in seen if t not in inside],
        "trials": trials,
    }
