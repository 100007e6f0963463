"""Read one arm's result files and expected-id lists strictly.

Owns :func:`load_results` (JSONL, JSON array or CSV rows into :class:`~ablation.schema.TaskResult`),
:func:`parse_verdict` (what counts as an unambiguous boolean) and :func:`load_expected_ids`. Every
error is one line: ``FILE:LINE: problem (task id 'X')`` (the line and the id when known), built
with the helpers of :mod:`ablation.sources.text`. Files are read as UTF-8 (a byte-order mark is
allowed); line numbers count from 1.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ablation.errors import ConfigError, InputError
from ablation.schema import ARMS, TaskResult
from ablation.sources.text import (
    file_error,
    json_array_items,
    nonblank_lines,
    read_text,
    short_repr,
    starts_json_array,
)

__all__ = ["load_expected_ids", "load_results", "parse_verdict"]

_CSV_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BOOL_WORDS: dict[str, bool] = {
    **dict.fromkeys(("true", "1", "1.0", "pass", "passed", "yes"), True),
    **dict.fromkeys(("false", "0", "0.0", "fail", "failed", "no"), False),
}
_RESULT_NUMBERS = ("score", "cost", "latency", "latency_s", "tokens")
_RESULT_FORMATS = {"jsonl": "json", "ndjson": "json", "json": "json", "csv": "csv"}


# --------------------------------------------------------------------------- results


def load_results(
    path: str | os.PathLike[str],
    key: str = "id",
    field: str = "passed",
    *,
    arm: str = "baseline",
    format: str | None = None,
) -> list[TaskResult]:
    """Load one arm's per-task verdicts from a JSONL, JSON-array or CSV file.

    Each row becomes ``TaskResult(task_id=str(row[key]), arm=arm, run=0, status="completed",
    passed=<verdict>)``. Further columns: ``score`` → ``quality["score"]``, ``cost``,
    ``latency`` or ``latency_s`` → ``latency_s``, ``tokens``, ``category``, ``critical``
    (boolean), ``output``; any other numeric column → ``metrics[name]`` (in CSV, a cell is
    numeric when it reads as a decimal number); other columns are ignored. Empty CSV cells and
    JSON ``null`` in optional columns mean "absent".

    A verdict must be unambiguous: a JSON boolean, ``1``/``0`` (or exactly ``1.0``/``0.0``), or
    one of the strings true/false, 1/0, 1.0/0.0, pass/fail, passed/failed, yes/no (any case,
    surrounding spaces ignored). Anything else is an error, never a guess.

    Args:
        path: The file. ``.jsonl``/``.ndjson``/``.json`` are read as JSON (one object per line, or
            one JSON array of objects), ``.csv`` as CSV with a header row.
        key: Column holding the task id (string or integer).
        field: Column holding the verdict.
        arm: ``"baseline"`` or ``"candidate"``, recorded on every result.
        format: ``"jsonl"``, ``"json"`` or ``"csv"`` to override the extension.

    Returns:
        The results in file order.

    Raises:
        InputError: missing, empty or malformed file, a row without the id or verdict, a verdict
            that is not a boolean, a bad number, or a duplicate id (naming both lines).
        ConfigError: ``arm`` is not an arm, or ``key`` equals ``field``.
    """
    display = os.fspath(path)
    if arm not in ARMS:
        raise ConfigError(f"arm must be 'baseline' or 'candidate', got {arm!r}")
    if key == field:
        raise ConfigError(f"key and field must be different columns, both are {key!r}")
    text = read_text(Path(path), display)
    kind = _results_kind(display, format)
    if not text.strip():
        raise file_error(InputError, display, "empty file: no results")
    rows = _csv_rows(text, display, key, field) if kind == "csv" else _json_rows(text, display)
    results: list[TaskResult] = []
    first_line: dict[str, int] = {}
    for line, row in rows:
        result = _row_result(row, line, display, key, field, arm, csv_cells=kind == "csv")
        if result.task_id in first_line:
            raise file_error(
                InputError,
                display,
                f"duplicate id {result.task_id!r}: first on line "
                f"{first_line[result.task_id]}, again on line {line}",
                line=line,
                task_id=result.task_id,
            )
        first_line[result.task_id] = line
        results.append(result)
    if not results:
        raise file_error(InputError, display, "no result rows")
    return results


def _results_kind(display: str, format: str | None) -> str:
    if format is not None:
        kind = _RESULT_FORMATS.get(str(format).lower().lstrip("."))
        if kind is None:
            raise file_error(
                InputError, display, f"unknown format {format!r} (expected jsonl, json or csv)"
            )
        return kind
    suffix = Path(display).suffix.lower().lstrip(".")
    kind = _RESULT_FORMATS.get(suffix)
    if kind is None:
        raise file_error(
            InputError,
            display,
            f"cannot tell the format from the extension {suffix or '(none)'!r}"
            " (expected .jsonl, .json or .csv, or pass format=)",
        )
    return kind


def _json_rows(text: str, display: str) -> Iterator[tuple[int, dict[str, Any]]]:
    items: Iterator[tuple[int, Any]]
    if starts_json_array(text):
        items = json_array_items(text, display)
    else:
        items = _jsonl_items(text, display)
    for line, value in items:
        if not isinstance(value, dict):
            raise file_error(
                InputError,
                display,
                f"expected a JSON object, got {type(value).__name__}",
                line=line,
            )
        yield line, value


def _jsonl_items(text: str, display: str) -> Iterator[tuple[int, Any]]:
    for line, raw in nonblank_lines(text):
        try:
            yield line, json.loads(raw)
        except json.JSONDecodeError as exc:
            raise file_error(
                InputError, display, f"malformed JSON ({exc.msg} at column {exc.colno})", line=line
            ) from None


def _csv_rows(
    text: str, display: str, key: str, field: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    header_line = 0
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise file_error(InputError, display, f"malformed CSV ({exc})", line=start) from None
        if not row or not any(cell.strip() for cell in row):
            continue
        if header is None:
            header, header_line = [cell.strip() for cell in row], start
            _check_header(header, display, start, key, field)
            continue
        if len(row) != len(header):
            task_id = row[header.index(key)].strip() if header.index(key) < len(row) else None
            raise file_error(
                InputError,
                display,
                f"row has {len(row)} fields, the header (line {header_line}) has {len(header)}",
                line=start,
                task_id=task_id or None,
            )
        yield start, dict(zip(header, row, strict=True))


def _check_header(header: list[str], display: str, line: int, key: str, field: str) -> None:
    if any(not name for name in header):
        raise file_error(InputError, display, "the header has an empty column name", line=line)
    dups = sorted({name for name in header if header.count(name) > 1})
    if dups:
        raise file_error(InputError, display, f"the header repeats columns {dups}", line=line)
    for column, role in ((key, "the task id"), (field, "the verdict")):
        if column not in header:
            raise file_error(
                InputError,
                display,
                f"no column {column!r} ({role}) in the header (columns: {', '.join(header)})",
                line=line,
            )


def parse_verdict(value: Any) -> bool | None:
    """The boolean an unambiguous verdict stands for, or ``None`` when it is ambiguous.

    Accepted: ``True``/``False``; the integers 1/0 and the floats exactly 1.0/0.0; the strings
    true/false, 1/0, 1.0/0.0, pass/fail, passed/failed, yes/no (case-insensitive, stripped).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        return _BOOL_WORDS.get(value.strip().lower())
    return None


