"""Line-numbered reading of text files and the one-line error messages of ``ablation.sources``.

Owns what every loader in :mod:`ablation.sources` shares: reading a UTF-8 file strictly
(:func:`read_text`), walking its non-blank lines (:func:`nonblank_lines`) or the items of a JSON
array with their line numbers (:func:`starts_json_array`, :func:`json_array_items`), decoding JSON
that names no member twice in one object (:func:`load_json`, by
:func:`ablation.strict_json.decode_json`), the lines of an
open binary file one at a time (:func:`bounded_lines`), and building an error that is one line,
``FILE[:LINE]: problem[ (task id 'X')]`` (:func:`file_error`, :func:`one_line`, :func:`short_repr`,
:func:`exc_text`), and what no loader takes as a task id (:func:`blank_id`). Line numbers count
from 1; a byte-order mark is allowed. Every read is bounded (:data:`MAX_BYTES` unless raised) and
proceeds a chunk at a time, so neither a large limit nor an endless source (``/dev/zero``) can
take more memory than the limit.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ablation.errors import InputError
from ablation.strict_json import RepeatedMember, decode_json, json_decoder_limit, raw_decode

__all__ = [
    "MAX_BYTES",
    "MAX_JSON_DEPTH",
    "ErrorType",
    "blank_id",
    "bounded_lines",
    "compressed_kind",
    "decode_text",
    "exc_text",
    "file_error",
    "json_array_items",
    "load_json",
    "nested_too_deep",
    "nonblank_lines",
    "one_line",
    "read_source",
    "read_text",
    "short_repr",
    "starts_json_array",
]

#: An exception class the loaders raise (``InputError``, ``AgentSpecError``...).
ErrorType = type[Exception]

_NEWLINES = re.compile(r"\s*[\r\n]+\s*")

#: Largest result file read, after gzip decompression, unless raised (``--max-input-bytes``).
MAX_BYTES = 256 << 20
#: Past :data:`_RATIO_AFTER` bytes of output, a gzip stream that expands more than this many times
#: is refused as a decompression bomb (text logs compress 5 to 50 times; a bomb about 1000).
MAX_RATIO = 250
_RATIO_AFTER = 32 << 20
#: Deepest nesting of lists and objects accepted in one field of a JSONL suite line or a result
#: row: the checks and conversions after reading recurse, and must stay far from the
#: interpreter's recursion limit (1000 frames) however deep the call stack is by then.
MAX_JSON_DEPTH = 100
_STEP = 1 << 20
_GZIP = b"\x1f\x8b"
#: Bytes asked of a file, a pipe or standard input at a time: a limit reserves no memory itself.
_CHUNK = 8 << 20


def file_error(
    cls: ErrorType,
    file: str,
    problem: str,
    *,
    line: int | None = None,
    task_id: str | None = None,
) -> Exception:
    """Build ``cls("FILE[:LINE]: problem[ (task id 'X')]")`` as a single line (the id cut to 80
    characters by :func:`short_repr`; ``problem`` is the caller's to keep short)."""
    where = f"{file}:{line}:" if line is not None else f"{file}:"
    suffix = f" (task id {short_repr(task_id)})" if task_id is not None else ""
    return cls(one_line(f"{where} {problem}{suffix}"))


def blank_id(raw: Any) -> bool:
    """True for an id that is text holding nothing but whitespace (``str.strip``'s, Unicode
    spaces included): it names no task, as a blank CSV cell names none."""
    return isinstance(raw, str) and raw != "" and not raw.strip()


def one_line(text: str) -> str:
    """``text`` with every line break (and the spaces around it) replaced by one space."""
    return _NEWLINES.sub(" ", text)


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a placeholder for a value too deep to repr)."""
    if nested_too_deep(value):
        return f"<nested more than {MAX_JSON_DEPTH} levels deep>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def exc_text(exc: BaseException) -> str:
    """``"Type: message"`` of an exception (just ``"Type"`` when the message is empty)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def read_text(path: Path, display: str, cls: ErrorType = InputError, max_bytes: int = MAX_BYTES) -> str:
    """Read a UTF-8 text file of at most ``max_bytes`` bytes, turning every failure (a larger file
    or an endless one, such as ``/dev/zero``, included) into ``cls`` naming the file. A regular
    file whose size says it is larger is refused before a byte is read."""
    with _opened(path, display, cls) as fh:
        large = _size(fh) > max_bytes  # refused unread
        data = b"" if large else _read_upto(fh, max_bytes + 1)
    if large or len(data) > max_bytes:
        raise file_error(cls, display, f"larger than {max_bytes} bytes: not read")
    return decode_text(data, display, cls)


@contextlib.contextmanager
def _opened(path: Path, display: str, cls: ErrorType) -> Iterator[BinaryIO]:
    """``path`` open for reading, a failure to open or read it raised as ``cls`` naming it."""
    try:
        with path.open("rb") as fh:
            yield fh
    except OSError as exc:
        known = {FileNotFoundError: "no such file", IsADirectoryError: "is a directory, not a file"}
        raise file_error(cls, display, known.get(type(exc), f"cannot read the file: {exc.strerror or exc}")) from None


