"""Plain JSON-lines and CSV result files read column-wise by pyarrow, when it is installed.

The row path (:mod:`~ablation.sources.readers.generic`, :func:`~ablation.sources.readers.rows.checked_rows`)
decodes each row into Python objects and checks it, naming the file, line and task id of an
error. pyarrow's JSON and CSV readers (C++, multi-threaded, maintained by the Apache Arrow
project) build the same columns as typed arrays without a Python object per row (figures in
benchmarks/README.md); :func:`engine_columns` uses them whenever it can vouch that the result
is exactly what the row path gives, and returns ``None`` otherwise, so that the caller reads the
file row by row (and so raises the row path's error, at the same line).

It vouches only for a plain local file (not standard input, not gzip, not over ``max_bytes``) of
at least :data:`MIN_BYTES` bytes, read with no ``--where``, whose id, verdict (or, in numeric
mode, numeric field) and run are top-level names, and:

- JSON lines: the content the registry reads as plain ``jsonl`` rows (not an array, not a tool's
  lines) whose first row has a field beyond the id, verdict and run, unless the mode is numeric
  (bare verdict lines are read faster by :mod:`~ablation.sources.readers.columnar`), no blank
  line (so that row ``i`` is line ``i + 1``; a line holding two objects then shows as a count
  mismatch);
- CSV: the content the registry reads as ``csv``, ASCII without quotes, control characters or
  lone carriage returns (so that pyarrow and the :mod:`csv` module cut the same cells, and
  stripping and number matching agree byte for byte), no blank line, a header the row path
  accepts;
- either: no line longer than :data:`~ablation.schema.TASK_ID_LIMIT` bytes, the only lines that
  can hold an id past the limit: the row path refuses such an id as soon as its row is read,
  where pyarrow would parse the whole file first (a few times its size) to find it.

The cells' meaning is checked column-wise by :mod:`~ablation.sources.readers.engine_columns`.
pyarrow is imported only here, and only for a file past the size threshold, so a small file and
a machine without pyarrow take the row path at today's speed.
"""

from __future__ import annotations

import codecs
import importlib.util
import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ablation.process_hooks import large_read_finished
from ablation.schema import TASK_ID_LIMIT
from ablation.sources.readers.registry import TEXT_HEAD, find_reader, readers_for
from ablation.sources.readers.rows import ReadOptions

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ablation.sources.readers.columnar import ColumnRead

__all__ = ["MIN_BYTES", "engine_columns"]

#: Smallest file read by pyarrow: below it, importing pyarrow costs more than the row path
#: saves (benchmarks/README.md, ``bench_columnar.py``).
MIN_BYTES = 4 << 20
_CHUNK = 1 << 20  # at most TASK_ID_LIMIT: only a line across chunks can be longer (_scan)
_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")
_ALIASES = {"json": "jsonl", "ndjson": "jsonl", "jsonl": "jsonl", "csv": "csv"}
#: The registry's logger: a file the engine reads gets the ``read as`` line a row-read file gets.
_log = logging.getLogger("ablation.sources.readers")


def engine_columns(
    source: str, options: ReadOptions, format: str | None, display: str,
    ids_like: NDArray[np.object_] | None = None,
) -> ColumnRead | None:
    """The columns of ``source`` read by pyarrow, or ``None`` to read it row by row (module
    docstring); when its ids are those of ``ids_like``, in order, the columns hold that array."""
    if options.where or source == "-" or not _plain_names(options):
        return None
    try:
        size = os.stat(source).st_size
    except OSError:
        return None  # the row path names the problem
    if not MIN_BYTES <= size <= options.max_bytes or importlib.util.find_spec("pyarrow") is None:
        return None
    path = Path(source)
    kind = _kind(path, format, display, options)
    lines = None if kind is None else _scan(path, kind)
    if kind is None or lines is None:
        return None
    from ablation.sources.readers.engine_columns import read_columns

    try:
        read = read_columns(path, kind, display, options, lines, ids_like)
    finally:
        large_read_finished()  # the parsed table is garbage now (the columns hold copies or views)
    if read is not None:  # (``None``: the row path reads the file, and logs it)
        _log.debug("%s: read as %s by pyarrow (%s)", display, kind, options)
    return read


def _plain_names(options: ReadOptions) -> bool:
    """True when the id, verdict and run are top-level names (no dotted path), all different."""
    names = [options.key or "id", options.field or "passed", *([options.run_field] if options.run_field else [])]
    return len(set(names)) == len(names) and not any("." in name for name in names)


