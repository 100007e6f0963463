"""One arm's result file read straight into :class:`~ablation.columns.TrialColumns`.

:func:`read_columns` reads any source :func:`~ablation.sources.readers.read_results` reads, with
the same checks and the same one-line errors (``FILE:LINE: problem (task id 'X')``), but keeps
only what a report needs, as arrays: id, run, verdict, status, error type, latency, cost, tokens,
quality and metric numbers, category and critical flag, and the costs' distinct ``(currency,
source)`` pairs as one set (not per row: the trials a drill-down builds carry neither). No
:class:`~ablation.schema.TaskResult` is built per row; :class:`FileTrials` builds the few a
drill-down shows, on demand, from the columns and the rows' other fields (``output``), which are
kept only for rows that have them.

Plain verdict rows in JSON lines (every object holds only the id, the verdict and the run, with
a string or integer id, a boolean verdict and no ``--where``) take a fast path. Lines that all
repeat the first line's layout (no run) are cut into ids and verdicts without a JSON decoder
(:func:`~ablation.sources.readers.plain_lines.verdict_lines`); otherwise the whole text is
decoded at once (:func:`~ablation.sources.readers.plain_lines.json_verdict_lines`). Whenever the
fast path cannot vouch for a file (a blank line, two objects on one line, another column, a
verdict spelled as text, a duplicate id, a member named twice in one object, a surrogate escape
such as ``\\ud800`` in an id, malformed JSON...), the file is read row by row by
:func:`~ablation.sources.readers.rows.checked_rows`, which raises the error the object path
raises, at the same line.

Each quality or metric name becomes a column with a value (NaN when absent) in every row, so a file
whose rows name different metrics would hold names x rows values, far more than it holds itself:
past :data:`~ablation.outputs.NAMED_CELLS_LIMIT` (:func:`~ablation.outputs.named_cells_problem`)
the file is refused in one line, before a column is built.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.columns import STATUS_CODES, TrialColumns
from ablation.errors import InputError
from ablation.outputs import named_cells_problem
from ablation.schema import TaskResult
from ablation.sources.readers import RowRead, read_rows
from ablation.sources.readers.generic import COST_UNITS
from ablation.sources.readers.plain_lines import json_verdict_lines, verdict_lines
from ablation.sources.readers.rows import ReadOptions, Row, checked_rows, row_result
from ablation.sources.text import file_error, short_repr

__all__ = ["ColumnRead", "FileTrials", "read_columns"]

_NAN = float("nan")


@dataclass(frozen=True)
class ColumnRead:
    """One arm's rows as columns, and the rows' fields that are not columns.

    Attributes:
        columns: The trials (``line`` holds each row's line or sample number).
        extras: Row index -> the row's other :class:`TaskResult` fields (``output``; the row
            path also keeps ``category`` and ``critical`` here), only for rows that have some.
            :meth:`result` takes the category and critical flag from the columns when they are
            not here.
    """

    columns: TrialColumns
    extras: Mapping[int, dict[str, Any]] = field(default_factory=dict)

    def result(self, i: int) -> TaskResult:
        """The :class:`TaskResult` the object path reads for row ``i``."""
        c = self.columns

        def number(values: NDArray[np.float64]) -> float | None:
            value = float(values[i])
            return None if value != value else value

        def present(group: Mapping[str, NDArray[np.float64]]) -> dict[str, float]:
            return {name: float(v[i]) for name, v in group.items() if v[i] == v[i]}

        status = next(name for name, code in STATUS_CODES.items() if code == c.status[i])
        error_type = str(c.error_type[i]) if c.error_type is not None else ""
        row = Row(
            line=int(c.line[i]) if c.line is not None else i + 1,
            task_id=str(c.task_id[i]),
            verdict=None,
            status=status,
            error_type=error_type or None,
            latency_s=number(c.latency_s),
            cost=number(c.cost),
            tokens=number(c.tokens),
            quality=present(c.quality),
            metrics=present(c.metrics),
            extra={**self._labels(i), **self.extras.get(i, {})},
        )
        return row_result(row, row.task_id, int(c.run[i]), bool(c.passed[i]), c.arm)


    def _labels(self, i: int) -> dict[str, Any]:
        """Row ``i``'s category and critical flag, as :class:`TaskResult` fields, when given."""
        c = self.columns
        category = None if c.category is None else c.category[i]
        labels: dict[str, Any] = {} if category is None else {"category": category}
        if c.critical is not None and c.critical[i]:
            labels["critical"] = True
        return labels


def read_columns(
    source: str, options: ReadOptions, format: str | None = None, display: str | None = None
) -> ColumnRead:
    """Read one arm's results from ``source`` (a path or ``-``) as columns (module docstring)."""
    display = display or source
    read = read_rows(source, options, format, display)
    if read.text is not None and not options.where and not options.numeric:
        fast = _plain_lines(read.text, display, options)
        if fast is not None:
            return fast
    return _from_rows(read, display, options)