def _size(fh: BinaryIO) -> int:
    """The size of an open regular file, ``-1`` for a pipe or a device (only reading tells)."""
    info = os.fstat(fh.fileno())
    return info.st_size if stat.S_ISREG(info.st_mode) else -1


def _read_upto(fh: BinaryIO, limit: int, head: bytes = b"") -> bytes:
    """``head`` and then the bytes of ``fh``, ``limit`` in all (fewer when ``fh`` ends), asked for
    :data:`_CHUNK` bytes at a time, so memory follows what was read, never ``limit``. Assumes
    CPython's ``BytesIO``, whose ``getvalue`` hands over its buffer without a copy (so the peak is
    about the bytes read) and whose growth reallocates in place (``mremap``) at these sizes."""
    out = io.BytesIO()
    out.write(head)
    total = len(head)
    while total < limit:
        chunk = fh.read(min(_CHUNK, limit - total))
        if not chunk:
            break
        out.write(chunk)
        total += len(chunk)
    return out.getvalue()


def bounded_lines(
    handle: BinaryIO, display: str, cls: ErrorType = InputError, max_bytes: int = MAX_BYTES
) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of each line of an open binary file, its line break kept.

    A line is read :data:`_CHUNK` bytes at a time; one longer than ``max_bytes`` (a file with no
    line break, such as ``/dev/zero``) is an error naming the file, the line and the limit, raised
    before more of it is read. The file as a whole is not bounded: it is never held.
    """
    too_long = f"line longer than {max_bytes} bytes: not read"
    for number in itertools.count(1):
        want = min(_CHUNK, max_bytes + 1)
        piece = handle.readline(want)
        if not piece:
            return
        if len(piece) <= max_bytes and (len(piece) < want or piece.endswith(b"\n")):
            yield number, piece  # the whole line (the last may lack its line break)
            continue
        line, size = io.BytesIO(), 0
        while piece:  # ``readline(want)`` returns fewer bytes only at a line break or the end
            line.write(piece)
            size += len(piece)
            if size > max_bytes:
                raise file_error(cls, display, too_long, line=number)
            if len(piece) < want or piece.endswith(b"\n"):
                break
            want = min(_CHUNK, max_bytes + 1 - size)
            piece = handle.readline(want)
        yield number, line.getvalue()


def read_source(
    path: str | Path, display: str, cls: ErrorType = InputError, max_bytes: int = MAX_BYTES
) -> tuple[bool, bytes]:
    """``(was gzip, bytes)`` of a result source: a file, ``-`` (standard input), gzip decompressed.

    Read once, so a pipe (``<(gunzip -c a.gz)``, a FIFO) reads as a file does; gzip (known by its
    magic bytes) is decompressed as it is read (:func:`_inflate`). More than ``max_bytes`` is an
    error, not a hang, found before more is read (a regular file that is not gzip: by its size,
    unread). Another compressed format (:func:`compressed_kind`: bzip2, xz, zstd, or gzip inside
    the gzip) is an error naming it, not a text refused as "not UTF-8".
    """
    stdin = str(path) == "-"
    with contextlib.nullcontext(sys.stdin.buffer) if stdin else _opened(Path(path), display, cls) as fh:
        head = _read_upto(fh, 2)
        if not stdin and head != _GZIP and _size(fh) > max_bytes:  # refused unread
            raise file_error(cls, display, _too_large(max_bytes))
        compressed = head == _GZIP
        data = _inflate(fh, head, display, cls, max_bytes) if compressed else _read_upto(fh, max_bytes + 1, head)
    if len(data) > max_bytes:
        raise file_error(cls, display, _too_large(max_bytes))
    if (kind := compressed_kind(data)) is not None:
        problem = (f"holds {kind}-compressed data inside its gzip data: one layer is decompressed"
                   if compressed else f"holds {kind}-compressed data: only gzip is decompressed")  # fmt: skip
        raise file_error(cls, display, f"{problem}; decompress it first (or pipe it to '-')")
    return compressed, data


#: The magic bytes of the compressed formats :func:`read_source` names instead of decoding them
#: as text. None of them starts a UTF-8 text (bzip2's ``BZh`` is followed by a block size and
#: the block magic ``1AY&SY``, the digits of pi in BCD, or the end-of-stream magic of an empty one).
_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
_BZIP2 = re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)")


def compressed_kind(data: bytes) -> str | None:
    """The compressed format ``data`` starts with (``gzip``, ``bzip2``, ``xz`` or ``zstd``),
    or ``None``: bytes the readers would otherwise decode as text and refuse as "not UTF-8" at
    line 1, which names neither the cause nor the remedy."""
    if _BZIP2.match(data, 0, 10):
        return "bzip2"
    return next((name for magic, name in _COMPRESSED if data.startswith(magic)), None)


def _too_large(max_bytes: int) -> str:
    return f"larger than {max_bytes} bytes: not read (raise the limit with --max-input-bytes)"


def gunzip(data: bytes, display: str, cls: ErrorType = InputError, max_bytes: int = MAX_BYTES) -> bytes:
    """Decompress gzip ``data`` (members one after another) to at most ``max_bytes`` (:func:`_inflate`)."""
    return _inflate(io.BytesIO(data), b"", display, cls, max_bytes)


def _inflate(fh: BinaryIO, head: bytes, display: str, cls: ErrorType, max_bytes: int) -> bytes:
    """The gzip members of ``head`` and the rest of ``fh``, read and decompressed :data:`_STEP`
    bytes at a time into one buffer (the peak: the output and two steps). Refused (``cls``): past
    ``max_bytes`` of output or of gzip data, a ratio over :data:`MAX_RATIO` past 32 MiB of output
    (a bomb), corrupt or truncated data, bytes after the last member that are not zero padding."""
    out, taken = io.BytesIO(), len(head)

    def more() -> bytes:
        nonlocal taken
        chunk = fh.read(min(_STEP, max_bytes + 1 - taken))
        taken += len(chunk)
        if taken > max_bytes:
            raise file_error(cls, display, _too_large(max_bytes) + " (its gzip data alone)")
        return chunk

    rest, first = head, True
    while True:  # one gzip member at a time
        rest += more() if len(rest) < 2 else b""
        if not first and rest[:2] != _GZIP:
            break
        member, feed, first = zlib.decompressobj(wbits=31), rest, False
        try:
            while not member.eof:
                chunk = member.decompress(feed, _STEP)
                feed = member.unconsumed_tail
                if chunk:
                    out.write(chunk)
                    _check_growth(out.tell(), taken - len(feed) - len(member.unused_data), display, cls, max_bytes)
                elif not feed and not (feed := more()):
                    break  # the input ended inside the stream
        except zlib.error as exc:
            raise file_error(cls, display, f"corrupt gzip data ({exc})") from None
        if not member.eof:
            raise file_error(cls, display, "truncated gzip data (the compressed stream ends early)")
        rest = member.unused_data
    trailing, garbage = 0, False
    while rest:  # trailing zero padding is allowed, as by gzip itself
        trailing, garbage = trailing + len(rest), garbage or bool(rest.strip(b"\0"))
        rest = more()
    if garbage:
        raise file_error(cls, display, f"{trailing} bytes after the gzip data are neither gzip data nor zero "
                         "padding: refused, not dropped (gzip -d ignores them as trailing garbage)")  # fmt: skip
    return out.getvalue()


def _check_growth(produced: int, consumed: int, display: str, cls: ErrorType, max_bytes: int) -> None:
    if produced > max_bytes:
        raise file_error(cls, display, _too_large(max_bytes) + " after gzip decompression")
    if produced > _RATIO_AFTER and produced > MAX_RATIO * max(consumed, 1):
        raise file_error(cls, display, f"gzip data expands more than {MAX_RATIO} times ({consumed} bytes "
                         f"gave {produced}): refused as a decompression bomb")  # fmt: skip


def load_json(raw: str, display: str, line: int | None = None, cls: ErrorType = InputError) -> Any:
    """:func:`decode_json` of ``raw`` with one-line errors naming the file and line.

    Besides malformed JSON and a member named twice in one object, the limits of the standard
    decoder (:func:`~ablation.strict_json.json_decoder_limit`: nesting, integer digits) become clear
    errors instead of a crash.
    """
    try:
        return decode_json(raw)
    except RepeatedMember as exc:
        raise file_error(cls, display, exc.problem(), line=line) from None
    except json.JSONDecodeError as exc:
        where = exc.lineno - 1 + (line or 1)
        raise file_error(
            cls, display, f"malformed JSON ({exc.msg} at column {exc.colno})", line=where
        ) from None
    except (RecursionError, ValueError) as exc:  # the decoder's limits
        raise file_error(cls, display, json_decoder_limit(exc), line=line) from None


def nested_too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` nests lists, tuples or dicts more than ``limit`` levels deep (``[]`` is
    one level, a scalar none). Walks the value without recursing, so any depth is safe to ask."""
    stack = [(value, 1)] if isinstance(value, _NESTED) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, _NESTED))
    return False


_NESTED = (dict, list, tuple)


def decode_text(data: bytes, display: str, cls: ErrorType = InputError) -> str:
    """``data`` decoded as UTF-8 (a byte-order mark allowed); an error names the line."""
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
                value, end = raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise malformed(exc.pos, f"{exc.msg} at column {exc.colno}") from None
            except RepeatedMember as exc:
                raise file_error(InputError, display, exc.problem(), line=line_at(pos)) from None
            except (RecursionError, ValueError) as exc:  # the decoder's limits
                raise file_error(InputError, display, json_decoder_limit(exc), line=line_at(pos)) from None
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
