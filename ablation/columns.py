"""Trials as columns: one array per field, for the paths that read or pair many trials at once.

A :class:`TrialColumns` holds one arm's trials the way result-file readers produce them and the
pairing consumes them: no per-trial Python object. Row ``i`` of every column describes the same
trial. It carries exactly what a report needs (ids, runs, verdicts, status, numbers, labels); the
full :class:`~ablation.schema.TaskResult` of a trial, when a drill-down wants it, is fetched lazily
from its source.

:func:`results_to_columns` turns :class:`~ablation.schema.TaskResult` objects (or objects with the
same attributes) into columns, for ``compare_results`` and the sequential sink; their quality
scores and metrics by name through :func:`named_columns`, which the run store's reader shares.
Speed: every column is read by a C-level ``map`` (``operator.attrgetter``), not a per-row
function, straight into its array (``np.fromiter``, no list in between). For pydantic rows
only the fields some row set explicitly are read (the union of ``model_fields_set``); every other
field holds its default on every row, so its column is a constant column of that default (stride
0: no memory, nothing written). Error texts are read only for the trials that did not complete;
the cost's currency and source only for the trials with a cost, into one set (:func:`cost_units_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress, islice
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from ablation.errors import TooManyNames
from ablation.outputs import named_cells_problem

__all__ = [
    "STATUS_CODES", "CostUnits", "TrialColumns", "constant_column", "constant_value", "cost_units_of",
    "failed_trials", "failure_fields", "fields_given", "filled", "known_rows", "named_columns",
    "results_to_columns", "same_ids", "unknown",
]  # fmt: skip

#: Codes of the ``status`` column.
STATUS_CODES: Mapping[str, int] = {"completed": 0, "error": 1, "timeout": 2}
CostUnits = frozenset[tuple[str | None, str | None]]  # distinct (currency, source); None: unstated


def constant_column(value: Any, n: int) -> np.ndarray:
    """A read-only column of ``n`` times ``value`` that takes no memory (stride 0).

    A NumPy scalar (``np.float64(np.nan)``, ``np.int64(1)``) gives a column of its own dtype,
    any other value an object column.
    """
    single = np.empty(1, dtype=value.dtype if isinstance(value, np.generic) else object)
    single[0] = value
    return np.broadcast_to(single, (n,))


def filled(value: Any, dtype: Any, n: int) -> np.ndarray:
    """``n`` times ``value`` as ``dtype``: a :func:`constant_column` (read only, no memory), for the
    columns a source does not give (a million-row ``np.full`` would be 8 MB written for nothing)."""
    return constant_column(np.dtype(dtype).type(value), n)


def share_ids(first: TrialColumns, second: TrialColumns) -> TrialColumns:
    """``second``, holding ``first``'s id array when both list the same ids in the same order.

    Two arms of one suite usually do: one array of a million ids instead of two (~70 MB).
    """
    if second.task_id is first.task_id or len(second) != len(first):
        return second
    return replace(second, task_id=first.task_id) if bool(np.all(first.task_id == second.task_id)) else second


def constant_value(values: np.ndarray) -> tuple[bool, Any]:
    """``(True, value)`` for a column made by :func:`constant_column`, else ``(False, None)``."""
    if values.ndim == 1 and values.strides == (0,) and len(values):
        return True, values[0]
    return False, None


def unknown(values: np.ndarray) -> bool:
    """Whether ``values`` is a constant column of NaN (a number nobody gave: no sums to add)."""
    constant, value = constant_value(values)
    return constant and values.dtype.kind == "f" and bool(np.isnan(value))


def known_rows(values: np.ndarray, mask: np.ndarray | bool) -> np.ndarray | None:
    """The rows of ``mask`` (``True``: all) where ``values`` is a number (not NaN), or ``None``.

    One new boolean array (NaN test, negation and mask done in it); none for an :func:`unknown`
    column (a number the source never gave).
    """
    if unknown(values):
        return None
    keep = np.isnan(values)
    np.logical_not(keep, out=keep)
    keep &= mask
    return keep if keep.any() else None


def cost_units_of(cost: np.ndarray, pairs: Callable[[np.ndarray], Iterable[Any]] | None = None) -> CostUnits:
    """The distinct ``(currency, source)`` of the rows of ``cost`` that hold a cost: ``pairs(mask)``
    gives those of a boolean row mask; without it (no source stated) each is ``(None, None)``."""
    rows = known_rows(cost, True)
    if rows is None:
        return frozenset()
    return frozenset([(None, None)] if pairs is None else map(tuple, pairs(rows)))


@dataclass(frozen=True)
class TrialColumns:
    """One arm's trials, column by column (all arrays have the same length).

    A column may be a read-only :func:`constant_column` (stride 0, no memory) where every row
    holds the same value, as for a field no row gave; the arrays are read, never written.

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
        cost_units: The distinct ``(currency, source)`` of the rows with a cost (a set, not a
            column: :func:`cost_units_of`); blocks of rows joined end to end join their sets.
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
    cost_units: CostUnits = frozenset()

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
        cls, arm: str, task_id: NDArray[np.object_], passed: NDArray[np.bool_], *,
        run: NDArray[np.int64] | None = None, source: str = "", line: NDArray[np.int64] | None = None,
    ) -> TrialColumns:  # fmt: skip
        """Completed trials with verdicts only (every number unknown); ``line``: each row's line."""
        n = len(task_id)
        return cls(
            arm=arm,
            task_id=task_id,
            run=np.zeros(n, dtype=np.int64) if run is None else run,
            passed=np.asarray(passed, dtype=bool),
            status=np.zeros(n, dtype=np.int8),
            latency_s=np.full(n, np.nan),
            cost=np.full(n, np.nan),
            tokens=np.full(n, np.nan),
            source=source,
            line=line,
        )


