"""The result-file readers, registered in :mod:`~ablation.sources.readers.registry`, picked by content.

:data:`FORMATS` names every format ``--from`` accepts. :func:`read_results` reads a file (``-`` is
standard input; gzip is decompressed whatever the name), detects the format from the content
unless ``format`` forces it, and returns :class:`~ablation.schema.TaskResult` objects:

- a zip archive → Inspect ``.eval`` (needs inspect-ai);
- one JSON document (an object, possibly over many lines): Inspect log, pydantic-evals report,
  promptfoo output by their keys, else one plain row;
- a JSON array or JSON lines: OpenAI evals records (first object ``spec``), lm-eval samples
  (``doc_id``), ablation's own export (JSON lines, first object ``campaign``), else plain rows;
- anything else: CSV with a header.

JSON lines end in ``\\n`` (``\\r\\n`` allowed, as jsonlines.org has it); lines cut by a bare
``\\r`` (CR-only line endings) are refused with that cause named, while CSV reads them, as the
:mod:`csv` module ends a line at ``\\r`` too.

A reader added with :func:`~ablation.sources.readers.registry.register_reader` is asked before the
plain ``jsonl`` and ``csv`` readers, on the content shapes it declares.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ablation.errors import InputError
from ablation.schema import TaskResult
from ablation.sources.readers import (
    ablation_export,
    inspect_logs,
    lm_eval,
    openai_evals,
    promptfoo,
    pydantic_evals,
)
from ablation.sources.readers.generic import csv_items, generic_rows
from ablation.sources.readers.registry import (
    FORMATS,
    TEXT_HEAD,
    ResultReader,
    Shape,
    find_reader,
    readers_for,
    register_reader,
)
from ablation.sources.readers.rows import ReadOptions, Row, rows_to_results
from ablation.sources.text import (
    decode_text,
    file_error,
    json_array_items,
    load_json,
    read_source,
    starts_json_array,
)
from ablation.strict_json import decode_json

__all__ = [
    "FORMATS", "ReadOptions", "ResultReader", "Row", "RowRead", "detect_format", "read_mappings", "read_results",
    "read_rows", "register_reader",
]  # fmt: skip

_ALIASES = {"json": "jsonl", "ndjson": "jsonl"}
_log = logging.getLogger(__name__)


def _anything(sample: Any) -> bool:
    """The detector of a catch-all reader: every content of its shapes."""
    return True


def _plain_rows(payload: Any, display: str, options: ReadOptions) -> Iterator[Row]:
    """Plain rows of a JSON document (one row), JSON lines or a JSON array."""
    items = iter([(1, payload)]) if isinstance(payload, Mapping) else payload
    return generic_rows(items, display, options)


def _csv_rows(text: str, display: str, options: ReadOptions) -> Iterator[Row]:
    """Plain rows of a CSV text with a header naming the id and verdict (and run) columns."""
    required = tuple(p for p in (options.key or "id", options.field or "passed", options.run_field) if p)
    return generic_rows(csv_items(text, display, required), display, options, csv_cells=True)


# The built-in formats, in the order detection asks them (``jsonl`` and ``csv`` take the rest).
register_reader(ResultReader("inspect", ("document",), inspect_logs.detect, inspect_logs.rows, "sample"))
register_reader(ResultReader("pydantic-evals", ("document",), pydantic_evals.detect, pydantic_evals.rows, "sample"))
register_reader(ResultReader("lm-eval", ("lines", "array"), lm_eval.detect, lm_eval.rows))
register_reader(ResultReader("promptfoo", ("document",), promptfoo.detect, promptfoo.rows, "sample"))
register_reader(ResultReader("openai-evals", ("lines", "array"), openai_evals.detect, openai_evals.rows))
register_reader(ResultReader("ablation-export", ("lines",), ablation_export.detect, ablation_export.rows))
register_reader(ResultReader("jsonl", ("document", "lines", "array"), _anything, _plain_rows))
register_reader(ResultReader("csv", ("text",), _anything, _csv_rows))


def read_results(
    source: str, options: ReadOptions, format: str | None = None, display: str | None = None
) -> list[TaskResult]:
    """Read one arm's results from ``source`` (a path or ``-``); see the module docstring."""
    display = display or source
    read = read_rows(source, options, format, display)
    return rows_to_results(read.rows, display, options, **read.check)


