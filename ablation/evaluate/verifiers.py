"""Built-in verifiers and the one function the engine calls them through.

A verifier is ``(output, task) -> bool``, sync or async. Its verdict must be a real ``bool``:
:func:`check_verdict` turns anything else (``"no"``, ``1``, ``None``, an array) into a
:class:`VerifierError` naming the verifier and what it returned, so a sloppy verifier is an error,
never a pass. The one exception is a numpy boolean scalar (``numpy.bool_``), which is converted to
``bool``: it is what ``numpy`` comparisons return and it has exactly two values. Exceptions raised
by a verifier itself propagate unchanged.

Built-ins (each has a readable ``name`` used in suite fingerprints):

* :data:`equals` / :func:`exact` / :data:`default_verifier`: structural equality, safe for numpy
  arrays, with a tiny float tolerance and whitespace-insensitive strings;
* :func:`numeric`: numbers (or numeric strings) within a tolerance;
* :func:`regex`, :func:`contains`: text checks;
* :func:`json_equal`: JSON documents compared as data.

The code-test verifier (a :class:`BuiltinVerifier` that explains itself through :func:`note`)
lives in :mod:`ablation.evaluate.code_tests`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from ablation.errors import AblationError, ConfigError
from ablation.evaluate.equality import close, plain, values_equal
from ablation.eventloop import is_awaitable
from ablation.schema import AblationTask, callable_name, is_async_callable

__all__ = [
    "BuiltinVerifier",
    "Verifier",
    "VerifierError",
    "check_verdict",
    "collect_notes",
    "contains",
    "default_verifier",
    "equals",
    "exact",
    "json_equal",
    "note",
    "numeric",
    "regex",
    "run_verifier",
    "verifier_is_async",
]

Verifier = Callable[[Any, AblationTask], Any]


class VerifierError(AblationError):
    """A verifier returned something other than a bool, or cannot check this task."""


def _short(value: Any, limit: int = 120) -> str:
    try:
        text = str.__str__(repr(value))  # a repr that is a str subclass is read as plain text
    except Exception:  # a hostile __repr__ (or an int past the digit limit) must not hide the real problem
        text = f"<{type(value).__name__} with a failing repr>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_verdict(value: Any, verifier_name: str) -> bool:
    """Return ``value`` if it is a real ``bool`` (or a numpy boolean scalar, converted).

    Args:
        value: What the verifier returned.
        verifier_name: Used in the error message.

    Raises:
        VerifierError: for anything else, naming the type and value returned.
    """
    kind = type(value)  # not isinstance: that asks the value's __class__, which may raise
    if kind is bool:
        return value
    if kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"):
        return bool(value)
    raise VerifierError(
        f"verifier {verifier_name!r} returned {kind.__name__} {_short(value)}; "
        "a verdict must be True or False"
    )


def verifier_is_async(verifier: Any) -> bool:
    """True when calling ``verifier`` returns an awaitable (async def or async ``__call__``)."""
    return is_async_callable(verifier)


_NOTES: ContextVar[list[str] | None] = ContextVar("ablation_verdict_notes", default=None)


def note(text: str) -> None:
    """Record why a verdict is what it is (e.g. "timeout: the code ran past 10 s").

    A verifier still returns a plain ``bool``; the engine collects notes made while the verifier
    runs (also from a worker thread) into the trial's ``verifier_note``. Outside a campaign the
    call does nothing.
    """
    notes = _NOTES.get()
    if notes is not None:
        notes.append(text)


def collect_notes() -> list[str]:
    """Start collecting notes in the current context and return the list they go into."""
    notes: list[str] = []
    _NOTES.set(notes)
    return notes


async def run_verifier(verifier: Verifier | None, output: Any, task: AblationTask) -> bool:
    """Call a sync or async verifier and return its checked verdict.

    Sync verifiers are called directly on the calling thread, or by the engine in a daemon thread
    (``run.trial.offload``). An awaitable returned by a sync callable is awaited, in both cases.

    Args:
        verifier: The verifier; ``None`` means :data:`default_verifier`.
        output: The agent's output.
        task: The task being checked.

    Raises:
        VerifierError: if the verdict is not a bool.
        Exception: whatever the verifier raises, unchanged.
    """
    fn = default_verifier if verifier is None else verifier
    result = fn(output, task)
    for _ in range(2):  # its awaitable, then one a sync verifier run in a thread returned there
        if is_awaitable(result):
            result = await result
    return check_verdict(result, callable_name(fn))


class BuiltinVerifier:
    """Base of the built-in verifiers: a sync callable with a stable, readable ``name``.

    ``name`` spells out the parameters (e.g. ``"numeric(rel_tol=1e-09, abs_tol=1e-06)"``) so
    that :func:`ablation.schema.callable_name` and suite fingerprints change when they change.
    """

    name: str = "verifier"
    #: Cheap enough to run on the event loop (the engine offloads other sync verifiers to threads).
    inline: bool = True

    def __call__(self, output: Any, task: AblationTask) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class _Equals(BuiltinVerifier):
    """Structural equality of the output and ``task.expected_output`` (see :func:`values_equal`)."""

    name = "equals"

    def __call__(self, output: Any, task: AblationTask) -> bool:
        return _compared(output, task.expected_output, task, strip_strings=True)


def _compared(output: Any, expected: Any, task: AblationTask, *, strip_strings: bool) -> bool:
    """:func:`values_equal`, with values too deeply nested to compare the task's :class:`VerifierError`."""
    try:
        return values_equal(output, expected, strip_strings=strip_strings)
    except RecursionError as exc:
        raise VerifierError(f"task {task.task_id!r}: the output cannot be compared: {exc}") from None


