"""One arm's per-task columns (:class:`ArmColumns`), the unit the analysis reads.

:func:`ablation.analysis.pair_arms.pair_columns` fills them from trial columns.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ablation.columns import constant_value, filled
from ablation.outputs import TOOL_CALLS_PREFIX

__all__ = ["ArmColumns", "signed_counts", "tool_call_counts"]


@dataclass(frozen=True)
class ArmColumns:
    """One arm's per-task columns (aligned with :attr:`PairedData.task_ids`).

    Attributes:
        passes: Passing trials counted per task (signed integers: ``int64``, or ``int8`` 0/1
            counts when each task has one row).
        runs: Trials counted per task (after exclusions), as ``passes``.
        latency: Mean latency of the task's completed trials (NaN when none).
        cost: Mean cost of the task's trials that report one (NaN when none).
        quality: Per scorer, the mean score of the task's scored trials (NaN when none).
        quality_errors: Per scorer, the number of scorer errors over all the arm's trials.
        metrics: Other numeric measurements, per-task means (NaN when none).
        cost_total: Sum of the cost of every counted trial that reports one (``None``: none did).
        cost_trials: How many counted trials reported a cost.
        n_trials: Trials of this arm in the paired tasks (before exclusions).
        errors: Trials that ended in an error.
        timeouts: Trials that timed out.
        retried: Trials that needed more than one attempt.
    """

    passes: np.ndarray
    runs: np.ndarray
    latency: np.ndarray
    cost: np.ndarray
    quality: dict[str, np.ndarray] = field(default_factory=dict)
    quality_errors: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    cost_total: float | None = None
    cost_trials: int = 0
    n_trials: int = 0
    errors: int = 0
    timeouts: int = 0
    retried: int = 0

    @functools.cached_property
    def fraction(self) -> np.ndarray:
        """Per-task pass fraction, computed once (read-only: the report's sections share it)."""
        out: np.ndarray = self.passes / self.runs
        out.flags.writeable = False
        return out


def signed_counts(counts: np.ndarray) -> np.ndarray:
    """``counts`` as signed integers (no wrap-around when subtracted): a constant stays a constant;
    0/1 ``uint8`` counts (a mask's own bytes: one row per task) become an ``int8`` view of them,
    not an ``int64`` copy (8 MB per arm at a million tasks); others are ``int64``."""
    constant, value = constant_value(counts)
    if constant:
        return filled(value, np.int64, len(counts))
    return counts.view(np.int8) if counts.dtype == np.uint8 else np.asarray(counts, dtype=np.int64)


def tool_call_counts(name: str, pair: tuple[Any, Any], metrics: Mapping[str, tuple[Any, Any]]) -> tuple[Any, Any]:
    """``(sums, counts)`` of metric ``name``; a tool call count (``tool_calls.<tool>``) is
    divided by the trials that reported usage (those with ``model_requests``): a trial with
    usage that did not call the tool called it 0 times, not an unknown number of times."""
    requests = metrics.get("model_requests")
    if requests is None or not name.startswith(TOOL_CALLS_PREFIX):
        return pair
    return pair[0], requests[1]
