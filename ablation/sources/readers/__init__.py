"""The result-file readers and the one registry that picks one by content.

:data:`FORMATS` names every format ``--from`` accepts. :func:`read_results` reads a file (``-`` is
standard input; gzip is decompressed whatever the name), detects the format from the content
unless ``format`` forces it, and returns :class:`~ablation.schema.TaskResult` objects:

- a zip archive → Inspect ``.eval`` (needs inspect-ai);
- one JSON document (an object, possibly over many lines): Inspect log, pydantic-evals report,
  promptfoo output by their keys, else one plain row;
- a JSON array: plain rows;
- JSON lines: OpenAI evals record (first line ``spec``), lm-eval samples (``doc_id``), else plain
  rows;
- anything else: CSV with a header.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ablation.errors import InputError
from ablation.schema import TaskResult
from ablation.sources.readers import inspect_logs, lm_eval, openai_evals, promptfoo, pydantic_evals
from ablation.sources.readers.generic import csv_items, generic_rows
from ablation.sources.readers.rows import ReadOptions, Row, rows_to_results
from ablation.sources.text import (
    decode_text,
    file_error,
    json_array_items,
    load_json,
    nonblank_lines,
    read_source,
    starts_json_array,
)

__all__ = ["FORMATS", "ReadOptions", "RowRead", "detect_format", "read_results", "read_rows"]

#: Formats ``--from`` accepts.
FORMATS = ("inspect", "pydantic-evals", "lm-eval", "promptfoo", "openai-evals", "jsonl", "csv")
_ALIASES = {"json": "jsonl", "ndjson": "jsonl"}
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Document:
    """A format that is one JSON document."""

    detect: Callable[[Any], bool]
    rows: Callable[[Mapping[str, Any], str, ReadOptions], Iterator[Row]]


_DOCUMENTS = {
    "inspect": _Document(inspect_logs.detect, inspect_logs.rows),
    "pydantic-evals": _Document(pydantic_evals.detect, pydantic_evals.rows),
    "promptfoo": _Document(promptfoo.detect, promptfoo.rows),
}
_LINES = {"openai-evals": (openai_evals.detect, openai_evals.rows), "lm-eval": (lm_eval.detect, lm_eval.rows)}


def read_results(
    source: str, options: ReadOptions, format: str | None = None, display: str | None = None
) -> list[TaskResult]:
    """Read one arm's results from ``source`` (a path or ``-``); see the module docstring."""
    display = display or source
    read = read_rows(source, options, format, display)
    return rows_to_results(read.rows, display, options, **read.check)


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
    compressed, data = _source_bytes(source, display, options.max_bytes)
    if data[:4] == b"PK\x03\x04" or display.lower().endswith((".eval", ".eval.gz")):
        if forced not in (None, "inspect"):
            raise file_error(InputError, display, f"is a zip archive, not {forced}")
        inspect_logs.check_eval_archive(data, display, options.max_bytes)
        own = not compressed and source != "-"
        doc = inspect_logs.read_eval_archive(source, display, None if own else data)
        return _opened(inspect_logs.rows(doc, display, options), display, options, "inspect")
    text = decode_text(data, display)
    if not text or text.isspace():  # (``strip`` would copy a large text)
        raise file_error(InputError, display, "empty file: no results")
    kind, payload = _parse(text, display, forced or _extension_hint(display))
    if kind == "csv":
        required = tuple(p for p in (options.key or "id", options.field or "passed", options.run_field) if p)
        rows = generic_rows(csv_items(text, display, required), display, options, csv_cells=True)
        return _opened(rows, display, options, kind)
    if kind in _DOCUMENTS:
        return _opened(_DOCUMENTS[kind].rows(payload, display, options), display, options, kind)
    if kind in _LINES:
        return _opened(_LINES[kind][1](payload, display, options), display, options, kind)
    items = iter([(1, payload)]) if kind == "single" else payload
    read = _opened(generic_rows(items, display, options), display, options, kind)
    if kind == "jsonl" and not starts_json_array(text):
        read.text = text
    return read