_STATUS_NAMES = {code: name for name, code in STATUS_CODES.items()}


def failure_fields(
    status: str, error: str | None, error_type: str | None, error_stage: str | None
) -> tuple[str, str, str]:
    """``(error text, stage, error type)`` of a failed trial, as the report lists it.

    The text falls back to the type, then the status; a timeout's stage is ``"timeout"`` (type
    ``"Timeout"`` when none is given), an error's stage ``"unknown stage"`` when none is given.
    """
    text = str(error or error_type or status)
    if status == "timeout":
        return text, "timeout", str(error_type or "Timeout")
    return text, str(error_stage or "unknown stage"), str(error_type or status)


def failed_trials(cols: TrialColumns, arm: str) -> list[tuple[str, str, int, str, str, str, str]]:
    """Every failed trial of ``cols`` in row order: id, ``arm``, run, status, then
    :func:`failure_fields`."""
    out: list[tuple[str, str, int, str, str, str, str]] = []
    for i in np.flatnonzero(cols.status != STATUS_CODES["completed"]).tolist():
        status = _STATUS_NAMES[int(cols.status[i])]
        fields = failure_fields(
            status,
            cols.error[i] if cols.error is not None else None,
            cols.error_type[i] if cols.error_type is not None else None,
            cols.error_stage[i] if cols.error_stage is not None else None,
        )
        out.append((str(cols.task_id[i]), arm, int(cols.run[i]), status, *fields))
    return out


_NAMES = ("task_id", "run", "status", "passed", "latency_s", "cost", "tokens", "attempts",
          "category", "critical", "quality", "quality_errors", "metrics", "error_type",
          "error_stage")  # fmt: skip


def _floats(values: Sequence[Any] | None, n: int) -> np.ndarray:
    """``None`` becomes NaN (numpy converts it); a column never read is a constant NaN."""
    return filled(np.nan, np.float64, n) if values is None else np.array(values, dtype=float)


def named_columns(rows: Iterable[tuple[int, Any]], n: int, kind: str, flags: bool = False) -> dict[str, np.ndarray]:
    """One column of ``n`` per name met in the ``(row index, mapping or None)`` pairs ``rows`` (NaN,
    or ``False`` for ``flags``, where a row lacks it); a name past
    :func:`~ablation.outputs.named_cells_problem`'s bound for ``kind`` raises :class:`TooManyNames`."""
    out: dict[str, np.ndarray] = {}
    for i, value in rows:
        for name, v in (value or {}).items():
            column = out.get(name)
            if column is None:
                if problem := named_cells_problem(len(out) + 1, n, kind):
                    raise TooManyNames(problem)
                column = out[name] = np.zeros(n, bool) if flags else np.full(n, np.nan)
            column[i] = True if flags else v
    return out


def _texts(values: Iterable[Any] | None, n: int) -> np.ndarray:
    """Strings with ``None`` as ``""`` (a column never read is a constant ``""``)."""
    if values is None:
        return constant_column("", n)
    return np.fromiter((v or "" for v in values), dtype=object, count=n)


#: Rows per chunk of :func:`fields_given`: their headers stay in the CPU cache between its reads.
_CHUNK = 4096


def fields_given(rows: Sequence[Any], cls: type[BaseModel] = BaseModel) -> set[str] | None:
    """The union of the rows' ``model_fields_set``, or ``None`` when some row is not a ``cls``.

    One pass over the rows, :data:`_CHUNK` at a time: a chunk's types are checked, then its
    sets joined while those rows are still in the CPU cache (a pass for the types and another
    for the sets walked a million scattered objects twice). A single ``set().union(*sets)``
    would first build a tuple of every row's set (8 bytes a row of new memory, besides the time).
    """
    given: set[str] = set()
    known: set[type] = set()
    sets = attrgetter("__pydantic_fields_set__")
    remaining = iter(rows)  # any iterable: a sequence need not support slices
    while chunk := list(islice(remaining, _CHUNK)):
        types = {*map(type, chunk)}
        if not types <= known:
            if not all(issubclass(t, cls) for t in types):
                return None
            known |= types
        given.update(*map(sets, chunk))
    return given