def read_mappings(records: Sequence[Mapping[str, Any]], display: str, options: ReadOptions) -> list[TaskResult]:
    """One arm's results from rows already in memory, read as the JSON lines of those rows are:
    the registered reader detected from the first row (an ablation export's ``TaskResult`` rows
    with their status, errors, quality and usage; a tool's records), else plain rows. Errors
    name the row (``display:N``)."""
    reader = _detect(("lines", "array"), records[0])
    rows = _shape_errors_named(reader.rows(enumerate(records, start=1), display, options), display, reader.name, "row")
    unit = "row" if reader.unit == "line" else reader.unit
    return rows_to_results(rows, display, options, unit=unit)


def detect_format(text: str, display: str = "<text>") -> str:
    """The format :func:`read_results` would read ``text`` as."""
    return _parse(text, display, None)[0]


@dataclass
class RowRead:
    """The rows of one source before validation, and how to check them.

    Attributes:
        rows: The reader's rows, lazily (errors come as they are met).
        kind: The format read (``"jsonl"`` for plain JSON lines/arrays, ``"single"``, ``"csv"``...).
        check: Keyword arguments of :func:`~ablation.sources.readers.rows.checked_rows`.
        text: The decoded text of a plain JSON-lines source (``None`` otherwise), for readers that
            parse it faster as a whole.
    """

    rows: Iterator[Row]
    kind: str
    check: dict[str, Any]
    text: str | None = None


def read_rows(source: str, options: ReadOptions, format: str | None, display: str) -> RowRead:
    """Detect the format of ``source`` and open its rows (shared by every result reader)."""
    forced = _format(format, display)
    _, data = read_source(source, display, max_bytes=options.max_bytes)
    if data[:4] == b"PK\x03\x04" or display.lower().endswith((".eval", ".eval.gz")):
        if forced not in (None, "inspect"):
            raise file_error(InputError, display, f"is a zip archive, not {forced}")
        doc = inspect_logs.read_eval_archive(display, data, options.max_bytes)
        return _opened(inspect_logs.rows(doc, display, options), display, options, "inspect", "sample")
    text = decode_text(data, display)
    if not text or text.isspace():  # (``strip`` would copy a large text)
        raise file_error(InputError, display, "empty file: no results")
    kind, payload = _parse(text, display, forced or _extension_hint(display))
    reader = find_reader("jsonl" if kind == "single" else kind)
    assert reader is not None  # _parse names registered readers only
    read = _opened(reader.rows(payload, display, options), display, options, kind, reader.unit)
    if kind == "jsonl" and not starts_json_array(text):
        read.text = text
    return read


def _opened(rows: Iterator[Row], display: str, options: ReadOptions, kind: str, unit: str) -> RowRead:
    _log.debug("%s: read as %s (%s)", display, kind, options)
    rows = _shape_errors_named(rows, display, kind, unit)
    if kind == "inspect":
        what = f"scorer {options.field!r}" if options.field else "score"
        check = {"what": what, "mapping": inspect_logs.inspect_verdict, "unit": "sample"}
        return RowRead(rows, kind, check)
    return RowRead(rows, kind, {"unit": unit})


def _shape_errors_named(rows: Iterator[Row], display: str, kind: str, unit: str) -> Iterator[Row]:
    """``rows``, with a reader's failure on a value of another shape than its tool writes (a
    list where the tool writes an object, a number where it writes a list) raised as an
    :class:`InputError` naming the file and the first row not read, not as a bare ``TypeError``
    or ``AttributeError``. The readers check what their formats define; this catches the rest,
    once for every reader."""
    last = 0
    try:
        for row in rows:
            last = row.line
            yield row
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        where = f"the {unit} after {unit} {last}" if last else f"its first {unit}"
        raise file_error(InputError, display, f"{where} is not {kind} as the reader knows it: "
                         f"{type(exc).__name__}: {' '.join(str(exc).split())}") from None  # fmt: skip


def _extension_hint(display: str) -> str | None:
    """``csv`` for a ``.csv`` file, ``json`` for ``.json``/``.jsonl``/``.ndjson`` (also gzipped)."""
    name = display.lower().removesuffix(".gz")
    if name.endswith(".csv"):
        return "csv"
    return "json" if name.endswith((".json", ".jsonl", ".ndjson")) else None


def _format(format: str | None, display: str) -> str | None:
    if format is None:
        return None
    name = _ALIASES.get(format.lower().lstrip("."), format.lower().lstrip("."))
    if name not in FORMATS:
        raise file_error(InputError, display, f"unknown format {format!r} (expected {', '.join(FORMATS)})")
    return name


