"""The live side of a sequential campaign: a sink that stops the engine once the gates are decided.

:class:`SequentialSink` wraps the campaign's sink (the store). Each finished trial is handed on
first (so it is stored), then filed under its task. When a task has all its trials (``2 x runs``:
the task is the unit) its outcome is ready; outcomes enter the
:class:`~ablation.stats.SequentialMonitor` strictly in run order (an outcome that finished early
waits for the tasks before it), so the decision does not depend on concurrency or timing: an
uninterrupted run and a ``kill -9`` + resume (which replays the stored trials first) stop at the
same pair. At the decision the sink raises :class:`~ablation.errors.StopCampaign` and the engine
cancels the trials in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ablation import stats
from ablation.analysis.in_memory import results_to_columns
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.sequential import monitor_settings, sequential_order
from ablation.config import CampaignConfig
from ablation.errors import StopCampaign
from ablation.schema import AblationTask, TaskResult

__all__ = ["SequentialSink", "sequential_tasks"]


def sequential_tasks(tasks: Sequence[AblationTask], seed: int) -> tuple[AblationTask, ...]:
    """The suite in the run order of a sequential campaign (see :func:`sequential_order`)."""
    by_id = {t.task_id: t for t in tasks}
    return tuple(by_id[tid] for tid in sequential_order(by_id, seed))


class SequentialSink:
    """Feeds finished pairs to the monitor in run order; raises StopCampaign at the decision.

    Args:
        inner: The sink that stores each trial (``None``: keep nothing).
        config: The campaign config (``config.sequential`` set).
        tasks: The suite in run order (:func:`sequential_tasks`).
        prior: Trials already stored (resume, reused baseline), replayed before the run.
    """

    def __init__(
        self,
        inner: Callable[[TaskResult], None] | None,
        config: CampaignConfig,
        tasks: Sequence[AblationTask],
        prior: Iterable[TaskResult] = (),
    ) -> None:
        self._inner = inner
        self._on_error = config.on_error
        self._needed = 2 * config.runs
        self._index = {t.task_id: i for i, t in enumerate(tasks)}
        gate_on = config.gates.critical_must_not_regress
        self._critical = [gate_on and t.critical for t in tasks]
        self._pending: dict[str, list[TaskResult]] = {}
        self._ready: dict[int, float | None] = {}
        self._next = 0
        self.monitor = stats.SequentialMonitor(
            **monitor_settings(config, len(tasks), sum(self._critical))
        )
        for result in prior:
            self._add(result)

    @property
    def decided(self) -> bool:
        """Whether the monitor has decided (then the campaign runs nothing more)."""
        return self.monitor.decided

    def __call__(self, result: TaskResult) -> None:
        if self._inner is not None:
            self._inner(result)
        if self._add(result):
            raise StopCampaign(self.monitor.reason)

    def close(self) -> None:
        """Close the wrapped sink (commit what it holds)."""
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()

    def _outcome(self, trials: list[TaskResult]) -> float | None:
        """``candidate − baseline`` pass fraction of one task (None: excluded for errors)."""
        arms = [
            results_to_columns([t for t in trials if t.arm == arm], arm)
            for arm in ("baseline", "candidate")
        ]
        data = pair_columns(*arms, on_error=self._on_error)
        if not len(data.task_ids):
            return None
        return float(data.candidate.fraction[0] - data.baseline.fraction[0])

    def _add(self, result: TaskResult) -> bool:
        """File one trial; True when this trial made the monitor decide."""
        index = self._index.get(result.task_id)
        if self.decided or index is None:
            return False
        bucket = self._pending.setdefault(result.task_id, [])
        bucket.append(result)
        if len(bucket) < self._needed:
            return False
        self._ready[index] = self._outcome(self._pending.pop(result.task_id))
        while self._next in self._ready:
            outcome = self._ready.pop(self._next)
            critical = self._critical[self._next]
            self._next += 1
            if outcome is not None:
                self.monitor = self.monitor.update(outcome, critical=critical)
                if self.monitor.decided:
                    return True
        return False