equals: BuiltinVerifier = _Equals()
default_verifier: BuiltinVerifier = equals


def exact() -> BuiltinVerifier:
    """The equality verifier (:data:`equals`); also the default when a task sets none."""
    return equals


# ---------------------------------------------------------------------------------------------
# Numbers and text


def _parse_number(value: Any) -> float | int | None:
    value = plain(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text)
        except ValueError:
            return None
    return None


class _Numeric(BuiltinVerifier):
    def __init__(self, rel_tol: float, abs_tol: float) -> None:
        if not (rel_tol >= 0 and abs_tol >= 0):  # NaN too: no difference would be within it
            raise ConfigError(f"numeric(): tolerances must be >= 0, got rel_tol={rel_tol!r}, abs_tol={abs_tol!r}")
        self.rel_tol, self.abs_tol = rel_tol, abs_tol
        self.name = f"numeric(rel_tol={rel_tol!r}, abs_tol={abs_tol!r})"

    def __call__(self, output: Any, task: AblationTask) -> bool:
        expected = _parse_number(task.expected_output)
        if expected is None:
            raise VerifierError(
                f"task {task.task_id!r}: expected_output {_short(task.expected_output)} "
                "is not a number"
            )
        got = _parse_number(output)
        if got is None or (isinstance(got, float) and math.isnan(got)):
            return False
        return close(got, expected, self.rel_tol, self.abs_tol)


def numeric(rel_tol: float = 1e-9, abs_tol: float = 1e-6) -> BuiltinVerifier:
    """Numbers within tolerance: ``|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)``.

    The output may be an int, a float, a numpy scalar or a string holding exactly one number
    (surrounding whitespace allowed: ``" 3.14 "``, ``"1e3"``). Anything else, including ``bool``,
    NaN and text around the number, is a failed check (``False``), not an error. An expected
    output that is not a number is a :class:`VerifierError` (the task is wrong).
    """
    return _Numeric(rel_tol, abs_tol)


def _as_text(output: Any) -> str | None:
    if output is None:
        return None
    if isinstance(output, bytes):
        return output.decode("utf-8", errors="replace")
    return output if isinstance(output, str) else str(plain(output))


class _Regex(BuiltinVerifier):
    def __init__(self, pattern: str | None, flags: int) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled = None if pattern is None else re.compile(pattern, flags)
        self.name = f"regex({pattern!r}, flags={int(flags)})"

    def __call__(self, output: Any, task: AblationTask) -> bool:
        compiled = self._compiled
        if compiled is None:
            if not isinstance(task.expected_output, str):
                raise VerifierError(
                    f"task {task.task_id!r}: regex() without a pattern needs a string "
                    f"expected_output, got {type(task.expected_output).__name__}"
                )
            try:
                compiled = re.compile(task.expected_output, self.flags)
            except re.error as exc:
                raise VerifierError(f"task {task.task_id!r}: bad pattern: {exc}") from None
        text = _as_text(output)
        return text is not None and compiled.search(text) is not None


def regex(pattern: str | None = None, flags: int = 0) -> BuiltinVerifier:
    """Passes when ``re.search(pattern, text)`` finds a match in the output text.

    The output text is the string itself, decoded bytes, or ``str()`` of any other value;
    ``None`` never matches. With ``pattern=None`` the task's ``expected_output`` (a string) is the
    pattern. An invalid ``pattern`` raises ``re.error`` at once.
    """
    return _Regex(pattern, flags)


class _Contains(BuiltinVerifier):
    def __init__(self, substring: str | None, case_sensitive: bool) -> None:
        self.substring, self.case_sensitive = substring, case_sensitive
        self.name = f"contains({substring!r}, case_sensitive={case_sensitive})"

    def __call__(self, output: Any, task: AblationTask) -> bool:
        needle = self.substring
        if needle is None:
            if task.expected_output is None:
                raise VerifierError(
                    f"task {task.task_id!r}: contains() without a substring needs an "
                    "expected_output"
                )
            needle = _as_text(task.expected_output) or ""
        text = _as_text(output)
        if text is None:
            return False
        if not self.case_sensitive:
            return needle.casefold() in text.casefold()
        return needle in text


def contains(substring: str | None = None, case_sensitive: bool = False) -> BuiltinVerifier:
    """Passes when ``substring`` (default: ``str(task.expected_output)``) occurs in the output text.

    Case-insensitive by default (``str.casefold``). ``None`` output never passes.
    """
    return _Contains(substring, case_sensitive)


_NOT_JSON = object()


def _parse_json(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return _NOT_JSON
    return plain(value)


class _JsonEqual(BuiltinVerifier):
    name = "json_equal()"

    def __call__(self, output: Any, task: AblationTask) -> bool:
        expected = _parse_json(task.expected_output)
        if expected is _NOT_JSON:
            raise VerifierError(f"task {task.task_id!r}: expected_output is not valid JSON")
        got = _parse_json(output)
        return got is not _NOT_JSON and _compared(got, expected, task, strip_strings=False)


def json_equal() -> BuiltinVerifier:
    """Compares output and expected output as JSON data.

    A string (or bytes) is parsed with ``json.loads``; an already-parsed value (dict, list, number,
    numpy array) is used as is. Dict key order never matters; strings inside must match exactly;
    numbers compare with the tiny tolerance of :func:`values_equal`. An unparseable output is a
    failed check; an unparseable expected output is a :class:`VerifierError`.
    """
    return _JsonEqual()

