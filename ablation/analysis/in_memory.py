"""Trials held as Python objects or dict records, turned into :class:`TrialColumns` in one pass.

``compare_results`` receives lists of :class:`~ablation.schema.TaskResult` (or dict records with
the same fields); pairing them goes through :func:`~ablation.analysis.pair_arms.pair_columns`,
so each field is read once per trial into an array and everything after is numpy. The trials
themselves stay where they are: :class:`ResultLookup` finds the few a drill-down shows.

Objects become columns through :func:`ablation.columns.results_to_columns` (which the run store
also uses to write its column blocks), re-exported here.

Dict records take a fast path when every record holds only plain fields of the right types
(``task_id`` str, ``run`` int >= 0, ``passed`` bool, ``status``, numbers or ``None``); any other
record is validated as a :class:`TaskResult`, and a failure names the record number and task id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np
from pydantic import ValidationError

from ablation.columns import (
    STATUS_CODES,
    TrialColumns,
    _floats,
    cost_units_of,
    fields_given,
    filled,
    results_to_columns,
    same_ids,
)
from ablation.errors import InputError, WrongType, validation_line
from ablation.outputs import VALUE_LIMIT
from ablation.schema import RUN_LIMIT, TaskResult

__all__ = [
    "ResultLookup",
    "are_records",
    "records_to_columns",
    "result_fields",
    "results_to_columns",
    "side_columns",
    "side_names",
    "split_arms",
]


def split_arms(results: Iterable[Any]) -> dict[str, tuple[list[Any], TrialColumns]]:
    """``arm -> (its trials, their columns)`` for both arms (either may be empty) of trials given
    as :class:`TaskResult` objects of any mix of arms."""
    sides: dict[str, list[Any]] = {"baseline": [], "candidate": []}
    for result in results:
        sides[result.arm].append(result)
    return {arm: (rows, results_to_columns(rows, arm)) for arm, rows in sides.items()}


def result_fields(rows: Sequence[Any]) -> set[str] | None:
    """The fields some row sets when every row is a :class:`TaskResult`, else ``None``
    (:func:`~ablation.columns.fields_given`: one pass checks the types and reads the sets)."""
    return fields_given(rows, TaskResult)


def are_records(rows: Sequence[Any]) -> bool:
    """Whether every row is a mapping with a ``task_id`` key (the rows' types are collected once;
    lists of :class:`TaskResult` are told by :func:`result_fields`)."""
    types = {*map(type, rows)}
    if not all(issubclass(t, Mapping) for t in types):
        return False
    if types <= {dict}:
        return all(map(dict.__contains__, rows, repeat("task_id")))
    return all("task_id" in r for r in rows)


_PLAIN: dict[str, tuple[type, ...]] = {
    "task_id": (str,),
    "arm": (str,),
    "run": (int,),
    "status": (str,),
    "passed": (bool,),
    "latency_s": (int, float, type(None)),
    "cost": (int, float, type(None)),
    "category": (str, type(None)),
    "critical": (bool,),
}


_DEFAULTS: dict[str, Any] = {"run": 0, "status": "completed", "passed": False, "critical": False}


def _plain_columns(records: Sequence[Any]) -> dict[str, list[Any]] | None:
    """Column lists of plain dict records (absent keys hold defaults), or ``None``.

    ``None`` when some record is not a plain ``dict`` of :data:`_PLAIN` fields of the right
    types, lacks ``task_id``, or holds an unknown status, a negative run or an unknown arm.
    """
    if {*map(type, records)} - {dict}:
        return None
    keys = set().union(*records)
    if not keys <= _PLAIN.keys() or (records and "task_id" not in keys):
        return None  # a record without task_id gets None there, refused by the type check
    columns: dict[str, list[Any]] = {}
    for key in keys:
        column = list(map(dict.get, records, repeat(key), repeat(_DEFAULTS.get(key))))
        if not {*map(type, column)} <= set(_PLAIN[key]):
            return None
        columns[key] = column
    if not (
        set(columns.get("status", ())) <= STATUS_CODES.keys()
        and min(columns.get("run", [0]), default=0) >= 0
        and set(columns.get("arm", ())) <= {"baseline", "candidate"}
    ):
        return None
    return columns


def validated(record: Any, arm: str, index: int, source: str) -> TaskResult:
    """``record`` as a :class:`TaskResult` of ``arm``; a failure names the record and its id."""
    if isinstance(record, TaskResult):
        return record if record.arm == arm else record.model_copy(update={"arm": arm})
    try:
        return TaskResult.model_validate({**dict(record), "arm": arm})
    except (ValidationError, TypeError, ValueError) as exc:
        tid = record.get("task_id") if isinstance(record, Mapping) else None
        raise InputError(
            f"{source}: record {index} (task_id {tid!r}): {validation_line(exc, TaskResult.model_fields)}"
        ) from None


def _array(values: list[Any] | None, dtype: Any, n: int, default: Any) -> np.ndarray:
    """``values`` as an array, or ``n`` times ``default`` (a constant column) when no record
    has the key."""
    return filled(default, dtype, n) if values is None else np.array(values, dtype=dtype)


def _plain_numbers(columns: dict[str, list[Any]], n: int) -> dict[str, np.ndarray] | None:
    """The run, latency and cost arrays of plain records, or ``None`` when a value is one that
    :class:`TaskResult` refuses (a NaN, a number past ``VALUE_LIMIT``, a negative latency, a run
    past its bound),
    so that the record is validated and named."""
    try:
        out = {"run": _array(columns.get("run"), np.int64, n, 0)}
        out |= {name: _floats(columns.get(name), n) for name in ("latency_s", "cost")}
    except OverflowError:  # an integer past int64 or float
        return None
    run = out["run"]
    for name in ("latency_s", "cost"):
        values, array = columns.get(name), out[name]
        if values is not None and (
            int(np.isnan(array).sum()) != values.count(None) or (np.abs(array) >= VALUE_LIMIT).any()
            or (name == "latency_s" and (array < 0).any())
        ):
            return None
    return out if not n or run.max() < RUN_LIMIT else None


def records_to_columns(
    records: Sequence[Any], arm: str, *, source: str = "", ids: np.ndarray | None = None
) -> TrialColumns:
    """Columns of dict records (``TaskResult`` fields); plain records skip the model.

    ``ids``: the other arm's task ids, shared when equal (:func:`~ablation.columns.same_ids`).

    Raises:
        InputError: for a record that is not a valid :class:`TaskResult`, naming its number
            (from 1) and task id.
    """
    columns = _plain_columns(records)
    n = len(records)
    numbers = None if columns is None else _plain_numbers(columns, n)
    if columns is not None and numbers is not None:
        get = columns.get
        status = get("status")
        listed = columns.get("task_id", [])  # no key at all when there are no records
        task_id = same_ids(ids, listed, n)
        if task_id is None:
            task_id = np.array(listed, dtype=object)
        return TrialColumns(
            arm=arm,
            task_id=task_id,
            run=numbers["run"],
            passed=_array(get("passed"), np.bool_, n, False),
            status=filled(0, np.int8, n) if status is None
            else np.fromiter(map(STATUS_CODES.__getitem__, status), np.int8, n),
            latency_s=numbers["latency_s"],
            cost=numbers["cost"],
            tokens=filled(np.nan, np.float64, n),
            category=_array(get("category"), np.object_, n, None),
            critical=_array(get("critical"), np.bool_, n, False),
            source=source,
            cost_units=cost_units_of(numbers["cost"]),  # a plain record states no currency
        )
    rows = [validated(r, arm, i, source) for i, r in enumerate(records, start=1)]
    return results_to_columns(rows, arm, source=source, ids=ids)


class ResultLookup(Mapping[tuple[str, str], TaskResult]):
    """``(task_id, arm) -> first-run trial`` over the original rows, indexed on first use.

    Rows may be :class:`TaskResult` objects or dict records (validated when fetched). A report
    fetches a few thousand trials at most, so the index is not a dict of every id (building one
    took longer than the whole pairing at 1e6 trials) but the ids' ``hash`` values sorted by
    NumPy (within one hash, by run): a lookup bisects to its hash and compares the few ids there.

    The pairing has already sorted every arm's ``(task, run)`` keys; :meth:`located` gives a
    lookup that finds rows with those (a ``locate(task_ids, arm) -> rows`` function, ``-1``
    where absent), so no index of its own is built; :meth:`many` finds a drill-down's trials
    with one such call per arm.
    """

    def __init__(
        self,
        sides: Mapping[str, tuple[Sequence[Any], TrialColumns]],
        locate: Callable[[list[str], str], np.ndarray] | None = None,
    ) -> None:
        self._sides = sides
        self._locate = locate
        self._index: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def located(
        self, columns: Mapping[str, TrialColumns], locate: Callable[[list[str], str], np.ndarray]
    ) -> ResultLookup:
        """This lookup finding rows with ``locate``, valid for the arms' ``columns``.

        ``locate(task_ids, arm)`` returns the row of the lowest run of each id in ``columns
        [arm]``, or ``-1``. When this lookup's own columns are not those very objects, the
        rows could differ: it is returned unchanged.
        """
        same = self._sides.keys() == columns.keys() and all(
            self._sides[arm][1] is cols for arm, cols in columns.items()
        )
        return ResultLookup(self._sides, locate) if same else self

    def _arm_index(self, arm: str) -> tuple[np.ndarray, np.ndarray]:
        """Sorted hashes of the arm's ids and the row of each (by run within a hash)."""
        if arm not in self._index:
            _, cols = self._sides[arm]
            n = len(cols)
            hashes = np.fromiter(map(hash, cols.task_id.tolist()), np.int64, n)
            if cols.run.any():
                by_run = np.argsort(cols.run, kind="stable")
                order = by_run[np.argsort(hashes[by_run], kind="stable")]
            else:
                order = np.argsort(hashes, kind="stable")
            self._index[arm] = (hashes[order], order)
        return self._index[arm]

    def _row(self, task_id: str, arm: str) -> int | None:
        """Row of the first run of ``task_id`` in ``arm``, or ``None``."""
        if self._locate is not None:
            row = int(self._locate([task_id], arm)[0])
            return None if row < 0 else row
        hashes, order = self._arm_index(arm)
        ids = self._sides[arm][1].task_id
        h = hash(task_id)
        at = int(hashes.searchsorted(h))
        while at < hashes.size and hashes[at] == h:
            if ids[order[at]] == task_id:
                return int(order[at])
            at += 1
        return None

    def many(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], TaskResult]:
        """The first-run trials of ``keys`` that exist (the others are left out), located with
        one ``locate`` call per arm when the pairing gave one."""
        out: dict[tuple[str, str], TaskResult] = {}
        for arm in dict.fromkeys(a for _, a in keys):
            if arm not in self._sides:
                continue
            ids = [t for t, a in keys if a == arm and isinstance(t, str)]
            if self._locate is not None:
                found: list[int | None] = [r if r >= 0 else None for r in self._locate(ids, arm).tolist()]
            else:
                found = [self._row(t, arm) for t in ids]
            rows, cols = self._sides[arm]
            for task_id, i in zip(ids, found, strict=True):
                if i is not None:
                    out[task_id, arm] = validated(rows[i], arm, i + 1, cols.source)
        return out

    def all_runs(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[TaskResult]]:
        """Every run's trial of each of ``keys`` that exists, by run (through the hash index)."""
        out: dict[tuple[str, str], list[TaskResult]] = {}
        for task_id, arm in keys:
            if arm not in self._sides or not isinstance(task_id, str):
                continue
            hashes, order = self._arm_index(arm)
            rows, cols = self._sides[arm]
            h, found = hash(task_id), []
            at = int(hashes.searchsorted(h))
            while at < hashes.size and hashes[at] == h:
                i = int(order[at])
                if cols.task_id[i] == task_id:
                    found.append(validated(rows[i], arm, i + 1, cols.source))
                at += 1
            if found:
                out[task_id, arm] = sorted(found, key=lambda r: r.run)
        return out

    def __getitem__(self, key: tuple[str, str]) -> TaskResult:
        task_id, arm = key
        if arm not in self._sides or not isinstance(task_id, str):
            raise KeyError(key)
        i = self._row(task_id, arm)
        if i is None:
            raise KeyError(key)
        rows, cols = self._sides[arm]
        return validated(rows[i], arm, i + 1, cols.source)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for arm, (_, cols) in self._sides.items():
            for task_id in dict.fromkeys(cols.task_id.tolist()):
                yield task_id, arm

    def __len__(self) -> int:
        return sum(len(set(cols.task_id.tolist())) for _, cols in self._sides.values())

    def __bool__(self) -> bool:
        return any(len(rows) for rows, _ in self._sides.values())


