"""The trials of one task that a page shows, read one at a time and each cut to what is shown.

A trial's trace may hold 10^4 steps of kilobytes each, tens of megabytes of JSON, and a task may
have several runs an arm. A task page shows of each trial its facts, output, spans and other
fields, its trace's first :data:`~ablation.view.steps.PREVIEW` steps and length, and, for the
first run of each arm, the trace side by side with the other arm's (:mod:`ablation.view.traces`):
the first divergence, searched over every step, and a window of rows. So the trials are read one
at a time (:meth:`~ablation.view.catalog.Catalog.trial`) and each is cut before the next is read:
its trace to its first steps and, for an arm's first run, one key per step
(:func:`~ablation.view.traces.step_key`); the rows of the window are read from the store by range
(:meth:`~ablation.view.catalog.Catalog.trace_steps`). The server holds what the page shows and
one whole trial at a time, whatever the number of runs; runs past the shown ones are counted,
not read.

Assumptions: the trace is the one field of unbounded length cut here (a trial's spans are capped
per trial and kept whole, as its output, which the page cuts as it shows it); every figure of the
page (step counts, the divergence, usage, verdicts) is of the whole trial.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ablation.schema import TaskResult
from ablation.view.catalog import Catalog
from ablation.view.steps import PREVIEW
from ablation.view.traces import StepList, step_key

__all__ = ["ShownTrial", "shown_trials"]


@dataclasses.dataclass(frozen=True)
class ShownTrial:
    """One trial as a task page shows it.

    Attributes:
        trial: The trial, its trace cut to its first :data:`~ablation.view.steps.PREVIEW` steps.
        trace_total: Steps of its whole trace (``None``: it has no trace).
        trace: For the first run of an arm with a trace, the whole trace as the lists side by
            side compare it (its length, its keys, its rows read from the store), else ``None``.
    """

    trial: TaskResult
    trace_total: int | None = None
    trace: StepList | None = None


def _cut(trial: TaskResult, compared: bool, rows: Callable[[int, int], Sequence[Any]]) -> ShownTrial:
    """``trial`` with its trace cut, and the whole trace's length and (``compared``) keys."""
    steps = trial.trace
    if steps is None:
        return ShownTrial(trial)
    whole = StepList(len(steps), [step_key(s) for s in steps], rows) if compared else None
    return ShownTrial(trial.model_copy(update={"trace": steps[:PREVIEW]}), len(steps), whole)


def shown_trials(
    catalog: Catalog, campaign_id: str, task_id: str, arm: str, runs: int
) -> tuple[list[ShownTrial], int]:
    """The first ``runs`` stored trials of ``task_id`` in ``arm`` (run order), each read alone
    and cut (:class:`ShownTrial`; the first one's trace keyed for the lists side by side), and
    how many trials the arm stores.

    Raises:
        StoreError: for an unknown campaign, or a trial that cannot be read.
    """
    stored = [run for a, run in catalog.task_runs(campaign_id, task_id) if a == arm]
    shown: list[ShownTrial] = []
    for run in stored[:runs]:

        def rows(a: int, b: int, run: int = run) -> list[Any]:
            return catalog.trace_steps(campaign_id, task_id, arm, run, a, b)

        trial = catalog.trial(campaign_id, task_id, arm, run)
        if trial is not None:  # else deleted since the runs were listed
            shown.append(_cut(trial, not shown, rows))
        del trial  # the whole trial goes before the next is read
    return shown, len(stored)
