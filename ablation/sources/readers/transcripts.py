"""What a tool's sample holds beside its verdict, as a trial's fields: texts, errors, usage, messages.

The readers of other tools' files bring everything the file records of a sample: the input, the
output, the target, the error (split into its type and message), the token usage (a
:class:`~ablation.outputs.TrialUsage`, mirrored into the metrics the paired analysis reads) and
the transcript (the trial's ``trace``). This module holds the pieces they share, and the bounds
that keep a trial small whatever the file holds: at most :data:`MAX_MESSAGES` messages, each
part's text cut to :data:`MAX_TEXT` characters, a traceback to its last :data:`MAX_TRACEBACK`.

Before that, each entry of a tool's list of results must be a result: an object
(:func:`entry_object`) with a task id (:func:`entry_id`) and a verdict, the file's own field
names in every message. An entry that is not is refused with one line naming the file, the
entry's JSON path (``results.results[1]``, ``samples[0]``: the tool's own key names, list
positions from 0) and, once known, the task id (:func:`entry_error`):
``FILE: PATH: problem (task id 'X')``, worded as the plain rows' messages are. So is a field the
tool writes as a number, an object or a list that holds another type (:func:`entry_number`,
:func:`entry_mapping`, :func:`entry_list`: a text, a boolean, a number), and a usage count that is not a count
(:func:`usage_count`): absent or null is no value, anything else is never read as none.

A transcript is a list of messages in the layout the drill-down reads (the one pydantic-ai
agents' traces have): ``{"kind": <role>, "parts": [{"kind": "text" | "tool-call" |
"tool-return" | ..., "tool": <tool name>, "content": <text>}]}``, ``tool`` only on tool parts.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ablation.errors import InputError
from ablation.outputs import TrialUsage, usage_metrics
from ablation.schema import safe_text
from ablation.sources.readers.rows import MISSING, UNUSABLE, dotted, json_number
from ablation.sources.text import blank_id, file_error, short_repr

__all__ = [
    "MAX_MESSAGES",
    "MAX_TEXT",
    "MAX_TRACEBACK",
    "chat_trace",
    "clip",
    "clip_tail",
    "count",
    "detail_fields",
    "entry_error",
    "entry_id",
    "entry_list",
    "entry_mapping",
    "entry_number",
    "entry_object",
    "split_error",
    "text_of",
    "usage_count",
    "usage_with_metrics",
]

#: Messages of one sample kept in its trace (the first ones: where the runs diverge).
MAX_MESSAGES = 200
#: Characters of one message part, or of an output or input text, kept.
MAX_TEXT = 2000
#: Characters of a traceback kept (its end, where the exception is).
MAX_TRACEBACK = 8000

# "RuntimeError: message" (pydantic-evals) and "RuntimeError('message')" (Inspect), dotted names too.
_TYPED = re.compile(r"^([A-Za-z_][\w.]*): (.*)\Z", re.DOTALL)
_CALLED = re.compile(r"^([A-Za-z_][\w.]*)\((.*)\)\Z", re.DOTALL)


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, ``...`` marking a cut."""
    return text if len(text) <= limit else text[:limit] + "..."


def clip_tail(text: str, limit: int = MAX_TRACEBACK) -> str:
    """The last ``limit`` characters of ``text``, ``...`` marking a cut."""
    return text if len(text) <= limit else "..." + text[-limit:]


def split_error(text: str) -> tuple[str | None, str]:
    """``(exception type, message)`` of an error text a tool recorded.

    Two spellings are recognised: ``"Type: message"`` (``f"{type(e).__name__}: {e}"``) and
    ``"Type('message')"`` (``repr(e)``, whose single string argument is unquoted); otherwise the
    type is ``None`` and the message is the whole text.
    """
    if match := _TYPED.match(text):
        return match.group(1), match.group(2)
    if match := _CALLED.match(text):
        args = match.group(2)
        try:
            value = ast.literal_eval(args) if args else ""
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = args
        return match.group(1), value if isinstance(value, str) else args
    return None, text


