"""Any Python value as JSON data, and text made encodable as UTF-8.

What crosses a process or disk boundary (a :class:`~ablation.schema.TaskResult`'s output, a
task's input in a fingerprint) is converted by :func:`to_jsonable`, the one conversion used for
that; :func:`safe_text` escapes what UTF-8, SQLite and JSON output cannot hold.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

__all__ = ["safe_text", "to_jsonable"]


def safe_text(text: str) -> str:
    """``text`` made encodable as UTF-8: each lone surrogate becomes the visible escape ``\\udXXX``.

    Python strings may hold lone surrogates (``"\\ud800"``, e.g. decoded from JSON by a command
    agent); UTF-8, SQLite and JSON output cannot. Other strings are returned unchanged.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _bytes_text(data: bytes) -> str:
    """``data`` as text that tells any two byte strings apart: their UTF-8 text when they are valid
    UTF-8, else their ``repr`` (``b'\\xff'``), which names every byte.

    Valid UTF-8 whose text itself reads as a bytes literal (``b'...'`` or ``b"..."``) is given as
    its ``repr`` too, so no byte string's text is another's ``repr``. A ``str`` that reads as a
    bytes literal still looks like those bytes: JSON has no bytes type.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return repr(data)
    if len(text) > 2 and text[0] == "b" and text[1] in "'\"" and text[-1] == text[1]:
        return repr(data)
    return text


def _text_keys(mapping: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    """The mapping's items with text keys: ``str(key)``, or, when two keys read the same as text
    (``1`` and ``"1"``), every key's ``repr`` (``"1"`` and ``"'1'"``), and the item's position
    after it where even those agree, so that no item overwrites another."""
    items = [(safe_text(str(k)), v) for k, v in mapping.items()]
    if len({key for key, _ in items}) == len(items):
        return items
    items = [(safe_text(repr(k)), v) for k, v in mapping.items()]
    if len({key for key, _ in items}) == len(items):
        return items
    return [(f"{key} [{i}]", v) for i, (key, v) in enumerate(items)]


def to_jsonable(
    value: Any, *, _depth: int = 0, on_repr: Callable[[Any], object] | None = None
) -> Any:
    """Convert an agent output (or any value) to JSON data: ``None``, ``bool``, ``int``,
    ``float``, ``str``, ``list`` and ``dict``.

    numpy arrays and scalars become lists and numbers, tuples and sets lists, mappings get string
    keys (their ``repr`` when two keys read the same as text: :func:`_text_keys`), models and
    dataclasses become dicts, bytes their UTF-8 text or, where that would not tell two byte strings
    apart, their ``repr`` (:func:`_bytes_text`), non-finite floats the strings ``"nan"``,
    ``"inf"``, ``"-inf"``, ints of 14,000 bits or more their ``hex`` (no JSON reader takes ~4,300
    digits), strings with lone surrogates are escaped (:func:`safe_text`), anything else is its
    ``repr``: data, never evaluated or unpickled. A ``__repr__`` or ``tolist`` that raises propagates.

    Args:
        value: Any Python value.
        on_repr: Called with every value that falls back to its ``repr`` (to find values with
            no stable representation, see :func:`unstable_task_values`).
    """
    if _depth > 50:
        return safe_text(repr(value))
    if isinstance(value, str):
        return safe_text(value)
    if value is None or isinstance(value, bool | int):
        return value if not isinstance(value, int) or value.bit_length() < 14_000 else hex(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    deeper = functools.partial(to_jsonable, _depth=_depth + 1, on_repr=on_repr)
    if isinstance(value, Mapping):
        return {key: deeper(v) for key, v in _text_keys(value)}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [deeper(v) for v in items]
    if isinstance(value, BaseModel):
        return deeper(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return deeper(dataclasses.asdict(value))
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist) and type(value).__module__.startswith("numpy"):
        return deeper(tolist())
    if isinstance(value, bytes):
        return _bytes_text(value)
    if on_repr is not None:
        on_repr(value)
    return safe_text(repr(value))