def _plain_lines(text: str, display: str, options: ReadOptions) -> ColumnRead | None:
    """Columns of plain verdict JSON lines, or ``None`` when a row needs the full checks."""
    key, verdict, run = options.key or "id", options.field or "passed", options.run_field
    layout = None if run else verdict_lines(text, key, verdict)  # one layout repeated: no JSON decoding
    decoded = (*layout, None) if layout is not None else json_verdict_lines(text, key, verdict, run)
    if decoded is None:
        return None
    ids_column, passed, runs = decoded
    if not _unique(ids_column, runs):
        return None
    if options.pass_values is not None:
        passed = np.where(passed, "true" in options.pass_values, "false" in options.pass_values)
    columns = TrialColumns.verdicts(  # no category, critical flag or error in any row
        options.arm, ids_column, passed,
        run=None if runs is None else np.array(runs, dtype=np.int64), source=display,
        line=np.arange(1, len(ids_column) + 1, dtype=np.int64),
    )  # fmt: skip
    return ColumnRead(columns)


def _unique(ids: NDArray[np.object_], runs: list[int] | None) -> bool:
    """True when no ``(id, run)`` repeats (sorted ids of one run need no hashing)."""
    if runs is None and (len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1]))):
        return True
    pairs = zip(ids.tolist(), runs, strict=True) if runs is not None else ids.tolist()
    return len(set(pairs)) == len(ids)


class _Builder:
    """Appends checked rows column by column (numbers as floats, NaN when absent).

    Assumes the reader checked ``critical`` into a bool and ``category`` into text (or left it
    out); any other value is an error naming the row's file, line and task id, never read as
    true or sorted beside the other rows' categories.
    """

    def __init__(self, display: str) -> None:
        self.display = display
        names = ("task_id", "run", "passed", "status", "error_type", "latency_s", "cost", "tokens",
                 "line", "category", "critical")  # fmt: skip
        self.lists: dict[str, list[Any]] = {name: [] for name in names}
        self.quality: dict[str, list[tuple[int, float]]] = {}
        self.metrics: dict[str, list[tuple[int, float]]] = {}
        self.extras: dict[int, dict[str, Any]] = {}
        self.attempts: dict[int, int] = {}  # rows of more than one attempt (retried)
        self.scorer_failures: dict[str, list[int]] = {}  # scorer -> rows where it failed
        self.units: set[tuple[Any, Any]] = set()  # (currency, source) of the rows with a cost

    def add(self, row: Row, task_id: str, run: int, passed: bool) -> None:
        i = len(self.lists["task_id"])
        extra = row.extra
        if any(map(extra.__contains__, COST_UNITS)):  # kept as one set, as the engine keeps them
            extra = {k: v for k, v in extra.items() if k not in COST_UNITS}
        if row.cost is not None:
            self.units.add((row.extra.get("cost_currency"), row.extra.get("cost_source")))
        critical, category = extra.get("critical", False), extra.get("category")
        if critical is not True and critical is not False:  # a reader's checks make it a bool
            raise file_error(InputError, self.display, f"'critical' must be a boolean, got {short_repr(critical)}",
                             line=row.line, task_id=task_id)  # fmt: skip
        if category is not None and not isinstance(category, str):  # sorted beside the others' text
            raise file_error(InputError, self.display, f"'category' must be a string, got {short_repr(category)}",
                             line=row.line, task_id=task_id)  # fmt: skip
        values = (task_id, run, passed, STATUS_CODES[row.status], row.error_type or "",
                  _NAN if row.latency_s is None else row.latency_s,
                  _NAN if row.cost is None else row.cost,
                  _NAN if row.tokens is None else row.tokens,
                  row.line, category, critical)  # fmt: skip
        for column, value in zip(self.lists.values(), values, strict=True):
            column.append(value)
        for group, given in ((self.quality, row.quality), (self.metrics, row.metrics)):
            for name, value in given.items():
                group.setdefault(name, []).append((i, value))
        if extra:
            self.extras[i] = dict(extra)
            attempts, failed = extra.get("attempts"), extra.get("quality_errors")
            if isinstance(attempts, int | float) and attempts > 1:
                self.attempts[i] = int(attempts)
            if isinstance(failed, Mapping):  # a stored trial's scorer errors (TaskResult.quality_errors)
                for name in failed:
                    self.scorer_failures.setdefault(str(name), []).append(i)

    def columns(self, arm: str, source: str) -> TrialColumns:
        c = self.lists
        n = len(c["task_id"])
        for kind, named in (("quality", self.quality), ("metric", self.metrics)):
            if (problem := named_cells_problem(len(named), n, kind)) is not None:
                raise file_error(InputError, self.display, problem)
        status = np.array(c["status"], dtype=np.int8)
        error_type = np.array(c["error_type"], dtype=object)
        error = np.where(status != STATUS_CODES["completed"], error_type, "").astype(object)
        error_stage = np.full(n, "", dtype=object)
        for i, extra in self.extras.items():  # a failure's stage and message, as TaskResult.error
            if status[i] != STATUS_CODES["completed"] and error_type[i]:
                error_stage[i] = extra.get("error_stage") or ""
                error[i] = f"{error_type[i]}: {extra['error_message']}" if extra.get("error_message") else error[i]
        return TrialColumns(
            arm=arm,
            task_id=np.array(c["task_id"], dtype=object),
            run=np.array(c["run"], dtype=np.int64),
            passed=np.array(c["passed"], dtype=bool),
            status=status,
            latency_s=np.array(c["latency_s"], dtype=float),
            cost=np.array(c["cost"], dtype=float),
            tokens=np.array(c["tokens"], dtype=float),
            quality={name: _spread(pairs, n) for name, pairs in self.quality.items()},
            metrics={name: _spread(pairs, n) for name, pairs in self.metrics.items()},
            category=np.array(c["category"], dtype=object),
            critical=np.array(c["critical"], dtype=bool),
            error_type=error_type,
            source=source,
            line=np.array(c["line"], dtype=np.int64),
            attempts=_filled(np.ones(n, dtype=np.int64), self.attempts),
            error=error,
            error_stage=error_stage,
            cost_units=frozenset(self.units),
            quality_errors={name: _filled(np.zeros(n, dtype=bool), dict.fromkeys(rows, True))
                            for name, rows in self.scorer_failures.items()},
        )