def text_of(content: Any) -> str:
    """The text of a chat message's content: a string, or a list of typed parts (``text`` parts
    joined; others named as ``[type]``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text") if part.get("type") == "text" else part.get("reasoning")
                pieces.append(text if isinstance(text, str) else f"[{part.get('type', '?')}]")
            else:
                pieces.append(str(part))
        return "\n".join(pieces)
    return "" if content is None else json.dumps(content, default=str)


def chat_trace(messages: Any) -> list[dict[str, Any]] | None:
    """A chat transcript (Inspect's ``messages``, OpenAI's chat layout) as a bounded trace.

    Each message keeps its role as ``kind``; its text is one ``text`` part, each entry of
    ``tool_calls`` one ``tool-call`` part (``function`` or ``function.name`` as the tool, the
    arguments as JSON), and a ``tool`` message one ``tool-return`` part. ``None`` when there
    are no messages.
    """
    if not isinstance(messages, list) or not messages:
        return None
    trace = []
    for message in messages[:MAX_MESSAGES]:
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role", "?"))
        text = clip(text_of(message.get("content")))
        parts: list[dict[str, Any]] = []
        if role == "tool":
            tool = message.get("function") or message.get("name")
            parts.append({"kind": "tool-return", "tool": str(tool), "content": text})
        elif text:
            parts.append({"kind": "text", "content": text})
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                parts.append(_tool_call(call))
        trace.append({"kind": role, "parts": parts})
    return trace


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    name = function.get("name") if isinstance(function, Mapping) else function
    args = call.get("arguments", function.get("arguments") if isinstance(function, Mapping) else None)
    content = args if isinstance(args, str) else json.dumps(args, sort_keys=True, default=str)
    return {"kind": "tool-call", "tool": str(name), "content": clip(content)}


def count(names: list[str]) -> dict[str, int]:
    """Occurrences of each name, in first-seen order."""
    out: dict[str, int] = {}
    for name in names:
        out[name] = out.get(name, 0) + 1
    return out


def usage_with_metrics(usage: TrialUsage | None, metrics: dict[str, float]) -> dict[str, float]:
    """``metrics`` with the usage's named numbers (:func:`~ablation.outputs.usage_metrics`) added,
    the given metrics winning: the numbers the paired analysis of a file compares."""
    return metrics if usage is None else {**usage_metrics(usage), **metrics}


def detail_fields(**fields: Any) -> dict[str, Any]:
    """The given trial fields without the ``None`` ones (a row's ``extra``)."""
    return {name: value for name, value in fields.items() if value is not None}


def entry_error(display: str, where: str, problem: str, task_id: Any = None) -> Exception:
    """The :class:`InputError` of the entry at JSON path ``where`` of ``display``, one line:
    ``FILE: WHERE: problem (task id 'X')`` (no id part when ``task_id`` is ``None`` or
    :data:`~ablation.sources.readers.rows.MISSING`)."""
    named = None if task_id is None or task_id is MISSING else safe_text(str(task_id))
    return file_error(InputError, display, f"{where}: {problem}", task_id=named)


def entry_object(entry: Any, display: str, where: str) -> Mapping[str, Any]:
    """``entry`` when it is a JSON object; anything else is refused (:func:`entry_error`)."""
    if not isinstance(entry, Mapping):
        raise entry_error(display, where, f"expected a JSON object, got {type(entry).__name__}")
    return entry


def entry_id(entry: Mapping[str, Any], path: str, display: str, where: str) -> str | int:
    """The task id at dotted ``path`` of ``entry`` (the tool's id field, or ``--key``): a
    non-empty string or an integer. Absent, null, empty, only whitespace or of another type, it is refused
    naming ``path`` (:func:`entry_error`)."""
    raw = dotted(entry, path)
    if raw is MISSING or raw is None or raw == "":
        raise entry_error(display, where, f"no {path!r} field (the task id)")
    if blank_id(raw):
        raise entry_error(display, where, f"{path!r} (the task id) is only whitespace: {short_repr(raw)}")
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        raise entry_error(display, where, f"{path!r} must be a string or an integer, got {short_repr(raw)}")
    return raw


def entry_number(value: Any, name: str, display: str, where: str, task_id: Any) -> float | None:
    """``value``, field ``name`` of the entry at ``where``, that the tool writes as a number: ``None``
    when absent (:data:`~ablation.sources.readers.rows.MISSING`) or null, a JSON number as a float
    (:func:`~ablation.sources.readers.rows.json_number`: a NaN or an infinity is kept, for
    :func:`~ablation.sources.readers.rows.checked_rows` to refuse); any other value is refused
    naming ``name`` (:func:`entry_error`)."""
    if value is MISSING or value is None:
        return None
    if (number := json_number(value)) is None:
        raise entry_error(display, where, f"{name!r} must be a number, got {short_repr(value)}", task_id)
    return number


def entry_mapping(value: Any, name: str, display: str, where: str, task_id: Any) -> Mapping[str, Any] | None:
    """``value``, field ``name`` of the entry at ``where``, that the tool writes as an object:
    ``None`` when absent or null; any other value that is not an object is refused naming
    ``name`` (:func:`entry_error`)."""
    if value is MISSING or value is None:
        return None
    if not isinstance(value, Mapping):
        raise entry_error(display, where, f"{name!r} must be an object, got {short_repr(value)}", task_id)
    return value


def entry_list(value: Any, name: str, display: str, where: str, task_id: Any) -> list[Any] | None:
    """``value``, field ``name`` of the entry at ``where``, that the tool writes as a list: as
    :func:`entry_mapping` does for an object."""
    if value is MISSING or value is None:
        return None
    if not isinstance(value, list):
        raise entry_error(display, where, f"{name!r} must be a list, got {short_repr(value)}", task_id)
    return value


def usage_count(value: Any, name: str, default: int = 0) -> int:
    """A token or request count of a tool's usage record: ``default`` when absent or null, a whole
    JSON number from 0 as an ``int``. Anything else (negative, fractional, not finite, a text)
    raises :class:`ValueError` naming ``name``: a reader builds its usage inside
    :func:`~ablation.sources.readers.rows.named_usage`, which names the file, line and task id
    (the upper bound is :class:`~ablation.outputs.TrialUsage`'s)."""
    if value is MISSING or value is None:
        return default
    number = json_number(value)
    if number is not None and not math.isfinite(number):
        raise ValueError(f"{name!r} {UNUSABLE}: {number!r}")
    if number is None or number < 0 or not number.is_integer():
        raise ValueError(f"{name!r} must be a whole number from 0, got {short_repr(value)}")
    return int(value)