def _parse(text: str, display: str, forced: str | None) -> tuple[str, Any]:
    """``(format, payload)``: the reader's payload (a document, ``(line, object)`` items or the text)."""
    reader = None if forced in (None, "json") else find_reader(forced or "")
    if reader is not None and reader.shapes == ("text",):
        return reader.name, text
    if forced == "json" and not text.lstrip().startswith(("{", "[")):  # JSON of any kind, detected
        line, raw = next(_nonblank_lazily(text))
        load_json(raw, display, line)  # raises the decoder's message for this line
    if starts_json_array(text):
        return _array(json_array_items(text, display), display, reader)
    if not text.lstrip().startswith("{"):
        if reader is not None:
            raise file_error(InputError, display, f"does not start with a JSON object or array: not {forced}")
        return _detect(("text",), text[:TEXT_HEAD]).name, text
    lines = _nonblank_lazily(text)
    first_line, first_raw = next(lines)
    try:
        first = decode_json(first_raw)
    except json.JSONDecodeError:
        _refuse_cr_lines(first_raw, display, first_line)
        doc = load_json(text, display)  # one document over several lines (errors name its line)
        return _document_kind(doc, display, reader), doc
    except (RecursionError, ValueError):
        first = load_json(first_raw, display, first_line)  # raises the limit's one-line error
    second = next(lines, None)
    shapes: tuple[Shape, ...] = ("document", "lines") if second is None else ("lines",)
    if reader is None:
        reader = _detect(shapes, first)
    elif "lines" not in reader.shapes:
        _document_kind(first if second is None else None, display, reader)  # raises unless a document
    if "lines" not in reader.shapes:
        return reader.name, first
    return reader.name, _items([(first_line, first)], second, lines, display)


def _detect(shapes: tuple[Shape, ...], sample: Any) -> ResultReader:
    """The first registered reader of one of ``shapes`` whose detector accepts ``sample``."""
    found = next((r for r in readers_for(shapes) if r.detect(sample)), None)
    assert found is not None  # the catch-all readers accept every shape
    return found


def _array(items: Iterator[tuple[int, Any]], display: str, forced: ResultReader | None) -> tuple[str, Any]:
    """The reader of a JSON array (detected from its first item) and its items."""
    if forced is not None and "array" not in forced.shapes:
        raise file_error(InputError, display, f"is a JSON array, not {forced.name}")
    first = next(items, None)
    if first is None:
        return forced.name if forced else "jsonl", iter(())
    reader = forced or _detect(("array",), first[1])
    return reader.name, itertools.chain([first], items)


def _nonblank_lazily(text: str) -> Iterator[tuple[int, str]]:
    """:func:`~ablation.sources.text.nonblank_lines`, one line at a time, with no copy of the text nor a list of
    its lines (as fast): detection reads one or two lines, a reader that takes its columns from
    the whole text none of the others, and the row path stops at the row it refuses (an id past
    the limit in a file's last line costs that line, not the file again)."""
    start, number, size = 0, 1, len(text)
    while start <= size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        line = text[start:end].rstrip("\r")
        if line.strip():
            yield number, line
        start, number = end + 1, number + 1


def _document_kind(doc: Any, display: str, forced: ResultReader | None) -> str:
    """The format of one JSON document: ``single`` for a plain row."""
    if forced is not None:
        if doc is None or "document" not in forced.shapes or not forced.detect(doc):
            raise file_error(InputError, display, f"is not a document of the {forced.name!r} format")
        reader = forced
    else:
        reader = _detect(("document",), doc)
    return "single" if reader.name == "jsonl" else reader.name


def _items(
    parsed: list[tuple[int, Any]],
    second: tuple[int, str] | None,
    lines: Iterator[tuple[int, str]],
    display: str,
) -> Iterator[tuple[int, Any]]:
    yield from parsed
    for line, raw in itertools.chain([] if second is None else [second], lines):
        try:
            obj = load_json(raw, display, line)
        except InputError:
            _refuse_cr_lines(raw, display, line)
            raise
        yield line, obj


def _refuse_cr_lines(raw: str, display: str, line: int) -> None:
    """Name CR-only line endings when a line that is not JSON holds a bare ``\\r`` after a JSON
    value: JSON lines end in ``\\n`` (``\\r\\n`` allowed, jsonlines.org), so objects cut by a bare
    ``\\r`` read as one malformed line, whose decoder error ("Extra data") hides the cause. Asked
    only after a line failed to decode (one line's check; a JSON document over ``\\r`` lines is
    read, ``\\r`` being JSON whitespace)."""
    end = raw.find("\r")
    try:
        if end < 0:
            return
        decode_json(raw[:end])
    except (ValueError, RecursionError):
        return
    raise file_error(InputError, display, "its lines end in a bare carriage return (CR-only line endings, \\r): "
                     "JSON lines end in \\n or \\r\\n; convert the line ends (tr '\\r' '\\n')", line=line)  # fmt: skip
