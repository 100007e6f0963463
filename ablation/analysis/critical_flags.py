"""The critical flags of tasks the pairing left out: the critical gate cannot judge those tasks.

A task with no pair (no result in either arm, results in one arm only, or, with
``on_error="exclude"``, no completed trial in an arm) cannot be shown not to have regressed, so a
critical one makes the critical gate inconclusive (:mod:`ablation.analysis.builtin_gates`).
Which tasks are left out is the caller's list (the report's missing pairs,
:func:`ablation.analysis.completeness.missing_pairs`: not the tasks a sequential campaign chose
not to run, nor ids outside the inventory). Their flags are read where they are known:

- the suite, when the paired data hold it: the suite fixes the flags, as it does for the paired
  tasks (an id outside the suite is not one of its tasks);
- else the trials, as for the paired tasks: a task is critical when any of its trials, in either
  arm, says so. They are read from the arms' columns when the caller has them (one vectorised
  pass), else through the paired data's trial lookup: every run where it offers ``all_runs``,
  the first run otherwise (``many`` in one read where offered). A task with no trial and no
  suite has no flag to read.

Assumptions: left-out items have ``task_id``; the paired data have ``tasks`` (id -> task with a
boolean ``critical``) and ``trials`` (``(task_id, arm) -> trial`` with ``critical``), as
:class:`~ablation.analysis.pairing.PairedData`; arm columns have ``task_id`` and ``critical``
(``None`` when the source has no flags) arrays, as :class:`~ablation.columns.TrialColumns`. The
module imports nothing from the package, so every analysis module may use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["left_out"]

_ARMS = ("baseline", "candidate")


def left_out(items: Iterable[Any], data: Any, arms: Sequence[Any] | None = None) -> list[str]:
    """The sorted ids of the critical tasks among the left-out ``items``.

    Args:
        items: The tasks left out of the pairing (excluded items of whole tasks).
        data: The paired data (its suite ``tasks`` and trial lookup ``trials``).
        arms: The two arms' trial columns, when the caller has them.

    Returns:
        The ids; empty when none is critical or no flag can be read.
    """
    ids = list(dict.fromkeys(item.task_id for item in items))
    if not ids:
        return []
    tasks: Mapping[str, Any] = data.tasks
    if tasks:
        return sorted(t for t in ids if t in tasks and bool(tasks[t].critical))
    flagged = _in_columns(arms) if arms is not None else _in_trials(ids, data.trials)
    return sorted(t for t in ids if t in flagged)


def _in_columns(arms: Sequence[Any]) -> set[str]:
    """Ids of every row flagged critical, in either arm."""
    found: set[str] = set()
    for cols in arms:
        flags = cols.critical
        if flags is not None and len(flags) and flags.any():
            found.update(cols.task_id[flags].tolist())
    return found


def _in_trials(ids: list[str], trials: Mapping[tuple[str, str], Any] | None) -> set[str]:
    """Those of ``ids`` with a trial flagged critical, read through the lookup ``trials``."""
    if not trials:
        return set()
    keys = [(tid, arm) for tid in ids for arm in _ARMS]
    all_runs = getattr(trials, "all_runs", None)
    if callable(all_runs):
        runs: Mapping[tuple[str, str], Sequence[Any]] = all_runs(keys)
        return {tid for (tid, _), found in runs.items() if any(r.critical for r in found)}
    many = getattr(trials, "many", None)
    if callable(many):
        first: Mapping[tuple[str, str], Any] = many(keys)
    else:
        first = {key: value for key in keys if (value := trials.get(key)) is not None}
    return {tid for (tid, _), r in first.items() if r.critical}
