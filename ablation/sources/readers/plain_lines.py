"""Plain verdict JSON lines read without a ``TaskResult`` per row: by layout, or by one decode.

A result file written by a script is usually one layout repeated: every line is
``{"id": "task-0001", "passed": true}`` with the same spacing, only the id and the verdict
changing. :func:`verdict_lines` takes the layout from the first line and then checks every line
against it with array operations on the file's bytes, instead of decoding a million small JSON
objects (``json.loads`` builds one ``dict`` per row, and the cyclic garbage collector walks them).

A line is accepted only if it is exactly ``PREFIX + ID + SUFFIX`` where ``PREFIX`` is the first
line's text up to the id's opening quote and ``SUFFIX`` the first line's text after the id's
closing quote, with the verdict ``true`` or ``false`` in it; and the id is a JSON string holding more
than whitespace (``str.strip``'s), written without escapes (no ``"``, no ``\\``, no control character anywhere in the file). Such a line
is a JSON object with exactly the two members, and the id's bytes are the decoded string, so the
result equals what :func:`json.loads` gives for each line. Anything else (a blank line, CRLF line
ends, another spacing, another key order, an integer id, an escape, a third member...) returns
``None``, and the caller falls back to a path that decodes each value (and names the line of an
error).

Plain rows in other layouts (a run member, an integer id, other spacing) are decoded by
:func:`json_verdict_lines`: one ``json.loads`` of the lines joined into an array, when the first
line names exactly the id, the verdict and the run; a member written twice in one object is
caught by counting colons (each member written has one outside strings), or, when an id holds a
colon, by decoding again with :func:`~ablation.strict_json.decode_json`.

Assumption: ``text`` is the decoded file (valid Unicode; a byte-order mark already removed).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.schema import RUN_LIMIT, TASK_ID_LIMIT
from ablation.strict_json import decode_json

__all__ = ["json_verdict_lines", "verdict_lines"]

# Two objects on one line ("}, {"): the joined-array parse could not map items to lines.
_TWO_OBJECTS = re.compile(r"\}[ \t\r]*,[ \t\r]*\{")
# A surrogate escape ("\ud800"): a lone one decodes to a text the row path escapes (safe_text).
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")

_BLANK = r" *"
_ID = r'([^"\\\x00-\x1f]+)'


def _layout(first: str, key: str, field: str) -> tuple[bytes, bytes, bytes] | None:
    """``(prefix, suffix if true, suffix if false)`` of the first line, or ``None``."""
    if any(c in name for name in (key, field) for c in '"\\') or not (key.isprintable() and field.isprintable()):
        return None
    pattern = (
        rf'(\{{{_BLANK}"{re.escape(key)}"{_BLANK}:{_BLANK}"){_ID}'
        rf'("{_BLANK},{_BLANK}"{re.escape(field)}"{_BLANK}:{_BLANK})(?:true|false)({_BLANK}\}})'
    )
    match = re.fullmatch(pattern, first)
    if match is None:
        return None
    prefix, sep, close = (match.group(i).encode() for i in (1, 3, 4))
    return prefix, sep + b"true" + close, sep + b"false" + close


def verdict_lines(text: str, key: str, field: str) -> tuple[NDArray[np.object_], NDArray[np.bool_]] | None:
    """``(ids, verdicts)`` of JSON lines that all repeat the first line's layout (module docstring).

    Args:
        text: The file's text, each line one object (a final newline is optional).
        key: The id's member name.
        field: The verdict's member name (its values must be JSON ``true``/``false``).

    Returns:
        The ids (an object array of ``str``) and the verdicts in line order, or ``None`` when a
        line is not of the first line's layout.
    """
    if not text or "\\" in text or key == field or _long_line(text):
        return None
    newline = text.find("\n")
    layout = _layout(text if newline < 0 else text[:newline], key, field)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: left to the decoder
        return None
    if layout is None or not data.startswith(layout[0]):
        return None
    prefix, when_true, when_false = layout
    data = data if data.endswith(b"\n") else data + b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    n = len(ends)
    if np.count_nonzero(buf < 32) != n:
        return None  # a control character other than the line ends
    if data.count(b'"') != n * (prefix.count(b'"') + when_true.count(b'"')):
        return None  # each line holds its layout's quotes (checked below), so no id holds one
    if data.count(b"\n" + prefix) != n - 1:
        return None  # every line starts with the prefix ...
    if data.count(when_true + b"\n") + data.count(when_false + b"\n") != n:
        return None  # ... and ends with one suffix ("true" and "false" differ: never both)
    passed = buf[ends - (len(when_true) - when_true.rindex(b"true"))] == ord("t")
    first = np.concatenate(([0], ends[:-1] + 1)) + len(prefix)
    last = ends - np.where(passed, len(when_true), len(when_false))
    if int((last - first).min()) < 1 or int((last - first).max()) > TASK_ID_LIMIT:
        return None  # an empty id, a line too short to hold both the prefix and the suffix, or an id
        # that may be too long (its bytes over the limit on characters): the row path judges them
    ids = _ids(data, buf, first, last)
    lead = buf[first]  # an id of only whitespace starts with a space or a non-ASCII character
    if any(not ids[i].strip() for i in np.flatnonzero((lead == 32) | (lead >= 128)).tolist()):
        return None  # an id of only whitespace: refused by the row path, naming its line
    return ids, passed


def _ids(data: bytes, buf: NDArray[np.uint8], first: NDArray[np.int64], last: NDArray[np.int64]) -> NDArray[np.object_]:
    """The ids ``data[first[i]:last[i]]`` as ``str`` objects.

    Each id is copied with the byte after it (its closing quote) as one row of a
    ``(rows, longest + 1)`` matrix, taken from a sliding-window view of the bytes; the byte after
    each id becomes a newline and the rest of the row NUL (which no id holds: no control character
    is in the file), so that one ``decode`` and one ``split`` make the strings. When the ids differ
    so much in length that the matrix would be large, each is sliced and decoded on its own.
    """
    widths = last - first
    width, n = int(widths.max()), len(first)
    if n * (width + 1) > 4 * len(data):
        pieces = [data[a:b].decode() for a, b in zip(first.tolist(), last.tolist(), strict=True)]
        return np.array(pieces, dtype=object)
    if int(first[-1]) + width + 1 > len(buf):  # the last row would run past the end
        buf = np.concatenate((buf, np.zeros(width + 1, dtype=np.uint8)))
    out = np.lib.stride_tricks.sliding_window_view(buf, width + 1)[first]
    uniform = bool((widths == width).all())
    if uniform:
        out[:, width] = 10
        joined = out.tobytes()
    else:
        out[np.arange(n), widths] = 10
        out[np.arange(width + 1) > widths[:, None]] = 0
        joined = out.tobytes().translate(None, b"\0")
    ids = joined.decode("utf-8").split("\n")
    ids.pop()  # after the last newline
    return np.array(ids, dtype=object)


def json_verdict_lines(
    text: str, key: str, verdict: str, run: str | None
) -> tuple[NDArray[np.object_], NDArray[np.bool_], list[int] | None] | None:
    """``(ids, verdicts, runs)`` of plain rows decoded by one ``json.loads``, or ``None``."""
    end = text.find("\n")
    if not _plain_row(text if end < 0 else text[:end], {key, verdict, run or key}) or _long_line(text):
        return None  # the first line alone shows another member: no need to look further
    body = text[:-1] if text.endswith("\n") else text
    if _TWO_OBJECTS.search(body) or ("\\u" in body and _SURROGATE.search(body)):
        return None  # lines not mapped to items, or an id the row path would escape
    joined = "[" + body.replace("\n", ",") + "]"
    try:  # a blank line makes ",," here: malformed, so it is read row by row
        objs = json.loads(joined)
    except (ValueError, RecursionError):  # malformed, blank line, too deep, huge integer
        return None
    # every object holds exactly the id, the verdict and (when given) the run: their number of
    # keys is that many, and each of them is looked up below (a KeyError means another key)
    width = len({key, verdict, run or key})
    if len(objs) != body.count("\n") + 1 or set(map(type, objs)) != {dict}:
        return None
    if set(map(len, objs)) != {width}:
        return None
    # each member written has a colon outside strings: with no more colons than members kept,
    # none was written twice (json.loads keeps a repeated member's last value without a word)
    if body.count(":") != len(objs) * width and not _no_member_twice(joined):
        return None
    try:
        ids, verdicts = [o[key] for o in objs], [o[verdict] for o in objs]
        runs = _plain_runs([o[run] for o in objs]) if run else None
    except KeyError:
        return None
    task_ids = _plain_ids(ids)
    if task_ids is None or (run and runs is None):
        return None
    if not set(map(type, verdicts)) <= {bool}:
        return None
    return np.array(task_ids, dtype=object), np.array(verdicts, dtype=bool), runs


def _long_line(text: str) -> bool:
    """Whether a block of ``TASK_ID_LIMIT // 2`` characters of ``text`` holds no line end: true
    whenever a line is longer than ``TASK_ID_LIMIT`` (it holds a whole block), so that an id
    past the limit is left to the row path, which names it as soon as its row is read, before
    the whole text is decoded or encoded here; true for a few lines of half that length too
    (read row by row). One ``find`` a block, each stopping at the block's first line end."""
    half = TASK_ID_LIMIT // 2
    return any(text.find("\n", at, at + half) < 0 for at in range(0, len(text) - half + 1, half))