def _source_bytes(source: str, display: str, max_bytes: int) -> tuple[bool, bytes]:
    """``(was gzip, bytes)`` of ``source``, decompressed (:func:`~ablation.sources.text.read_source`)."""
    raw = read_source(source, display, max_bytes=max_bytes) if source == "-" else None
    if raw is None:
        from pathlib import Path

        try:
            with Path(source).open("rb") as fh:
                compressed = fh.read(2) == b"\x1f\x8b"
        except OSError:
            compressed = False  # read_source names the problem
        return compressed, read_source(source, display, max_bytes=max_bytes)
    return False, raw


def _opened(rows: Iterator[Row], display: str, options: ReadOptions, kind: str) -> RowRead:
    _log.debug("%s: read as %s (%s)", display, kind, options)
    if kind == "inspect":
        what = f"scorer {options.field!r}" if options.field else "score"
        check = {"what": what, "mapping": inspect_logs.inspect_verdict, "unit": "sample"}
        return RowRead(rows, kind, check)
    return RowRead(rows, kind, {"unit": "sample" if kind in _DOCUMENTS else "line"})


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
    """``(format, payload)``: a document, or an iterator/list of ``(line, object)``."""
    if forced == "csv":
        return "csv", None
    if forced == "json":  # an extension, not a format: JSON of any kind, detected
        forced = None
        if not text.lstrip().startswith(("{", "[")):
            line, raw = next(nonblank_lines(text))
            load_json(raw, display, line)  # raises the decoder's message for this line
    if starts_json_array(text):
        return forced or "jsonl", json_array_items(text, display)
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        if forced not in (None, "csv"):
            raise file_error(InputError, display, f"does not start with a JSON object or array: not {forced}")
        return "csv", None
    lines = _nonblank_lazily(text)
    first_line, first_raw = next(lines)
    try:
        first = json.loads(first_raw)
    except json.JSONDecodeError:
        doc = load_json(text, display)  # one document over several lines (errors name its line)
        return _document_kind(doc, display, forced), doc
    except (RecursionError, ValueError):
        first = load_json(first_raw, display, first_line)  # raises the limit's one-line error
    second = next(lines, None)
    if second is None:
        kind = _document_kind(first, display, forced)
        if kind in _DOCUMENTS:
            return kind, first
    kind = forced or next((name for name, (detect, _) in _LINES.items() if detect(first)), "jsonl")
    return kind, _items([(first_line, first)], second, lines, display)


def _nonblank_lazily(text: str, head: int = 2) -> Iterator[tuple[int, str]]:
    """:func:`nonblank_lines`, finding the first ``head`` lines without splitting the whole text.

    Detection reads one or two lines; a reader that takes its columns from the whole text never
    needs the other million, and splitting them into strings costs more than the detection.
    """
    start, number, found = 0, 1, 0
    while found < head:
        end = text.find("\n", start)
        line = (text[start:] if end < 0 else text[start:end]).rstrip("\r")
        if line.strip():
            found += 1
            yield number, line
        if end < 0:
            return
        start, number = end + 1, number + 1
    for offset, line in nonblank_lines(text[start:]):
        yield number + offset - 1, line


def _document_kind(doc: Any, display: str, forced: str | None) -> str:
    if forced is not None:
        if forced in _DOCUMENTS and not _DOCUMENTS[forced].detect(doc):
            raise file_error(InputError, display, f"is not a {forced} document")
        return forced
    found = next((name for name, reader in _DOCUMENTS.items() if reader.detect(doc)), None)
    return found or "single"


def _items(
    parsed: list[tuple[int, Any]],
    second: tuple[int, str] | None,
    lines: Iterator[tuple[int, str]],
    display: str,
) -> Iterator[tuple[int, Any]]:
    yield from parsed
    if second is not None:
        yield second[0], load_json(second[1], display, second[0])
    for line, raw in lines:
        yield line, load_json(raw, display, line)