def _read(
    rows: Sequence[Any], given: set[str] | None
) -> tuple[set[str], Callable[[str], Iterator[Any]]]:
    """The attributes in ``_NAMES`` that may differ from their defaults, and their reader.

    Pydantic rows: only fields in some row's ``model_fields_set`` (the others are defaults).
    Other objects (the store's light rows): every attribute, ``None`` where a row lacks it.
    ``given``: the rows' :func:`fields_given` (``None``: not all pydantic rows).
    ``values(name)`` iterates over the rows' ``name`` attribute (a C-level ``attrgetter`` map
    when the first row has every attribute read, as model rows and light rows do), so a column
    is filled straight from the rows with no list in between.
    """
    names = set(_NAMES) if given is None else {a for a in _NAMES if a in given or a == "task_id"}
    first = rows[0] if rows else None
    if all(hasattr(first, a) for a in names):
        return names, lambda a: map(attrgetter(a), rows)
    return names, lambda a: (getattr(r, a, None) for r in rows)


_UNITS = ("cost_currency", "cost_source")


def _unit_pairs(rows: Sequence[Any], given: set[str] | None) -> Callable[[np.ndarray], Iterable[Any]] | None:
    """The ``(cost_currency, cost_source)`` reader of the rows of a mask (``None`` where a row lacks
    them), or ``None`` when no pydantic row sets either (both hold their default, ``None``)."""
    if given is not None and given.isdisjoint(_UNITS):
        return None
    get = attrgetter(*_UNITS) if rows and all(hasattr(rows[0], a) for a in _UNITS) else (
        lambda r: (getattr(r, _UNITS[0], None), getattr(r, _UNITS[1], None)))  # fmt: skip
    return lambda mask: map(get, compress(rows, mask.tolist()))


def same_ids(ids: np.ndarray | None, values: Iterable[Any], n: int) -> np.ndarray | None:
    """``ids`` (another arm's task-id column) when the ``n`` ``values`` are those ids in that
    order, else ``None``.

    The two arms of a comparison usually list the same tasks in the same order: the second
    arm's column is then the first's array, with no new object array (8 MB at a million rows)
    and nothing for the pairing to compare (it sees one array). The values are compared
    :data:`_CHUNK` at a time, read into a small array each (as fast as reading them all and
    comparing the arrays).
    """
    if ids is None or len(ids) != n or ids.dtype != object:
        return None
    remaining = iter(values)
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        if not np.array_equal(np.fromiter(remaining, object, stop - start), ids[start:stop]):
            return None
    return ids


def results_to_columns(
    rows: Sequence[Any], arm: str, *, source: str = "", given: set[str] | None = None,
    ids: np.ndarray | None = None,
) -> TrialColumns:
    """Columns of ``rows``: :class:`TaskResult` objects or objects with the same attributes.

    Every row is taken as a trial of ``arm`` whatever its own ``arm`` says (as ``compare``
    does). Objects without ``tokens``/``metrics``/``error_message`` attributes (the store's light
    rows) are accepted. ``given``: the rows' :func:`fields_given` from a caller that has read it
    (so every row is a pydantic model), so it is not read again. ``ids``: the other arm's task
    ids, shared when equal (:func:`same_ids`).

    Each array is filled by ``np.fromiter`` straight from the attribute reads (numpy turns a
    ``None`` number into NaN and a ``None`` flag into ``False``, as ``np.array`` of a list does).
    """
    n = len(rows)
    given = fields_given(rows) if given is None else given
    names, values = _read(rows, given)

    def column(name: str, dtype: Any, default: Any) -> np.ndarray:
        return np.fromiter(values(name), dtype, n) if name in names else filled(default, dtype, n)

    def read(name: str) -> Iterator[Any] | None:
        return values(name) if name in names else None

    status = (
        np.fromiter(map(STATUS_CODES.__getitem__, map(str, values("status"))), np.int8, n)
        if "status" in names else filled(0, np.int8, n)
    )  # fmt: skip
    task_id = same_ids(ids, values("task_id"), n)
    task_id = np.fromiter(values("task_id"), object, n) if task_id is None else task_id
    failed = np.flatnonzero(status).tolist()
    error = np.full(n, "", dtype=object) if failed else constant_column("", n)
    for i in failed:
        e, m = getattr(rows[i], "error_type", None), getattr(rows[i], "error_message", None)
        error[i] = (f"{e}: {m}" if m else e) if e is not None else ""
    cost = column("cost", np.float64, np.nan)
    return TrialColumns(
        arm=arm,
        task_id=task_id,
        run=column("run", np.int64, 0),
        passed=column("passed", bool, False),
        status=status,
        latency_s=column("latency_s", np.float64, np.nan),
        cost=cost,
        tokens=column("tokens", np.float64, np.nan),
        quality=named_columns(enumerate(read("quality") or ()), n, "quality"),
        metrics=named_columns(enumerate(read("metrics") or ()), n, "metric"),
        category=np.fromiter(values("category"), object, n) if "category" in names else None,
        critical=column("critical", bool, False),
        error_type=_texts(read("error_type"), n),
        source=source,
        attempts=column("attempts", np.int64, 1),
        error=error,
        error_stage=_texts(read("error_stage"), n),
        quality_errors=named_columns(enumerate(read("quality_errors") or ()), n, "quality error", flags=True),
        cost_units=cost_units_of(cost, _unit_pairs(rows, given)),
    )