def _row_result(
    row: dict[str, Any], line: int, display: str, key: str, field: str, arm: str, *, csv_cells: bool
) -> TaskResult:
    """The :class:`TaskResult` of one row; every problem is an ``InputError`` naming the line."""
    task_id = _row_id(row, line, display, key, csv_cells=csv_cells)

    def fail(problem: str) -> Exception:
        return file_error(InputError, display, problem, line=line, task_id=task_id)

    passed = _row_verdict(row, field, fail)
    numbers, metrics, extra = _row_columns(row, (key, field), fail, csv_cells=csv_cells)
    latency, tokens = _latency_and_tokens(numbers, fail)
    return TaskResult(
        task_id=task_id,
        arm=arm,  # type: ignore[arg-type]  # checked against ARMS by the caller
        run=0,
        status="completed",
        passed=passed,
        latency_s=latency,
        cost=numbers.get("cost"),
        tokens=tokens,
        quality={"score": numbers["score"]} if "score" in numbers else {},
        metrics=metrics,
        **extra,
    )


def _row_id(row: dict[str, Any], line: int, display: str, key: str, *, csv_cells: bool) -> str:
    """The row's task id: a non-empty string or an integer (CSV cells are stripped)."""
    raw_id = row.get(key)
    if isinstance(raw_id, str):
        raw_id = raw_id.strip() if csv_cells else raw_id
    if raw_id is None or raw_id == "":
        raise file_error(InputError, display, f"no {key!r} field (the task id)", line=line)
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise file_error(
            InputError,
            display,
            f"{key!r} must be a string or an integer, got {short_repr(raw_id)}",
            line=line,
        )
    return str(raw_id)


