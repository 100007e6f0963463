"""Plain result rows: JSONL, a JSON array, one JSON object, or CSV with a header.

Each row gives ``task_id`` at ``--key`` (default ``id``), the verdict at ``--field`` (default
``passed``) and the run at ``--run-field`` (default: run 0), all dotted paths. Further top-level
columns: ``score`` → ``quality["score"]``, ``cost``, ``latency``/``latency_s`` → ``latency_s``,
``tokens``, ``category``, ``critical`` (boolean), ``output``, ``cost_currency`` (text) and
``cost_source`` (``agent``, ``price-db`` or ``override``), as a :class:`~ablation.schema.TaskResult`
names them; any other numeric column → ``metrics[name]`` (in CSV, a cell is numeric when it reads
as a decimal number); other columns are ignored. Empty CSV cells and JSON ``null`` mean "absent".
A task id of only whitespace is refused (as a blank CSV cell is), and so is a NUL character in CSV.
"""

from __future__ import annotations

import csv
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, get_args

from ablation.errors import InputError
from ablation.outputs import CostSource, usable_number
from ablation.schema import safe_text
from ablation.sources.readers.rows import (
    NUMBER_TEXT,
    UNUSABLE,
    ReadOptions,
    Row,
    dotted,
    matches_where,
    parse_verdict,
)
from ablation.sources.text import file_error, short_repr

__all__ = ["COST_SOURCES", "COST_UNITS", "CSV_NUMBER", "RESULT_NUMBERS", "csv_items", "generic_rows", "number"]

#: A CSV cell (stripped) that reads as a number (:data:`~ablation.sources.readers.rows.NUMBER_TEXT`):
#: in a column other than the result's own numbers (score, cost, latency, tokens), a metric.
CSV_NUMBER = NUMBER_TEXT
#: The result's own numeric fields (``score`` is ``quality["score"]``): any other numeric field is
#: a metric.
RESULT_NUMBERS = ("score", "cost", "latency", "latency_s", "tokens")
#: The text columns stating the currency and the source of the row's cost.
COST_UNITS = ("cost_currency", "cost_source")
#: The values of ``cost_source``.
COST_SOURCES: tuple[str, ...] = get_args(CostSource)
#: A line break as :class:`io.StringIO` with ``newline=""`` (the CSV reader's lines) ends a line.
_LINE_BREAK = re.compile(r"\r\n?|\n")


def generic_rows(
    items: Iterator[tuple[int, Any]], display: str, options: ReadOptions, *, csv_cells: bool = False
) -> Iterator[Row]:
    """The rows of plain result objects ``(line, object)``."""
    key = options.key or "id"
    field = options.field or "passed"
    if key == field:
        raise file_error(InputError, display, f"key and field must be different columns, both are {key!r}")
    for line, obj in items:
        if not isinstance(obj, dict):
            raise file_error(
                InputError, display, f"expected a JSON object, got {type(obj).__name__}", line=line
            )
        if options.where and not matches_where(obj, options.where):
            continue
        raw_id = dotted(obj, key)
        if csv_cells and isinstance(raw_id, str):
            raw_id = raw_id.strip()
        task_id = str(raw_id) if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None

        def fail(problem: str, line: int = line, task_id: str | None = task_id) -> Exception:
            return file_error(InputError, display, problem, line=line, task_id=task_id)

        skip = {key, field, options.run_field or ""}
        numbers, metrics, extra = _columns(obj, skip, fail, csv_cells=csv_cells)
        if "latency" in numbers and "latency_s" in numbers:
            raise fail("both 'latency' and 'latency_s' are given; keep one")
        yield Row(
            line=line,
            task_id=raw_id,
            verdict=dotted(obj, field),
            run=dotted(obj, options.run_field) if options.run_field else None,
            latency_s=numbers.get("latency_s", numbers.get("latency")),
            cost=numbers.get("cost"),
            tokens=numbers.get("tokens"),
            quality={"score": numbers["score"]} if "score" in numbers else {},
            metrics=metrics,
            extra=extra,
        )


def _columns(
    row: dict[str, Any], skip: set[str], fail: Callable[[str], Exception], *, csv_cells: bool
) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
    """The optional top-level columns: ``(known numbers, other metrics, TaskResult fields)``."""
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
        elif name in COST_UNITS:
            extra[name] = _unit(name, value, fail, csv_cells)
        elif name in RESULT_NUMBERS:
            numbers[name] = number(value, name, fail)
        elif (csv_cells and CSV_NUMBER.fullmatch(value.strip())) or (
            not csv_cells and isinstance(value, int | float) and not isinstance(value, bool)
        ):
            metrics[name] = number(value, name, fail)
    return numbers, metrics, extra


def _unit(name: str, value: Any, fail: Callable[[str], Exception], csv_cells: bool) -> str:
    """A ``cost_currency`` (any text) or ``cost_source`` (one of :data:`COST_SOURCES`) cell."""
    if not isinstance(value, str):
        raise fail(f"{name!r} must be a string, got {short_repr(value)}")
    text = safe_text(value.strip() if csv_cells else value)
    if name == "cost_source" and text not in COST_SOURCES:
        raise fail(f"'cost_source' must be one of {', '.join(COST_SOURCES)}, got {short_repr(value)}")
    return text


