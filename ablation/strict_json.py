"""The JSON text ablation reads from outside: RFC 8259, nothing left to a decoder's choice.

Python's :mod:`json` decoder reads more than RFC 8259 allows, and settles by itself what the RFC
leaves open. Every JSON text ablation takes from outside (result and suite files, the replies of
command and HTTP agents) is decoded by this module:

- an object that names one member twice is refused (:class:`RepeatedMember`). RFC 8259 section 4
  leaves such an object's meaning to each reader (Python's keeps the last value, others the first
  or refuse), so no value is picked without a word (:func:`decode_json`);
- ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259 section 6), and a number
  past a float's range (``1e400``, which Python reads as an infinity) are refused too by
  :func:`decode_finite`, naming the member they stand at (:class:`NotFiniteNumber`). The rows of
  source files are decoded by :func:`decode_json` alone, whose floats the C decoder parses, and
  check their numbers after decoding, where the error can name the file, line and task id
  (:func:`ablation.sources.readers.rows.checked_rows`);
- the decoder's own limits (nesting deeper than the interpreter's recursion limit, an integer of
  more than ``sys.get_int_max_str_digits()`` digits) are worded once (:func:`json_decoder_limit`).

The errors are internal: each caller raises them again in its own words (a source file's one-line
error naming the file and line; an agent's error naming the agent).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from ablation.errors import AblationError

__all__ = [
    "NotFiniteNumber",
    "RepeatedMember",
    "decode_finite",
    "decode_json",
    "json_decoder_limit",
    "raw_decode",
]


def _short(text: str, limit: int = 80) -> str:
    """``repr(text)`` cut to ``limit`` characters, as the sources' messages cut a value."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


class RepeatedMember(AblationError, ValueError):
    """An object of the JSON text names one member twice (:func:`decode_json`)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def problem(self) -> str:
        """The one-line reason, for an error that names where the text came from."""
        return (
            f"malformed JSON (member {_short(self.name)} given twice in one object: refused, "
            "since JSON readers differ on which value they keep)"
        )


class NotFiniteNumber(AblationError, ValueError):
    """The JSON text holds ``NaN``, an infinity or a number past a float's range
    (:func:`decode_finite`); the message names the number and where it stands."""


def _members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        raise RepeatedMember(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return found


_DECODER = json.JSONDecoder(object_pairs_hook=_members)

#: :func:`json.loads` for one JSON text, refusing an object that names a member twice
#: (:class:`RepeatedMember`); ``raw_decode`` of the same decoder reads one value of a longer text.
decode_json = _DECODER.decode
raw_decode = _DECODER.raw_decode


class _NotFinite:
    """Stands, in a text being decoded, for a number JSON has no value for."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def decode_finite(text: str) -> Any:
    """:func:`decode_json` of ``text``, refusing also every number JSON has no value for.

    Integers are read exactly, as by :func:`json.loads`. Meant for small texts (an agent's reply):
    each float passes through a Python call.

    Raises:
        NotFiniteNumber: ``NaN``, ``Infinity``, ``-Infinity`` or a number past a float's range;
            the message names it and the member or item it stands at (``cost``,
            ``usage.input_tokens``, ``output[2]``), or says it is the whole text.
        RepeatedMember: An object names a member twice.
        json.JSONDecodeError, RecursionError, ValueError: As :func:`json.loads` (the last two:
            :func:`json_decoder_limit`).
    """
    found: list[_NotFinite] = []

    def constant(literal: str) -> _NotFinite:
        found.append(_NotFinite(literal))
        return found[-1]

    def number(literal: str) -> float | _NotFinite:
        value = float(literal)
        return value if math.isfinite(value) else constant(literal)

    decoder = json.JSONDecoder(
        object_pairs_hook=_members, parse_constant=constant, parse_float=number
    )
    value = decoder.decode(text)
    if not found:
        return value
    first = found[0]
    path = _member(value, first)
    noun = "item" if path and path[0] == "[" and path[:2] != '["' else "member"
    where = f"at {noun} {path}" if path else "as the whole text"
    if first.text.lstrip("-") in ("NaN", "Infinity"):
        raise NotFiniteNumber(f"{first.text} {where}: JSON (RFC 8259) has no NaN or infinity")
    literal = first.text if len(first.text) <= 40 else first.text[:37] + "..."
    raise NotFiniteNumber(
        f"{literal} {where}: past a float's range, it would read as infinity, which JSON has no number for"
    )


def _member(value: Any, target: object) -> str:
    """Where ``target`` stands in ``value``: ``""`` for ``value`` itself, else names and indices
    (``usage.input_tokens``, ``output[2]``, ``output["a b"]``), cut to 120 characters. Walks
    without recursing; ``target`` is in ``value`` (no member is named twice)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, keys = stack.pop()
        if item is target:
            text = "".join(
                f"[{k}]" if isinstance(k, int)
                else ("." if i else "") + k if k.isidentifier()
                else f"[{json.dumps(k, ensure_ascii=False)}]"
                for i, k in enumerate(keys)
            )  # fmt: skip
            return text if len(text) <= 120 else text[:117] + "..."
        if isinstance(item, dict):
            stack.extend((child, (*keys, key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, (*keys, index)) for index, child in enumerate(item))
    raise AssertionError("unreachable: every placeholder is in the decoded value")


def json_decoder_limit(exc: RecursionError | ValueError) -> str:
    """Why the standard JSON decoder refused a text it would otherwise read, in a few words.

    :func:`json.loads` raises a bare :class:`RecursionError` for nesting deeper than the
    interpreter's recursion limit (``sys.getrecursionlimit()``) and a plain :class:`ValueError`
    for an integer of more than ``sys.get_int_max_str_digits()`` digits. Assumes the caller
    caught :class:`json.JSONDecodeError` (and :class:`UnicodeDecodeError`), :class:`RepeatedMember`
    and :class:`NotFiniteNumber`, all ``ValueError`` s, first: any other ``ValueError`` is taken
    for the digit limit.
    """
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    return f"JSON number too large (an integer over {sys.get_int_max_str_digits()} digits)"
