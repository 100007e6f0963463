"""Trials as columns: one array per field, for the paths that read or pair many trials at once.

A :class:`TrialColumns` holds one arm's trials the way result-file readers produce them and the
pairing consumes them: no per-trial Python object. Row ``i`` of every column describes the same
trial. It carries exactly what a report needs (ids, runs, verdicts, status, numbers, labels); the
full :class:`~ablation.schema.TaskResult` of a trial, when a drill-down wants it, is fetched lazily
from its source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["STATUS_CODES", "TrialColumns"]

#: Codes of the ``status`` column.
STATUS_CODES: Mapping[str, int] = {"completed": 0, "error": 1, "timeout": 2}


def _nan(n: int) -> NDArray[np.float64]:
    return np.full(n, np.nan)


@dataclass(frozen=True)
class TrialColumns:
    """One arm's trials, column by column (all arrays have the same length).

    Attributes:
        arm: ``"baseline"`` or ``"candidate"``.
        task_id: Task ids (a NumPy array of ``str`` objects).
        run: Run index of each trial (``int64``; 0 when the source has no runs).
        passed: Verdicts (``bool``); ``False`` for trials that did not complete.
        status: :data:`STATUS_CODES` (``int8``).
        latency_s: Seconds, ``NaN`` when unknown.
        cost: Cost, ``NaN`` when unknown.
        tokens: Tokens, ``NaN`` when unknown.
        quality: Quality scores by scorer name (``NaN`` when absent).
        metrics: Other numeric metrics by name (``NaN`` when absent).
        category: Category of each trial (``None``: not given), or ``None`` for the whole column.
        critical: Critical flags, or ``None`` when the source has none.
        error_type: Error type name of each failed trial (``""`` when none), or ``None``.
        source: Where the rows came from (a file name), for messages.
        line: Line (or record) number of each row in ``source``, for messages; or ``None``.
        attempts: Attempts of each trial (``int64``), or ``None`` (one attempt each).
        error: Full error text (``"Type: message"``) of each failed trial (``""`` when none),
            or ``None`` (``error_type`` names the error).
        quality_errors: Per scorer name, whether the scorer failed on each trial (``bool``).
        error_stage: Stage of each failed trial's error (``""`` when unknown), or ``None``.
    """

    arm: str
    task_id: NDArray[np.object_]
    run: NDArray[np.int64]
    passed: NDArray[np.bool_]
    status: NDArray[np.int8]
    latency_s: NDArray[np.float64]
    cost: NDArray[np.float64]
    tokens: NDArray[np.float64]
    quality: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    metrics: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    category: NDArray[np.object_] | None = None
    critical: NDArray[np.bool_] | None = None
    error_type: NDArray[np.object_] | None = None
    source: str = ""
    line: NDArray[np.int64] | None = None
    attempts: NDArray[np.int64] | None = None
    error: NDArray[np.object_] | None = None
    quality_errors: dict[str, NDArray[np.bool_]] = field(default_factory=dict)
    error_stage: NDArray[np.object_] | None = None

    def __post_init__(self) -> None:
        n = len(self.task_id)
        for name in ("run", "passed", "status", "latency_s", "cost", "tokens"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"TrialColumns.{name} has {len(getattr(self, name))} rows, not {n}")
        for group in (self.quality, self.metrics, self.quality_errors):
            for name, values in group.items():
                if len(values) != n:
                    raise ValueError(f"TrialColumns column {name!r} has {len(values)} rows, not {n}")

    def __len__(self) -> int:
        return len(self.task_id)

    @classmethod
    def verdicts(
        cls,
        arm: str,
        task_id: NDArray[np.object_],
        passed: NDArray[np.bool_],
        *,
        run: NDArray[np.int64] | None = None,
        source: str = "",
    ) -> TrialColumns:
        """Completed trials with verdicts only (every number unknown)."""
        n = len(task_id)
        return cls(
            arm=arm,
            task_id=task_id,
            run=np.zeros(n, dtype=np.int64) if run is None else run,
            passed=np.asarray(passed, dtype=bool),
            status=np.zeros(n, dtype=np.int8),
            latency_s=_nan(n),
            cost=_nan(n),
            tokens=_nan(n),
            source=source,
        )