def _plain_row(line: str, members: set[str]) -> bool:
    """Whether ``line`` may be a plain row: one JSON object naming exactly ``members``."""
    try:
        first = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return type(first) is dict and first.keys() == members


def _no_member_twice(text: str) -> bool:
    """Whether :func:`decode_json` accepts ``text`` (a colon in an id makes the count above
    inconclusive)."""
    try:
        decode_json(text)
    except ValueError:
        return False
    return True


def _plain_ids(ids: list[Any]) -> list[str] | None:
    """The ids as text when each is a string holding more than whitespace or an integer, else
    ``None`` (:func:`~ablation.sources.text.blank_id`)."""
    kinds = set(map(type, ids))
    if not kinds <= {str, int}:
        return None
    texts = ids if kinds == {str} else [v for v in ids if type(v) is str]
    if not all(map(str.strip, texts)) or max(map(len, texts), default=0) > TASK_ID_LIMIT:  # an empty id,
        # a blank one (what blank_id refuses), or one too long: refused by the row path, naming its line
        return None
    return ids if kinds == {str} else [v if type(v) is str else str(v) for v in ids]


def _plain_runs(runs: list[Any]) -> list[int] | None:
    """The runs when each is an integer from 0 to ``RUN_LIMIT - 1`` (``TaskResult``'s bounds) or
    absent (run 0), else ``None``."""
    if not set(map(type, runs)) <= {int, type(None)}:
        return None
    out = [0 if r is None else r for r in runs]
    return out if min(out) >= 0 and max(out) < RUN_LIMIT else None