def _row_verdict(row: dict[str, Any], field: str, fail: Callable[[str], Exception]) -> bool:
    """The row's verdict, which must be present and unambiguous (see :func:`parse_verdict`)."""
    if field not in row:
        raise fail(f"no {field!r} field (the verdict)")
    passed = parse_verdict(row[field])
    if passed is None:
        raise fail(
            f"verdict {field!r} is not an unambiguous boolean: "
            f"{short_repr(row[field])} (use true/false, 1/0, pass/fail or yes/no)"
        )
    return passed


def _row_columns(
    row: dict[str, Any],
    skip: tuple[str, str],
    fail: Callable[[str], Exception],
    *,
    csv_cells: bool,
) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
    """The optional columns of a row: ``(known numbers, other metrics, TaskResult fields)``.

    Columns in ``skip`` (the id and the verdict) and absent values (``None``, empty CSV cells)
    are left out; non-numeric columns other than ``category``, ``critical`` and ``output`` are
    ignored.
    """
    numbers: dict[str, float] = {}
    metrics: dict[str, float] = {}
    extra: dict[str, Any] = {}
    for name, value in row.items():
        if name in skip or value is None or (csv_cells and value.strip() == ""):
            continue
        if name == "category":
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise fail(f"'category' must be a string, got {short_repr(value)}")
            extra["category"] = str(value).strip() if csv_cells else str(value)
        elif name == "critical":
            critical = parse_verdict(value)
            if critical is None:
                raise fail(f"'critical' is not an unambiguous boolean: {short_repr(value)}")
            extra["critical"] = critical
        elif name == "output":
            extra["output"] = value
        elif name in _RESULT_NUMBERS:
            numbers[name] = _number(value, name, fail)
        elif (csv_cells and _CSV_NUMBER.fullmatch(value.strip())) or (
            not csv_cells and isinstance(value, int | float) and not isinstance(value, bool)
        ):
            metrics[name] = _number(value, name, fail)
    return numbers, metrics, extra


def _latency_and_tokens(
    numbers: dict[str, float], fail: Callable[[str], Exception]
) -> tuple[float | None, int | None]:
    """Latency (from ``latency`` or ``latency_s``, not both; not negative) and the token count
    (a non-negative integer), each ``None`` when absent."""
    if "latency" in numbers and "latency_s" in numbers:
        raise fail("both 'latency' and 'latency_s' are given; keep one")
    latency = numbers.get("latency_s", numbers.get("latency"))
    if latency is not None and latency < 0:
        raise fail(f"latency must not be negative, got {latency!r}")
    tokens = numbers.get("tokens")
    if tokens is not None and (tokens < 0 or tokens != int(tokens)):
        raise fail(f"'tokens' must be a non-negative integer, got {tokens!r}")
    return latency, None if tokens is None else int(tokens)


def _number(value: Any, name: str, fail: Callable[[str], Exception]) -> float:
    """A finite float from a JSON number or a numeric string; anything else fails."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise fail(f"{name!r} is not a number: {short_repr(value)}")
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        raise fail(f"{name!r} is not a number: {short_repr(value)}") from None
    if not math.isfinite(number):
        raise fail(f"{name!r} is not a finite number: {short_repr(value)}")
    return number


# --------------------------------------------------------------------------- expected ids


def load_expected_ids(path: str | os.PathLike[str]) -> list[str]:
    """Load the inventory of task ids a results file is expected to cover.

    Args:
        path: A text file with one id per line (surrounding spaces stripped; blank lines and lines
            starting with ``#`` ignored), or a file holding one JSON array of strings/integers.

    Returns:
        The ids in file order.

    Raises:
        InputError: missing file, malformed JSON array, an item that is not a string or integer,
            a duplicate id (naming both lines), or no ids at all.
    """
    display = os.fspath(path)
    text = read_text(Path(path), display)
    entries: list[tuple[int, str]] = []
    if starts_json_array(text):
        for line, item in json_array_items(text, display):
            if isinstance(item, bool) or not isinstance(item, str | int) or item == "":
                raise file_error(
                    InputError,
                    display,
                    f"an id must be a non-empty string or an integer, got {short_repr(item)}",
                    line=line,
                )
            entries.append((line, str(item)))
    else:
        for line, raw in nonblank_lines(text):
            stripped = raw.strip()
            if not stripped.startswith("#"):
                entries.append((line, stripped))
    first_line: dict[str, int] = {}
    for line, task_id in entries:
        if task_id in first_line:
            raise file_error(
                InputError,
                display,
                f"duplicate id {task_id!r}: first on line "
                f"{first_line[task_id]}, again on line {line}",
                line=line,
                task_id=task_id,
            )
        first_line[task_id] = line
    if not entries:
        raise file_error(InputError, display, "no ids (the file is empty or holds only comments)")
    return [task_id for _, task_id in entries]
