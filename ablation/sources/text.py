"""Line-numbered reading of text files and the one-line error messages of ``ablation.sources``.

Owns what every loader in :mod:`ablation.sources` shares: reading a UTF-8 file strictly
(:func:`read_text`), walking its non-blank lines (:func:`nonblank_lines`) or the items of a JSON
array with their line numbers (:func:`starts_json_array`, :func:`json_array_items`), and building
an error that is one line, ``FILE[:LINE]: problem[ (task id 'X')]`` (:func:`file_error`,
:func:`one_line`, :func:`short_repr`, :func:`exc_text`). Line numbers count from 1; a byte-order
mark is allowed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ablation.errors import InputError

__all__ = [
    "ErrorType",
    "exc_text",
    "file_error",
    "json_array_items",
    "nonblank_lines",
    "one_line",
    "read_text",
    "short_repr",
    "starts_json_array",
]

#: An exception class the loaders raise (``InputError``, ``AgentSpecError``...).
ErrorType = type[Exception]

_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


def file_error(
    cls: ErrorType,
    file: str,
    problem: str,
    *,
    line: int | None = None,
    task_id: str | None = None,
) -> Exception:
    """Build ``cls("FILE[:LINE]: problem[ (task id 'X')]")`` as a single line."""
    where = f"{file}:{line}:" if line is not None else f"{file}:"
    suffix = f" (task id {task_id!r})" if task_id is not None else ""
    return cls(one_line(f"{where} {problem}{suffix}"))


def one_line(text: str) -> str:
    """``text`` with every line break (and the spaces around it) replaced by one space."""
    return _NEWLINES.sub(" ", text)


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def exc_text(exc: BaseException) -> str:
    """``"Type: message"`` of an exception (just ``"Type"`` when the message is empty)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def read_text(path: Path, display: str, cls: ErrorType = InputError) -> str:
    """Read a UTF-8 text file, turning every failure into ``cls`` naming the file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise file_error(cls, display, "no such file") from None
    except IsADirectoryError:
        raise file_error(cls, display, "is a directory, not a file") from None
    except OSError as exc:
        raise file_error(cls, display, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise file_error(cls, display, f"not UTF-8 text ({exc.reason})", line=line) from None


def nonblank_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each line holding more than whitespace (``\\r`` dropped)."""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if line.strip():
            yield number, line


def json_array_items(text: str, display: str) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, item)`` for each item of a JSON array document, with its starting line."""
    decoder = json.JSONDecoder()
    line, counted = 1, 0

    def line_at(pos: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, pos)
        counted = pos
        return line

    def malformed(pos: int, problem: str) -> Exception:
        return file_error(InputError, display, f"malformed JSON ({problem})", line=line_at(pos))

    pos = _skip_ws(text, 0) + 1  # just past "[" (see starts_json_array)
    pos = _skip_ws(text, pos)
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            try:
                value, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise malformed(exc.pos, f"{exc.msg} at column {exc.colno}") from None
            yield line_at(pos), value
            pos = _skip_ws(text, end)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
            elif text.startswith("]", pos):
                pos += 1
                break
            else:
                raise malformed(pos, "expected ',' or ']' after an array item")
    rest = _skip_ws(text, pos)
    if rest != len(text):
        raise malformed(rest, "extra data after the array")


def _skip_ws(text: str, pos: int) -> int:
    """Index of the first non-JSON-whitespace character at or after ``pos``."""
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def starts_json_array(text: str) -> bool:
    """True when the first non-whitespace character of ``text`` is ``[``."""
    return text.startswith("[", _skip_ws(text, 0))