def _filled(out: NDArray[Any], at: Mapping[int, Any]) -> NDArray[Any]:
    """``out`` with the values of ``at`` (row index -> value) set."""
    if at:
        out[list(at)] = list(at.values())
    return out


def _spread(pairs: list[tuple[int, float]], n: int) -> NDArray[np.float64]:
    out = np.full(n, np.nan)
    index, values = zip(*pairs, strict=True)
    out[list(index)] = values
    return out


def _from_rows(read: RowRead, display: str, options: ReadOptions) -> ColumnRead:
    builder = _Builder(display)
    for row, task_id, run, passed in checked_rows(read.rows, display, options, **read.check):
        builder.add(row, task_id, run, passed)
    return ColumnRead(builder.columns(options.arm, display), builder.extras)


class _SortedIndex(Mapping[str, int]):
    """``id -> row`` of strictly increasing ids, by bisection (no dict of a million ids)."""

    def __init__(self, ids: NDArray[np.object_]) -> None:
        self._ids = ids

    def __getitem__(self, task_id: str) -> int:
        i = bisect.bisect_left(self._ids, task_id)  # type: ignore[call-overload]
        if i < len(self._ids) and self._ids[i] == task_id:
            return i
        raise KeyError(task_id)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids.tolist())

    def __len__(self) -> int:
        return len(self._ids)


class FileTrials(Mapping[tuple[str, str], TaskResult]):
    """``(task_id, arm) -> first-run trial`` of column reads, built when a drill-down asks."""

    def __init__(self, reads: Mapping[str, ColumnRead]) -> None:
        self._reads = reads
        self._index: dict[str, Mapping[str, int]] = {}

    def _arm_index(self, arm: str) -> Mapping[str, int]:
        if arm not in self._index:
            cols = self._reads[arm].columns
            if not len(cols) or cols.run.min() == cols.run.max():  # one run: ids are unique
                ids = cols.task_id
                if len(ids) < 2 or np.all(ids[1:] > ids[:-1]):  # sorted: found by bisection
                    self._index[arm] = _SortedIndex(ids)
                else:
                    self._index[arm] = dict(zip(ids.tolist(), range(len(cols)), strict=True))
            else:
                order = np.argsort(cols.run, kind="stable")[::-1]
                # later writes win: the smallest run of each task is written last
                self._index[arm] = dict(zip(cols.task_id[order].tolist(), order.tolist(), strict=True))
        return self._index[arm]

    def __getitem__(self, key: tuple[str, str]) -> TaskResult:
        task_id, arm = key
        if arm not in self._reads:
            raise KeyError(key)
        i = self._arm_index(arm).get(task_id)
        if i is None:
            raise KeyError(key)
        return self._reads[arm].result(i)

    def all_runs(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[TaskResult]]:
        """Every run's trial of each of ``keys`` that exists, by run (one scan of each arm's ids)."""
        out: dict[tuple[str, str], list[TaskResult]] = {}
        for arm in dict.fromkeys(a for _, a in keys):
            if arm not in self._reads:
                continue
            read = self._reads[arm]
            wanted = list(dict.fromkeys(t for t, a in keys if a == arm))
            for i in np.flatnonzero(np.isin(read.columns.task_id, np.array(wanted, dtype=object))).tolist():
                result = read.result(i)
                out.setdefault((result.task_id, arm), []).append(result)
        return {key: sorted(found, key=lambda r: r.run) for key, found in out.items()}

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for arm in self._reads:
            for task_id in self._arm_index(arm):
                yield task_id, arm

    def __len__(self) -> int:
        return sum(len(self._arm_index(arm)) for arm in self._reads)

    def __bool__(self) -> bool:
        return any(len(read.columns) for read in self._reads.values())
