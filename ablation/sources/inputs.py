"""What ``compare_results`` accepts as one side, turned into :class:`~ablation.schema.TaskResult` rows.

Accepted: a path (``str`` or ``os.PathLike``, read by
:func:`~ablation.sources.result_files.load_results`), an iterable of :class:`TaskResult`, an
iterable of mappings (read as the JSON lines of those rows are,
:func:`~ablation.sources.readers.read_mappings`: ``TaskResult`` rows and tool records recognised,
else plain rows with ``key=``/``field=``/``run_field=`` dotted paths), and pandas or polars DataFrames (their rows as mappings; pandas ``NaN`` means absent).
pandas and polars are never imported here: a DataFrame is recognised by its type's module.
Anything else is a :class:`~ablation.errors.WrongType` (a ``TypeError``) naming what was given and
what is accepted.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ablation.errors import ConfigError, InputError, WrongType
from ablation.schema import TaskResult
from ablation.sources.readers import read_mappings
from ablation.sources.readers.rows import NumericVerdict, ReadOptions

__all__ = ["ACCEPTED", "side_results"]

#: What one side of ``compare_results`` may be, for error messages.
ACCEPTED = (
    "a path to a result file, a list of TaskResult, a list of mappings (with key=/field=), "
    "or a pandas/polars DataFrame"
)


def side_results(
    side: Any,
    arm: str,
    *,
    key: str | None = None,
    field: str | None = None,
    run_field: str | None = None,
    label: str | None = None,
) -> tuple[list[TaskResult], str]:
    """``(results with arm set to arm, label)`` of one side; see the module docstring.

    Raises:
        InputError: bad input, one line; a verdict that is a number says that a numeric field
            is compared by ``ablation compare --field`` (these are pass/fail results).
    """
    try:
        return _side_results(side, arm, key=key, field=field, run_field=run_field, label=label)
    except NumericVerdict as exc:
        raise InputError(
            f"{exc}; compare_results compares pass/fail verdicts: a numeric field is compared by "
            f"`ablation compare BEFORE AFTER --field {field or 'passed'}`"
        ) from None


def _side_results(
    side: Any, arm: str, *, key: str | None, field: str | None, run_field: str | None, label: str | None
) -> tuple[list[TaskResult], str]:
    if isinstance(side, str) or hasattr(side, "__fspath__"):
        from ablation.sources.result_files import load_results

        rows = load_results(side, key, field, arm=arm, run_field=run_field)
        return rows, label or os.fspath(side)
    records = _frame_records(side)
    if records is None:
        if isinstance(side, bytes | Mapping) or not isinstance(side, Iterable):
            raise WrongType(f"{arm} results: got {type(side).__name__}; expected {ACCEPTED}")
        records = list(side)
    label = label or arm
    if records and all(isinstance(r, TaskResult) for r in records):
        return [r if r.arm == arm else r.model_copy(update={"arm": arm}) for r in records], label
    if records and all(isinstance(r, Mapping) for r in records):
        options = ReadOptions(key=key, field=field, run_field=run_field, arm=arm)
        return read_mappings([_present(dict(r)) for r in records], label, options), label
    if not records:
        raise ConfigError(f"{arm} results: empty; expected {ACCEPTED}")
    kinds = sorted({type(r).__name__ for r in records})
    raise WrongType(f"{arm} results: items of type {', '.join(kinds)}; expected {ACCEPTED}")


def _frame_records(side: Any) -> list[Any] | None:
    module = type(side).__module__.split(".")[0]
    if module == "pandas" and hasattr(side, "to_dict") and hasattr(side, "columns"):
        records: list[Any] = side.to_dict("records")
        return records
    if module == "polars" and hasattr(side, "to_dicts"):
        return list(side.to_dicts())
    return None


def _present(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with NaN cells (pandas' missing values) as ``None``, and NumPy scalars as Python."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        if hasattr(value, "item") and not isinstance(value, str | bytes):
            value = value.item()
        out[name] = None if isinstance(value, float) and math.isnan(value) else value
    return out