def number(value: Any, name: str, fail: Callable[[str], Exception]) -> float:
    """A finite float from a JSON number or a text in :data:`CSV_NUMBER`'s syntax; anything else
    fails, naming the value: a text that only Python's ``float`` reads (``1_000``, digits of
    another script) is refused rather than read by one tool's rules."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise fail(f"{name!r} is not a number: {short_repr(value)}")
    text = value.strip() if isinstance(value, str) else None
    try:
        result = float(value if text is None else text)
    except ValueError:
        raise fail(f"{name!r} is not a number: {short_repr(value)}") from None
    except OverflowError:  # a JSON integer past a float's range
        result = math.inf
    if not usable_number(result):
        raise fail(f"{name!r} {UNUSABLE}: {short_repr(value)}")
    if text is not None and CSV_NUMBER.fullmatch(text) is None:
        raise fail(f"{name!r} is not a number in the files' syntax (digits, a point, an exponent): {short_repr(value)}")
    return result


def csv_items(text: str, display: str, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, {column: cell})`` of a CSV text with a header naming every ``required`` column.

    A NUL character is refused, naming its line: the :mod:`csv` module reads it as part of a cell
    (an id ``"ta\\x00sk"`` that pairs with nothing), but in a text file it is damage (a block of
    a file a crash left unwritten) or a binary file, and JSON refuses it too.
    """
    nul = text.find("\0")
    if nul >= 0:
        raise file_error(InputError, display, "holds a NUL character: a damaged or binary file, not CSV text",
                         line=len(_LINE_BREAK.findall(text, 0, nul)) + 1)  # fmt: skip
    header: list[str] | None = None
    header_line = 0
    for start, row in _csv_rows(text, display):
        if not row or not any(cell.strip() for cell in row):
            continue
        if header is None:
            header, header_line = [cell.strip() for cell in row], start
            _check_header(header, display, start, required)
            continue
        if len(row) != len(header):
            at = header.index(required[0]) if required and required[0] in header else len(row)
            task_id = row[at].strip() if at < len(row) else None
            raise file_error(
                InputError,
                display,
                f"row has {len(row)} fields, the header (line {header_line}) has {len(header)}",
                line=start,
                task_id=task_id or None,
            )
        yield start, dict(zip(header, row, strict=True))


def _csv_rows(text: str, display: str) -> Iterator[tuple[int, list[str]]]:
    """``(first line, cells)`` of each row of a CSV text, whatever the length of its cells.

    The :mod:`csv` module refuses a cell of more than :func:`csv.field_size_limit` characters
    (131072 unless raised) as an error, where a JSON string of any length is read and pyarrow
    reads the same CSV file: a model's output or a transcript in a cell is data, not damage. The
    limit is process-wide, so it is raised to the text's length (the text is already bounded by
    ``max_bytes``, so no cell is longer) only while :data:`_CSV_BATCH` rows are parsed, and put
    back before they are handed on, under a lock that keeps two threads reading CSV here from
    restoring each other's limit. A malformed row is an error naming its line, after the rows
    before it.
    """
    reader = csv.reader(_lines(text), strict=True)
    ended = False
    while not ended:
        batch: list[tuple[int, list[str]]] = []
        failure: csv.Error | None = None
        start = reader.line_num + 1
        with _FIELD_LIMIT_LOCK:
            before = csv.field_size_limit()
            csv.field_size_limit(max(before, len(text)))
            try:
                while len(batch) < _CSV_BATCH:
                    start = reader.line_num + 1
                    row = next(reader, None)
                    if row is None:
                        ended = True
                        break
                    batch.append((start, row))
            except csv.Error as exc:
                failure = exc
            finally:
                csv.field_size_limit(before)
        yield from batch
        if failure is not None:
            raise file_error(InputError, display, f"malformed CSV ({failure})", line=start) from None


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text``, each with its line end, as :class:`io.StringIO` with ``newline=""``
    reads them (the csv module's input), one at a time: a ``StringIO`` holds a copy of the whole
    text at 4 bytes a character before the first row is parsed, past the row that may refuse it."""
    start = 0
    for match in _LINE_BREAK.finditer(text):
        yield text[start : match.end()]
        start = match.end()
    if start < len(text):
        yield text[start:]


#: Rows parsed at a time under the raised cell-length limit (:func:`_csv_rows`).
_CSV_BATCH = 1024
_FIELD_LIMIT_LOCK = threading.Lock()


def _check_header(header: list[str], display: str, line: int, required: tuple[str, ...]) -> None:
    """Refuse a header with an empty or repeated column name, or without a ``required`` column
    (one counting pass: a header may have tens of thousands of columns)."""
    if any(not name for name in header):
        raise file_error(InputError, display, "the header has an empty column name", line=line)
    dups = sorted(name for name, count in Counter(header).items() if count > 1)
    if dups:
        raise file_error(InputError, display, f"the header repeats columns {dups}", line=line)
    for column, role in zip(required, ("the task id", "the verdict", "the run"), strict=False):
        if column not in header:
            raise file_error(
                InputError,
                display,
                f"no column {column!r} ({role}) in the header (columns: {', '.join(header)})",
                line=line,
            )