def _head(path: Path) -> tuple[bytes, str] | None:
    """The first bytes of ``path`` and the complete characters they decode to, or ``None``."""
    with path.open("rb") as fh:
        head = fh.read(4 * TEXT_HEAD + 4)
    if head[:2] == b"\x1f\x8b" or head[:4] == b"PK\x03\x04":
        return None  # gzip or zip: the row path decompresses and checks the sizes
    try:
        return head, codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
    except UnicodeDecodeError:
        return None


def _kind(path: Path, format: str | None, display: str, options: ReadOptions) -> str | None:
    """``"jsonl"`` or ``"csv"`` when the registry reads the file as that format, else ``None``."""
    forced = None if format is None else _ALIASES.get(format.lower().lstrip("."), "other")
    if forced == "other" or display.lower().endswith((".eval", ".eval.gz")):
        return None
    name = display.lower()
    hint = "csv" if name.endswith(".csv") else "jsonl" if name.endswith((".json", ".jsonl", ".ndjson")) else None
    opened = _head(path)
    if opened is None:
        return None
    raw, text = opened
    stripped = text.lstrip()
    if (forced or hint) == "csv":
        return "csv" if not raw.startswith(codecs.BOM_UTF8) else None
    if stripped.startswith("{"):
        return "jsonl" if forced != "csv" and _plain_json_lines(text, options) else None
    if stripped.startswith("[") or forced is not None or hint is not None:
        return None
    head = text[:TEXT_HEAD]
    reader = next((r for r in readers_for(("text",)) if r.detect(head)), None)
    return "csv" if reader is find_reader("csv") and not raw.startswith(codecs.BOM_UTF8) else None


def _plain_json_lines(text: str, options: ReadOptions) -> bool:
    """True when the first two lines are objects the registry reads as plain ``jsonl`` rows,
    with a field beyond the id, verdict and run (any fields in numeric mode), and, read as
    verdicts, no number other than 0 or 1 for the first verdict (the row path reads such a file:
    usually a numeric ``--field``, which ``compare`` then reads again as numbers).

    Verdict rows of only those fields are left to :mod:`~ablation.sources.readers.columnar`, whose
    byte-layout path reads them faster than pyarrow (benchmarks/README.md); it has no numeric mode.
    """
    lines = text.split("\n", 2)
    if len(lines) < 2 or not lines[1].strip():
        return False  # one line (a document to some readers), or a blank second line
    try:
        first, second = json.loads(lines[0]), json.loads(lines[1])
    except (ValueError, RecursionError):
        return False
    if not isinstance(first, dict) or not isinstance(second, dict):
        return False
    reader = next((r for r in readers_for(("lines",)) if r.detect(first)), None)
    bare = {options.key or "id", options.field or "passed", options.run_field}
    verdict = first.get(options.field or "passed")
    if not options.numeric and type(verdict) in (int, float) and verdict not in (0, 1):
        return False  # a number for a verdict: the column is refused whatever it holds after
    return reader is find_reader("jsonl") and (options.numeric or not set(first) <= bare)


def _scan(path: Path, kind: str) -> int | None:
    """The number of lines, after one pass over the bytes that finds no blank line, no line of
    more than ``TASK_ID_LIMIT`` bytes (and, in CSV, plain ASCII cells); ``None`` otherwise.
    pyarrow refuses invalid UTF-8 itself."""
    carry = b""
    first, newlines, run = True, 0, 0  # run: the bytes since the last line end
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):  # a line within a chunk is shorter than the limit
            if first and chunk.lstrip(b" \t\r\f\v").startswith(b"\n"):
                return None  # a blank first line
            first = False
            if kind == "csv" and not _plain_csv_bytes(chunk):
                return None
            window = carry + chunk
            if _BLANK_LINE.search(window):
                return None
            end = chunk.find(b"\n")
            if run + (len(chunk) if end < 0 else end) > TASK_ID_LIMIT:
                return None  # a line that may hold an id past the limit
            run = run + len(chunk) if end < 0 else len(chunk) - chunk.rfind(b"\n") - 1
            newlines += chunk.count(b"\n")
            carry = window[window.rfind(b"\n"):] if b"\n" in window else window
    tail = carry[1:] if carry.startswith(b"\n") else carry
    if tail.strip(b" \t\r\f\v") == b"" and tail:
        return None  # a blank last line
    return newlines + (tail != b"")


def _plain_csv_bytes(chunk: bytes) -> bool:
    """ASCII without quotes, control characters other than tab and line ends, or lone ``\\r``."""
    if not chunk.isascii() or b'"' in chunk or chunk.count(b"\r") != chunk.count(b"\r\n"):
        return False
    return not chunk.translate(None, b"\t\r\n" + bytes(range(32, 127)))
