"""Trials as columns: one array per field, for the paths that read or pair many trials at once.

A :class:`TrialColumns` holds one arm's trials the way result-file readers produce them and the
pairing consumes them: no per-trial Python object. Row ``i`` of every column describes the same
trial. It carries exactly what a report needs (ids, runs, verdicts, status, numbers, labels); the
full :class:`~ablation.schema.TaskResult` of a trial, when a drill-down wants it, is fetched lazily
from its source.

:func:`results_to_columns` turns :class:`~ablation.schema.TaskResult` objects (or objects with the
same attributes) into columns, for ``compare_results`` and for the run store's column blocks.
Speed: every column is read by a C-level ``map`` (``operator.attrgetter``), never by a per-row
Python function. For pydantic rows only the fields some row set explicitly are read (the union of
``model_fields_set``); every other field holds its default on every row, so its column is filled
without touching the rows. Error texts are read only for the trials that did not complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

__all__ = ["STATUS_CODES", "TrialColumns", "constant_column", "constant_value", "results_to_columns"]

#: Codes of the ``status`` column.
STATUS_CODES: Mapping[str, int] = {"completed": 0, "error": 1, "timeout": 2}


def constant_column(value: Any, n: int) -> np.ndarray:
    """A read-only object column of ``n`` times ``value`` that takes no memory (stride 0)."""
    single = np.empty(1, dtype=object)
    single[0] = value
    return np.broadcast_to(single, (n,))


def constant_value(values: np.ndarray) -> tuple[bool, Any]:
    """``(True, value)`` for a column made by :func:`constant_column`, else ``(False, None)``."""
    if values.ndim == 1 and values.strides == (0,) and len(values):
        return True, values[0]
    return False, None


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


_NAMES = ("task_id", "run", "status", "passed", "latency_s", "cost", "tokens", "attempts",
          "category", "critical", "quality", "quality_errors", "metrics", "error_type",
          "error_stage")  # fmt: skip


def _floats(values: Sequence[Any] | None, n: int) -> np.ndarray:
    """``None`` (and a column never read) becomes NaN; numpy converts ``None`` itself."""
    return np.full(n, np.nan) if values is None else np.array(values, dtype=float)


def _dicts(values: Sequence[Any] | None, n: int, flags: bool = False) -> dict[str, np.ndarray]:
    """One column per key met in the dictionaries ``values`` (NaN, or ``False`` for ``flags``)."""
    out: dict[str, np.ndarray] = {}
    for i, value in enumerate(values or ()):
        if value:
            for name, v in value.items():
                column = out.get(name)
                if column is None:
                    column = out[name] = np.zeros(n, bool) if flags else np.full(n, np.nan)
                column[i] = True if flags else v
    return out


def _texts(values: Sequence[Any] | None, n: int) -> np.ndarray:
    """Strings with ``None`` as ``""`` (a column never read is a constant ``""``)."""
    return constant_column("", n) if values is None else np.array(
        [v or "" for v in values], dtype=object
    )


def _read(rows: Sequence[Any], models: bool) -> dict[str, Any]:
    """Column lists of the attributes in ``_NAMES`` that may differ from their defaults.

    Pydantic rows: only fields in some row's ``model_fields_set`` (the others are defaults).
    Other objects (the store's light rows): every attribute, ``None`` where a row lacks it.
    ``task_id`` comes as an object array (filled straight from the attribute reads).
    ``models``: the caller knows every row is a pydantic model (the rows' types are not checked).
    """
    if models or all(issubclass(t, BaseModel) for t in {*map(type, rows)}):
        given = set().union(*map(attrgetter("__pydantic_fields_set__"), rows))
        names = [a for a in _NAMES if a in given or a == "task_id"]
    else:
        names = list(_NAMES)
    first = rows[0] if rows else None
    if all(hasattr(first, a) for a in names):
        col = {a: list(map(attrgetter(a), rows)) for a in names if a != "task_id"}
        ids = np.fromiter(map(attrgetter("task_id"), rows), dtype=object, count=len(rows))
    else:
        col = {a: [getattr(r, a, None) for r in rows] for a in names if a != "task_id"}
        ids = np.array([getattr(r, "task_id", None) for r in rows], dtype=object)
    return {"task_id": ids, **col}


def results_to_columns(
    rows: Sequence[Any], arm: str, *, source: str = "", models: bool = False
) -> TrialColumns:
    """Columns of ``rows``: :class:`TaskResult` objects or objects with the same attributes.

    Every row is taken as a trial of ``arm`` whatever its own ``arm`` says (as ``compare``
    does). Objects without ``tokens``/``metrics``/``error_message`` attributes (the store's light
    rows) are accepted. ``models=True`` says every row is a pydantic model (a caller that has
    checked the rows' types already), so they are not checked again.
    """
    n = len(rows)
    col = _read(rows, models)
    get = col.get
    status = (
        np.zeros(n, np.int8) if "status" not in col
        else np.fromiter(map(STATUS_CODES.__getitem__, map(str, col["status"])), np.int8, n)
    )  # fmt: skip
    failed = np.flatnonzero(status).tolist()
    error = np.full(n, "", dtype=object) if failed else constant_column("", n)
    for i in failed:
        e, m = getattr(rows[i], "error_type", None), getattr(rows[i], "error_message", None)
        error[i] = (f"{e}: {m}" if m else e) if e is not None else ""
    return TrialColumns(
        arm=arm,
        task_id=col["task_id"],
        run=np.array(col["run"], dtype=np.int64) if "run" in col else np.zeros(n, np.int64),
        passed=np.array(col["passed"], dtype=bool) if "passed" in col else np.zeros(n, bool),
        status=status,
        latency_s=_floats(get("latency_s"), n),
        cost=_floats(get("cost"), n),
        tokens=_floats(get("tokens"), n),
        quality=_dicts(get("quality"), n),
        metrics=_dicts(get("metrics"), n),
        category=np.array(col["category"], dtype=object) if "category" in col else None,
        critical=np.array(col["critical"], dtype=bool) if "critical" in col else np.zeros(n, bool),
        error_type=_texts(get("error_type"), n),
        source=source,
        attempts=np.array(col["attempts"], np.int64) if "attempts" in col else np.ones(n, np.int64),
        error=error,
        error_stage=_texts(get("error_stage"), n),
        quality_errors=_dicts(get("quality_errors"), n, flags=True),
    )
