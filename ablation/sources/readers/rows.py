"""What every result-file reader shares: the read options, one normalised row, dotted paths.

A reader turns its tool's document into :class:`Row` objects (id, run, raw verdict, numbers, the
line or sample number for messages); :func:`rows_to_results` turns them into
:class:`~ablation.schema.TaskResult` objects, checking the verdicts and that no ``(id, run)`` pair
appears twice. Every error is one line ``FILE:LINE: problem (task id 'X')``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, TypeVar

from pydantic import ValidationError

from ablation.errors import InputError, validation_line
from ablation.outputs import VALUE_LIMIT, usable_number
from ablation.schema import COUNT_LIMIT, RUN_LIMIT, TASK_ID_LIMIT, TaskResult, safe_text
from ablation.sources.text import MAX_BYTES, MAX_JSON_DEPTH, file_error, nested_too_deep, short_repr

__all__ = [
    "MISSING", "NUMBER_TEXT", "READ_NOTES", "UNUSABLE", "NumericVerdict", "ReadOptions", "Row", "checked_rows", "checked_task_id",
    "dotted", "json_number", "json_numbers", "matches_where", "named_usage", "parse_verdict",
    "row_result", "rows_to_results", "text_number",
]

U = TypeVar("U")
#: Why a number no report can hold is refused (NaN, an infinity, a magnitude of VALUE_LIMIT or more).
UNUSABLE = f"is not a finite number below {VALUE_LIMIT:g} in magnitude"

#: A text (stripped) that spells a number: a CSV verdict cell that is one makes the field numeric,
#: and any other CSV cell that is one is a metric (``generic.CSV_NUMBER`` is this pattern).
NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII digits only

#: Returned by :func:`dotted` when a path does not resolve.
MISSING: Any = object()

#: Set by a caller to a dict to learn what one read meets beyond its rows: ``"verdicts"``, the
#: texts (:func:`as_text`) of the verdicts read with ``pass_values``; ``"timeout_s"``, the time
#: limit an ablation export's header names (:mod:`~ablation.sources.readers.ablation_export`).
READ_NOTES: ContextVar[dict[str, Any] | None] = ContextVar("read_notes", default=None)

_BOOL_WORDS: dict[str, bool] = {
    **dict.fromkeys(("true", "1", "1.0", "pass", "passed", "yes"), True),
    **dict.fromkeys(("false", "0", "0.0", "fail", "failed", "no"), False),
}


class NumericVerdict(InputError):
    """The verdict field holds numbers, not verdicts: the caller may compare it as a numeric field."""


@dataclass(frozen=True)
class ReadOptions:
    """How to read one result source.

    Attributes:
        key: Dotted path of the task id (``None``: the format's own id).
        field: Dotted path of the verdict, or the scorer/evaluator/metric name of a tool format
            (``None``: the format's default).
        run_field: Dotted path of the run index (``None``: the format's own notion, else run 0).
        where: ``{dotted path: value}`` filters; a row is kept when every path's value, as text,
            equals the given text (``filter=strict-match``, ``promptIdx=1``).
        pass_values: Verdict values (as text) that count as a pass; everything else fails. ``None``
            uses :func:`parse_verdict` (and the format's documented mapping).
        arm: ``"baseline"`` or ``"candidate"``.
        numeric: Read the field as a number into ``quality[field]`` (``passed`` is ``False``).
        max_bytes: Largest source read, after gzip decompression (``--max-input-bytes``).
    """

    key: str | None = None
    field: str | None = None
    run_field: str | None = None
    where: Mapping[str, str] = dc_field(default_factory=dict)
    pass_values: frozenset[str] | None = None
    arm: str = "baseline"
    numeric: bool = False
    max_bytes: int = MAX_BYTES


@dataclass
class Row:
    """One normalised result before validation (raw values, checked by :func:`rows_to_results`).

    Text from the file that reaches the report as text (the error type, the category; the id in
    :func:`checked_rows`) has its lone surrogates escaped (:func:`~ablation.schema.safe_text`), as
    a run's trials have.
    """

    line: int
    task_id: Any
    verdict: Any
    run: Any = None
    status: str = "completed"
    error_type: str | None = None
    latency_s: float | None = None
    cost: float | None = None
    tokens: float | None = None
    quality: dict[str, float] = dc_field(default_factory=dict)
    metrics: dict[str, float] = dc_field(default_factory=dict)
    extra: dict[str, Any] = dc_field(default_factory=dict)
    #: The id's and the verdict's fields as the reader read them, for messages (``None``: the
    #: ``--key`` and ``--field`` paths, else ``id`` and ``passed``).
    names: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.error_type, str):
            self.error_type = safe_text(self.error_type)
        if isinstance(self.extra.get("category"), str):
            self.extra["category"] = safe_text(self.extra["category"])

def dotted(obj: Any, path: str) -> Any:
    """The value at ``path`` in nested mappings/lists, or :data:`MISSING`.

    A literal key wins (``{"a.b": 1}`` answers ``a.b``); otherwise the path is split on dots and
    each part indexes a mapping (by key) or a list (by integer position, in ASCII digits).
    """
    if isinstance(obj, Mapping) and path in obj:
        return obj[path]
    value = obj
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and re.fullmatch("-?[0-9]+", part) and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def json_number(value: Any) -> float | None:
    """A JSON number as a float; ``None`` for anything else (a boolean, text, null, absent).

    An integer past the float range reads as an infinity, which :func:`checked_rows` refuses
    with its file, line and task id, as it refuses a NaN or an infinity the file spelled out.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def json_numbers(pairs: Iterable[tuple[str, Any]]) -> dict[str, float]:
    """The ``(name, value)`` pairs whose value is a JSON number (:func:`json_number`), as floats."""
    return {name: number for name, value in pairs if (number := json_number(value)) is not None}


def text_number(value: Any) -> float | None:
    """The number a text spells in CSV's number syntax, as a float; ``None`` for anything else.

    The text, stripped, must match :data:`NUMBER_TEXT`: ``0.4``, ``-3``, ``1e-3``, ``.5``; not
    ``nan``, ``inf``, ``1_000``, digits of another script or an empty text. A number past the
    float range reads as an infinity, which the callers refuse as they refuse a JSON one.
    """
    if not isinstance(value, str) or NUMBER_TEXT.fullmatch(text := value.strip()) is None:
        return None
    return float(text)


def named_usage(build: Callable[[], U], display: str, line: int, task_id: Any) -> U:
    """``build()`` (a reader's :class:`~ablation.outputs.TrialUsage` of one row, or ``None``); a
    count it refuses (past :data:`~ablation.outputs.COUNT_LIMIT`, not finite) is an
    :class:`InputError` naming the file, line and task id, as :func:`checked_rows` names others."""
    try:
        return build()
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        named = None if task_id is MISSING or task_id is None else safe_text(str(task_id))
        raise file_error(InputError, display, f"its usage cannot be read: {validation_line(exc)}",
                         line=line, task_id=named) from None  # fmt: skip


def as_text(value: Any) -> str:
    """A value as the text ``--where`` and ``--pass-values`` compare with (JSON spelling of booleans)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value).strip()


def matches_where(obj: Any, where: Mapping[str, str]) -> bool:
    """True when every ``where`` path of ``obj`` holds the given text."""
    return all(as_text(dotted(obj, path)) == want for path, want in where.items())


def parse_verdict(value: Any) -> bool | None:
    """The boolean an unambiguous verdict stands for, or ``None`` when it is ambiguous.

    Accepted: ``True``/``False``; the integers 1/0 and the floats exactly 1.0/0.0; the strings
    true/false, 1/0, 1.0/0.0, pass/fail, passed/failed, yes/no (case-insensitive, stripped).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        return _BOOL_WORDS.get(value.strip().lower())
    return None


def checked_rows(
    rows: Iterable[Row],
    display: str,
    options: ReadOptions,
    *,
    what: str | None = None,
    mapping: Callable[[Any], bool | None] | None = None,
    unit: str = "line",
) -> Iterator[tuple[Row, str, int, bool]]:
    """Validate ``rows`` one by one: ``(row, task id, run, passed)`` in order, errors as they come.

    The checks of :func:`rows_to_results` (which builds results from these): the id, run and
    verdict, no ``(id, run)`` pair twice (naming both rows), tokens and latency. In numeric mode
    the value goes into ``row.quality[field]``. At the end, no row at all is an error.
    """
    name = options.field or "passed"
    what = what or f"verdict {name!r}"
    first: dict[tuple[str, int], int] = {}
    notes = READ_NOTES.get() if options.pass_values is not None else None
    seen = None if notes is None else notes.setdefault("verdicts", set())
    for row in rows:
        id_name, said = (options.key or "id", what) if row.names is None else (row.names[0], f"verdict {row.names[1]!r}")
        line, task_id = row.line, checked_task_id(row.task_id, display, row.line, id_name)

        def fail(problem: str, task_id: str | None = task_id, line: int = line) -> Exception:
            return file_error(InputError, display, problem, line=line, task_id=task_id)

        for key, value in row.extra.items():  # TaskResult's conversions recurse
            if nested_too_deep(value):
                raise fail(f"field {key!r} is nested more than {MAX_JSON_DEPTH} levels deep")
        run = _run(row.run, fail)
        if options.numeric:
            if row.status == "completed":  # a failed trial has no value (never a guessed one)
                row.quality = {**row.quality, name: _numeric(row, said, fail)}
            passed = False
        else:
            passed = _verdict(row, options, mapping, said, fail, seen)
        if (task_id, run) in first:
            raise fail(
                f"duplicate id {short_repr(task_id)} (run {run}): first on {unit} "
                f"{first[(task_id, run)]}, again on {unit} {line}"
                " (use --run-field for repeated runs, or --where to pick one row)"
            )
        first[(task_id, run)] = line
        if (problem := _not_finite(row)) is not None:
            raise fail(problem)
        tokens = row.tokens
        if tokens is not None and not (0 <= tokens < COUNT_LIMIT and tokens == int(tokens)):
            got = "a number of 2**52 or more" if tokens >= COUNT_LIMIT else repr(tokens)  # not the float read
            raise fail(f"'tokens' must be an integer from 0 to 2**52 - 1, got {got}")
        if row.latency_s is not None and row.latency_s < 0:
            raise fail(f"latency must not be negative, got {row.latency_s!r}")
        yield row, task_id, run, passed
    if not first:
        raise file_error(InputError, display, "no result rows" + _where_note(options))


def _not_finite(row: Row) -> str | None:
    """What names the row's first number that is NaN, infinite or past
    :data:`~ablation.outputs.VALUE_LIMIT`, or ``None`` when there is none (a report's statistics,
    and JSON, take finite numbers only)."""
    for name, value in (("latency", row.latency_s), ("cost", row.cost), ("tokens", row.tokens)):
        if value is not None and not usable_number(value):
            return f"{name!r} {UNUSABLE}: {value!r}"
    for group, values in (("quality score", row.quality), ("metric", row.metrics)):
        if values and not all(map(usable_number, values.values())):
            name = next(k for k, v in values.items() if not usable_number(v))
            return f"{group} {name!r} {UNUSABLE}: {values[name]!r}"
    return None


def rows_to_results(
    rows: Iterable[Row],
    display: str,
    options: ReadOptions,
    *,
    what: str | None = None,
    mapping: Callable[[Any], bool | None] | None = None,
    unit: str = "line",
) -> list[TaskResult]:
    """Validate ``rows`` into results; duplicate ``(id, run)`` pairs are errors naming both rows.

    Args:
        rows: The reader's rows.
        display: The file name for messages.
        options: The read options (``arm``, ``pass_values``).
        what: How the verdict is called in messages (default ``verdict 'FIELD'``).
        mapping: The format's verdict mapping, tried before :func:`parse_verdict` (Inspect's
            ``C``/``I``/``P``/``N``); ignored when ``options.pass_values`` is set.
        unit: ``"line"`` (the row number is a line) or ``"sample"`` (a sample index).
    """
    out = []
    for row, task_id, run, passed in checked_rows(rows, display, options, what=what, mapping=mapping, unit=unit):
        try:  # a field no check above knows (a registered reader's ``extra``): one line, not pydantic's
            out.append(row_result(row, task_id, run, passed, options.arm))
        except ValidationError as exc:
            raise file_error(InputError, display, validation_line(exc), line=row.line, task_id=task_id) from None
    return out


def row_result(row: Row, task_id: str, run: int, passed: bool, arm: str) -> TaskResult:
    """The :class:`TaskResult` of a row checked by :func:`checked_rows`."""
    tokens = row.tokens
    return TaskResult(
        task_id=task_id, arm=arm, run=run, status=row.status, passed=passed,  # type: ignore[arg-type]  # checked by the caller
        error_type=row.error_type, latency_s=row.latency_s, cost=row.cost,
        tokens=None if tokens is None else int(tokens), quality=row.quality, metrics=row.metrics,
        **row.extra,
    )


def _where_note(options: ReadOptions) -> str:
    return " match --where " + ", ".join(f"{k}={v}" for k, v in options.where.items()) if options.where else ""


def checked_task_id(raw: Any, display: str, line: int, key: str, *, what: str | None = None) -> str:
    """The id ``raw`` (field ``key`` at ``line`` of ``display``; ``what`` names it in messages) as
    text, after the checks of every id read from a file: given, a string or an integer, not only
    whitespace, at most ``TASK_ID_LIMIT`` characters; lone surrogates escaped (``safe_text``)."""
    what = what or f"{key!r} (the task id)"
    if raw is MISSING or raw is None or (isinstance(raw, str) and not raw.strip()):  # text.blank_id
        problem = f"{what} is only whitespace: {short_repr(raw)}" if isinstance(raw, str) and raw else f"{what} is empty"
        raise file_error(InputError, display, problem if isinstance(raw, str) else f"no {key!r} field (the task id)", line=line)
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        raise file_error(InputError, display, f"{key!r} must be a string or an integer, got {short_repr(raw)}", line=line)
    if isinstance(raw, str) and len(raw) > TASK_ID_LIMIT:  # (one bound for suites and results)
        raise file_error(InputError, display, f"{what} is longer than {TASK_ID_LIMIT} characters ({len(raw)}), starting {short_repr(raw[:80])}", line=line)
    return safe_text(str(raw))


def _run(raw: Any, fail: Callable[[str], Exception]) -> int:
    if raw is None or raw is MISSING:
        return 0
    if isinstance(raw, str) and raw.strip().isascii() and raw.strip().isdigit():
        raw = int(raw.strip())  # ASCII 0-9 only: "²" is a digit to isdigit() but not to int()
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < RUN_LIMIT:
        raise fail(f"the run must be an integer from 0 to 2**31 - 1, got {short_repr(raw)}")
    return raw


def _verdict(
    row: Row,
    options: ReadOptions,
    mapping: Callable[[Any], bool | None] | None,
    what: str,
    fail: Callable[[str], Exception],
    seen: set[str] | None = None,
) -> bool:
    """The row's verdict; a number other than 1 or 0 (or a text spelling one, :func:`text_number`)
    raises :class:`NumericVerdict`, anything else that is not a verdict is an error. With
    ``pass_values``, the verdict's text is added to ``seen`` (when given)."""
    if row.status != "completed":
        return False
    value = row.verdict
    if value is MISSING:
        raise fail(f"no {what.removeprefix('verdict ')} value (the verdict)"
                   if not what.startswith("verdict ") else f"no {what[8:]} field (the verdict)")
    if options.pass_values is not None:
        if seen is not None:
            seen.add(as_text(value))
        return as_text(value) in options.pass_values
    passed = mapping(value) if mapping is not None else None
    if passed is None:
        passed = parse_verdict(value)
    number = value
    if passed is None and (spelled := text_number(value)) is not None:  # a CSV cell is text
        number, passed = spelled, parse_verdict(spelled)  # "1.00" is 1, a pass, as JSON 1.00 is
    if passed is None and isinstance(number, float) and not math.isfinite(number):
        raise fail(f"{what} is {short_repr(value)}: neither a verdict nor a number")
    if passed is None and isinstance(number, int | float) and not isinstance(number, bool):
        raise NumericVerdict(str(fail(f"{what} is a number, not a verdict: {short_repr(value)}")))
    if passed is None:
        raise fail(
            f"{what} is not an unambiguous boolean: {short_repr(value)} "
            "(use true/false, 1/0, pass/fail or yes/no, or --pass-values)"
        )
    return passed


def _numeric(row: Row, what: str, fail: Callable[[str], Exception]) -> float:
    """The row's value of a numeric field: a JSON number, or a text spelling one (a CSV cell).

    An integer or a text past the float range is an infinity, refused with the row's file, line
    and task id by :func:`_not_finite`; a NaN is not a number.
    """
    value = row.verdict
    number = text_number(value) if isinstance(value, str) else json_number(value)
    if number is None or number != number:
        raise fail(f"{what} is not a number: {short_repr(value)}")
    return number