def side_columns(
    rows: Sequence[Any], arm: str, given: set[str] | None, ids: np.ndarray | None = None
) -> tuple[Sequence[Any], TrialColumns, str]:
    """One list side of ``compare_results``: its rows, their columns and its label.

    ``given``: the rows' :func:`result_fields` when every row is a :class:`TaskResult`; ``None``
    for dict records (:func:`are_records`). ``ids``: the other side's task ids, shared when
    equal (:func:`~ablation.columns.same_ids`). Files and other inputs are read by
    :mod:`ablation.sources.inputs` instead.
    """
    if given is not None:
        return rows, results_to_columns(rows, arm, given=given, ids=ids), arm
    return rows, records_to_columns(rows, arm, source=arm, ids=ids), arm


def side_names(names: Any) -> tuple[str, str] | None:
    """``names`` (the labels of the baseline and candidate sides) as a pair, ``None`` if not given.

    Raises:
        WrongType: for anything but two strings: a string would be read as its characters, one
            name or three would lose or leave out a side silently.
    """
    if names is None:
        return None
    if (isinstance(names, str | bytes) or not isinstance(names, Sequence) or len(names) != 2
            or not all(isinstance(n, str) for n in names)):  # fmt: skip
        raise WrongType(f"names must be two strings (baseline, candidate), got {names!r:.80}")
    return names[0], names[1]
