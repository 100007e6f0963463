"""Trials held as Python objects or dict records, turned into :class:`TrialColumns` in one pass.

``compare_results`` receives lists of :class:`~ablation.schema.TaskResult` (or dict records with
the same fields); pairing them goes through :func:`~ablation.analysis.columnar.pair_columns`,
so each field is read once per trial into an array and everything after is numpy. The trials
themselves stay where they are: :class:`ResultLookup` finds the few a drill-down shows.

Dict records take a fast path when every record holds only plain fields of the right types
(``task_id`` str, ``run`` int >= 0, ``passed`` bool, ``status``, numbers or ``None``); any other
record is validated as a :class:`TaskResult`, and a failure names the record number and task id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError

from ablation.columns import STATUS_CODES, TrialColumns
from ablation.errors import InputError
from ablation.schema import TaskResult

__all__ = ["ResultLookup", "records_to_columns", "results_to_columns", "side_columns"]


def _floats(values: Sequence[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _dicts(values: Sequence[Any], n: int, flags: bool = False) -> dict[str, np.ndarray]:
    """One column per key met in the dictionaries ``values`` (NaN, or ``False`` for ``flags``)."""
    out: dict[str, np.ndarray] = {}
    for i, value in enumerate(values):
        if value:
            for name, v in value.items():
                column = out.get(name)
                if column is None:
                    column = out[name] = np.zeros(n, bool) if flags else np.full(n, np.nan)
                column[i] = True if flags else v
    return out


def results_to_columns(rows: Sequence[Any], arm: str, *, source: str = "") -> TrialColumns:
    """Columns of ``rows``: :class:`TaskResult` objects or objects with the same attributes.

    Every row is taken as a trial of ``arm`` whatever its own ``arm`` says (as ``compare``
    does). Objects without ``tokens``/``metrics``/``error_message`` attributes (the store's light
    rows) are accepted.
    """
    n = len(rows)
    names = ("task_id", "run", "status", "passed", "latency_s", "cost", "tokens", "attempts",
             "category", "critical", "quality", "quality_errors", "metrics", "error_type",
             "error_message", "error_stage")  # fmt: skip
    full = not n or all(hasattr(rows[0], a) for a in names)
    columns = [
        [getattr(r, a) for r in rows] if full else [getattr(r, a, None) for r in rows]
        for a in names
    ]
    tid, run, status, passed, latency, cost, tokens, attempts, category, critical = columns[:10]
    quality, quality_errors, metrics, error_type, message, stage = columns[10:]
    codes = STATUS_CODES
    failed = [i for i, s in enumerate(status) if s != "completed"]
    error = np.full(n, "", dtype=object)
    for i in failed:
        e, m = error_type[i], message[i]
        error[i] = (f"{e}: {m}" if m else e) if e is not None else ""
    return TrialColumns(
        arm=arm,
        task_id=np.array(tid, dtype=object),
        run=np.array(run, dtype=np.int64),
        passed=np.array(passed, dtype=bool),
        status=np.array([codes[str(s)] for s in status], dtype=np.int8),
        latency_s=_floats(latency),
        cost=_floats(cost),
        tokens=_floats(tokens),
        quality=_dicts(quality, n),
        metrics=_dicts(metrics, n),
        category=np.array(category, dtype=object),
        critical=np.array(critical, dtype=bool),
        error_type=np.array([e or "" for e in error_type], dtype=object),
        source=source,
        attempts=np.array(attempts, dtype=np.int64),
        error=error,
        error_stage=np.array([s or "" for s in stage], dtype=object),
        quality_errors=_dicts(quality_errors, n, flags=True),
    )


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


def _plain(record: Any) -> bool:
    if type(record) is not dict:
        return False
    for key, value in record.items():
        kinds = _PLAIN.get(key)
        if kinds is None or type(value) not in kinds:
            return False
    return (
        "task_id" in record
        and record.get("status", "completed") in STATUS_CODES
        and record.get("run", 0) >= 0
        and record.get("arm", "baseline") in ("baseline", "candidate")
    )


def validated(record: Any, arm: str, index: int, source: str) -> TaskResult:
    """``record`` as a :class:`TaskResult` of ``arm``; a failure names the record and its id."""
    if isinstance(record, TaskResult):
        return record if record.arm == arm else record.model_copy(update={"arm": arm})
    try:
        return TaskResult.model_validate({**dict(record), "arm": arm})
    except (ValidationError, TypeError, ValueError) as exc:
        tid = record.get("task_id") if isinstance(record, Mapping) else None
        raise InputError(f"{source}: record {index} (task_id {tid!r}): {exc}") from None


def records_to_columns(records: Sequence[Any], arm: str, *, source: str = "") -> TrialColumns:
    """Columns of dict records (``TaskResult`` fields); plain records skip the model.

    Raises:
        InputError: for a record that is not a valid :class:`TaskResult`, naming its number
            (from 1) and task id.
    """
    if all(map(_plain, records)):
        n = len(records)
        get = dict.get
        return TrialColumns(
            arm=arm,
            task_id=np.array([r["task_id"] for r in records], dtype=object),
            run=np.array([get(r, "run", 0) for r in records], dtype=np.int64),
            passed=np.array([get(r, "passed", False) for r in records], dtype=bool),
            status=np.array(
                [STATUS_CODES[get(r, "status", "completed")] for r in records], dtype=np.int8
            ),
            latency_s=_floats([get(r, "latency_s") for r in records]),
            cost=_floats([get(r, "cost") for r in records]),
            tokens=np.full(n, np.nan),
            category=np.array([get(r, "category") for r in records], dtype=object),
            critical=np.array([get(r, "critical", False) for r in records], dtype=bool),
            source=source,
        )
    rows = [validated(r, arm, i, source) for i, r in enumerate(records, start=1)]
    return results_to_columns(rows, arm, source=source)


class ResultLookup(Mapping[tuple[str, str], TaskResult]):
    """``(task_id, arm) -> first-run trial`` over the original rows, indexed on first use.

    Rows may be :class:`TaskResult` objects or dict records (validated when fetched).
    """

    def __init__(self, sides: Mapping[str, tuple[Sequence[Any], TrialColumns]]) -> None:
        self._sides = sides
        self._index: dict[str, dict[str, int]] = {}

    def _arm_index(self, arm: str) -> dict[str, int]:
        if arm not in self._index:
            _, cols = self._sides[arm]
            order = np.argsort(cols.run, kind="stable")[::-1]
            # later writes win: the smallest run of each task is written last
            self._index[arm] = dict(zip(cols.task_id[order].tolist(), order.tolist(), strict=True))
        return self._index[arm]

    def __getitem__(self, key: tuple[str, str]) -> TaskResult:
        task_id, arm = key
        if arm not in self._sides:
            raise KeyError(key)
        i = self._arm_index(arm).get(task_id)
        if i is None:
            raise KeyError(key)
        rows, cols = self._sides[arm]
        return validated(rows[i], arm, i + 1, cols.source)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for arm in self._sides:
            for task_id in self._arm_index(arm):
                yield task_id, arm

    def __len__(self) -> int:
        return sum(len(self._arm_index(arm)) for arm in self._sides)

    def __bool__(self) -> bool:
        return any(len(rows) for rows, _ in self._sides.values())


def side_columns(side: Any, arm: str) -> tuple[Sequence[Any], TrialColumns, str]:
    """One side of ``compare_results``: its rows, their columns and its label.

    ``side`` is a path to a result file (read by
    :func:`~ablation.sources.result_files.load_results`), a list of :class:`TaskResult`, or a list
    of dict records.
    """
    if isinstance(side, str) or hasattr(side, "__fspath__"):
        from ablation.sources.result_files import load_results

        rows: Sequence[Any] = load_results(side, arm=arm)  # type: ignore[arg-type]
        return rows, results_to_columns(rows, arm, source=str(side)), str(side)
    rows = side if isinstance(side, Sequence) else list(side)
    if all(isinstance(r, TaskResult) for r in rows):
        return rows, results_to_columns(rows, arm), arm
    return rows, records_to_columns(rows, arm, source=arm), arm
