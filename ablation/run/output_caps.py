"""Bounds on what a trial keeps from its agent: the output and the text of an error.

A Python agent can return a 1 GiB string or raise with one. Kept whole, such a value costs
several copies of itself in memory (conversion, escaping, the trial's JSON) and then a store
write SQLite refuses ("string or blob too big"), which fails the batch and every later resume.
So, before anything is stored:

- an output larger than the campaign's ``max_output_bytes`` is the trial's error,
  :class:`OutputTooLarge`, and so is a trace (or the metrics and usage names) of an
  :class:`~ablation.schema.AgentOutput` larger than that. Its size is counted before it is converted (and again after, for
  objects that convert to more): the characters of its strings, the bytes of its ``bytes`` and
  arrays (``nbytes``), 8 per other value, stopping as soon as the cap is passed;
- an error message, traceback or attempt error is cut to :data:`ERROR_TEXT_LIMIT` characters,
  saying how much was cut, without formatting the whole message first.

Assumptions: a string's size in characters is a lower bound of its UTF-8 size, so the count
never lets through an output whose text alone passes the cap; the cap applies to Python agents
(command and HTTP agents cap their own stream with the same number).
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

from ablation.errors import AblationError, exception_message
from ablation.run.plain_output import plain_output
from ablation.schema import AgentOutput, safe_text

__all__ = [
    "ERROR_TEXT_LIMIT", "OutputTooLarge", "bounded_text", "exception_texts", "jsonable_extras", "jsonable_output",
]

#: Most characters kept of an error message or traceback.
ERROR_TEXT_LIMIT = 64 * 1024
_SCALAR = 8
#: Outputs counted as one scalar, whose plain form is themselves unless it is text (a NaN's
#: ``"nan"``, a huge int's ``hex``): no walk over them.
_SCALARS = frozenset({int, float, bool, type(None)})


#: :class:`BaseException`'s own ``__cause__``, ``__context__`` and ``__traceback__`` readers,
#: which a subclass's property of the same name does not replace.
_CAUSE = BaseException.__dict__["__cause__"].__get__
_CONTEXT = BaseException.__dict__["__context__"].__get__
_TRACEBACK = BaseException.__dict__["__traceback__"].__get__


class OutputTooLarge(AblationError):
    """An agent's output is larger than ``max_output_bytes`` (the trial's error)."""


def _size_over(value: Any, cap: int) -> int | None:
    """The counted size of ``value`` once it passes ``cap``, or ``None`` if it stays within."""
    total = 0
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, str | bytes | bytearray | memoryview):
            total += len(item)
        elif isinstance(item, Mapping | list | tuple | set | frozenset):
            if id(item) in seen:
                continue
            seen.add(id(item))
            total += _SCALAR
            if isinstance(item, Mapping):
                for key, sub in item.items():
                    stack += (key, sub)
            else:
                stack.extend(item)
        else:
            nbytes = getattr(item, "nbytes", None)
            total += nbytes if isinstance(nbytes, int) and not isinstance(nbytes, bool) else _SCALAR
        if total > cap:
            return total
    return None


def jsonable_output(value: Any, cap: int, what: str = "output") -> Any:
    """``plain_output(value)`` (its JSON form), refused when either form is larger than ``cap``
    bytes.

    Args:
        value: What the agent returned.
        cap: ``max_output_bytes``.
        what: What ``value`` is, for the error (``"output"``, ``"trace"``).

    Raises:
        OutputTooLarge: naming the cap (the trial's error).
        UnrepresentableOutput: a value with no JSON form (:mod:`ablation.run.plain_output`).
        RecursionError: a value nested too deep to convert (the trial's error too).
    """
    if type(value) in _SCALARS and cap >= _SCALAR:
        plain = plain_output(value)
        if type(plain) is type(value):  # the same scalar: 8 counted before and after
            return plain
    for form in ("before", "after"):
        size = _size_over(value, cap)
        if size is not None:
            raise OutputTooLarge(
                f"the agent's {what} is larger than max_output_bytes={cap} (more than {size} "
                "counted); raise --max-output-bytes to keep it"
            )
        if form == "before":
            value = plain_output(value)
    return value


def jsonable_extras(out: AgentOutput, cap: int) -> Any:
    """The plain form of what an :class:`AgentOutput` carries beside its output, bounded as the
    output is: its ``trace`` (:func:`jsonable_output`), returned; its ``metrics`` and its usage's
    tool names and model, counted against ``cap`` together.

    Raises:
        OutputTooLarge: the trace, or the metrics and usage, are larger than ``cap``.
        UnrepresentableOutput, RecursionError: a trace with no JSON form, or nested too deep.
    """
    usage = out.usage
    named = (out.metrics, usage.tool_calls, usage.model) if usage is not None else out.metrics
    if (size := _size_over(named, cap)) is not None:
        raise OutputTooLarge(
            f"the agent's metrics and usage are larger than max_output_bytes={cap} (more than "
            f"{size} counted)"
        )
    return None if out.trace is None else jsonable_output(out.trace, cap, "trace")


def bounded_text(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut; surrogates escaped."""
    if len(text) <= limit:
        return safe_text(text)
    return safe_text(text[:limit]) + f"... [{len(text) - limit} more characters cut]"


def exception_texts(exc: BaseException) -> tuple[str, str]:
    """``(message, traceback)`` of ``exc``, each at most about :data:`ERROR_TEXT_LIMIT` characters.

    When a message in the exception's chain is longer than the limit, the traceback is its
    frames plus the cut message of ``exc`` (the chain is left out), so no text longer than the
    limit is ever formatted. User code's exceptions may define ``__eq__``, ``__bool__``,
    ``__class__``, ``__notes__`` or even ``__cause__`` to raise: the chain is walked by identity
    and ``is None`` tests, through :class:`BaseException`'s own attributes, and when :mod:`traceback` (which tests an exception's truth and reads those
    attributes) raises, the traceback is the frames and the message, saying why.
    """
    message = exception_message(exc)
    seen: set[int] = set()
    messages: list[str] = []
    link: BaseException | None = exc
    while link is not None and id(link) not in seen and len(seen) < 100:
        seen.add(id(link))
        messages.append(message if link is exc else exception_message(link))
        cause = _CAUSE(link)
        link = cause if cause is not None else _CONTEXT(link)
    if any(len(text) > ERROR_TEXT_LIMIT for text in messages):
        return bounded_text(message), _frames(exc) + bounded_text(message) + "\n"
    try:
        trace = "".join(traceback.format_exception(exc))
    except Exception as failed:
        why = f"[the exception chain could not be formatted: {type(failed).__name__}]"
        return bounded_text(message), _frames(exc) + bounded_text(message) + f"\n{why}\n"
    return bounded_text(message), bounded_text(trace)


def _frames(exc: BaseException) -> str:
    """``exc``'s traceback frames, then its class name and a colon (its message goes after)."""
    frames = "".join(traceback.format_tb(_TRACEBACK(exc)))
    return f"Traceback (most recent call last):\n{frames}{type(exc).__qualname__}: "
