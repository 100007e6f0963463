"""The campaign's trials in schedule order, generated lazily.

A trial is one ``(task, arm, run)``. Pairs follow the suite order, run by run (task by task in a
sequential campaign); within each pair the arm that goes first is drawn from
``random.Random(seed)``, so slow drift of an external service does not favour one arm. The plan depends only on the suite, ``runs`` and ``seed``: a resumed campaign
sees the same order.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ablation.schema import ARMS, AblationTask, Arm

__all__ = ["SizedSuite", "Trial", "TrialKey", "planned_count", "trial_plan"]

TrialKey = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class Trial:
    """One agent call to make: a task, an arm and a run index."""

    task: AblationTask
    arm: Arm
    run: int

    @property
    def key(self) -> TrialKey:
        """``(task_id, arm, run)``, the key a store uses."""
        return (self.task.task_id, self.arm, self.run)


def trial_plan(
    tasks: Iterable[AblationTask],
    *,
    runs: int,
    seed: int,
    arms: Sequence[Arm] = ARMS,
    by_task: bool = False,
) -> Iterator[Trial]:
    """Yield the campaign's trials in schedule order (see the module docstring).

    ``tasks`` is iterated once per run, so it must be re-iterable (a sequence or a
    :class:`~ablation.run.suite_source.TaskSource`). ``by_task=True`` (sequential campaigns) runs every run of a task before the next task, so
    each task's pair is complete as early as possible.
    """
    rng = random.Random(seed)
    outer = ((run, task) for run in range(runs) for task in tasks)
    if by_task:
        outer = ((run, task) for task in tasks for run in range(runs))
    for run, task in outer:
        first = rng.random() < 0.5
        order = ARMS if first else ARMS[::-1]
        for arm in order:
            if arm in arms:
                yield Trial(task, arm, run)


class SizedSuite(Protocol):
    """A suite that knows its size and can be iterated (a sequence or a ``TaskSource``)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[AblationTask]: ...


def planned_count(
    tasks: SizedSuite, runs: int, arms: Sequence[Arm], skip: Collection[TrialKey]
) -> int:
    """How many trials :func:`trial_plan` yields that are not in ``skip``, without a plan list.

    Only the skip keys are visited (a resume's keys, usually far fewer than the trials); a
    source with a ``task_ids`` attribute (:class:`~ablation.run.suite_source.TaskSource`) gives
    its ids without being read again.
    """
    wanted = [a for a in ARMS if a in arms]
    total = len(tasks) * runs * len(wanted)
    if not skip:
        return total
    ids = set(getattr(tasks, "task_ids", None) or (t.task_id for t in tasks))
    done = {k for k in skip if k[0] in ids and k[1] in wanted and 0 <= k[2] < runs}
    return total - len(done)
