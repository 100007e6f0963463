"""Trials written by ``ablation report --export-jsonl`` (:meth:`~ablation.store.transfer.JsonlTransfer.export_jsonl`),
or by a program as :class:`~ablation.schema.TaskResult` lines (``result.model_dump_json()`` each).

The first line of an export is ``{"campaign": {...}}`` (the campaign's header), every other line
one stored :class:`~ablation.schema.TaskResult` of either arm; lines a program wrote have no
header, and their first line is a trial (``task_id``, ``status`` and an ``arm`` of the two). Mapping: id = ``task_id`` (``--key`` another
dotted path), run = ``run``, verdict = ``passed`` (``--field``); ``status``, the error type and
every other field of the trial are kept as the campaign stored them, so an error or a timeout
stays one (never a plain failure) and the completeness gate sees it as the campaign's own report
does.

Every field is checked by the rules of the plain JSON-lines reader where it reads the field too
(:mod:`~ablation.sources.readers.generic`: ``category``, ``critical``, ``output``, the cost's
currency and source, and every number, ``wall_s``, ``attempts`` and ``started_at`` included),
then as :class:`~ablation.schema.TaskResult` validates it (types, ranges, ``arm``,
``error_stage``, ``usage``...); ``null`` means absent, as there. A value of the wrong type is
one line naming the file, the line and the task id, never a value read as another one (the text
``"false"`` is false, as in a plain row; ``{"a": 1}`` as a category is an error).

One header, on the first line: a second one (two exports joined) is an error, and so is a
trial whose ``run`` is outside the runs per task the header names (``config.runs``).

The file holds both arms: each side of a comparison takes one with ``--where arm=NAME`` (or
``--baseline-where`` for BEFORE only); a file read without one that holds both arms is an error
saying so, not a list of duplicate ids. A row's ``arm`` is checked before ``--where`` picks
rows, so a row of no arm is an error, never a trial left out.

The header is not read here: it is noted, as ``campaign``, for a caller that collects
:data:`~ablation.sources.readers.rows.READ_NOTES`. A read that collects no notes
(:func:`~ablation.sources.result_files.load_results` and every library read) would drop it, so
the export of a sequential campaign (:func:`sequential_header`) is refused there: its trials are
every one that finished, more than the pairs its stop decided on, and read as plain results
they are no fixed-n sample (docs/STATISTICS.md section 10). ``compare`` reads there the limit the trials
ran under (:func:`~ablation.analysis.latency_censoring.time_limit_of_files`) and, when both
sides are the one campaign's export, its settings, suite and family
(:func:`~ablation.analysis.export_campaign.campaign_settings`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ablation.errors import InputError, validation_line
from ablation.schema import ARMS, TaskResult
from ablation.sources.readers.generic import COST_UNITS, _columns, number
from ablation.sources.readers.rows import (
    MISSING,
    READ_NOTES,
    ReadOptions,
    Row,
    checked_task_id,
    dotted,
    matches_where,
)
from ablation.sources.text import file_error

__all__ = ["detect", "rows", "sequential_header"]

#: The trial's fields a :class:`Row` holds apart; every other stored field goes to ``extra``.
_OWN = frozenset(
    {"task_id", "arm", "run", "passed", "status", "error_type", "latency_s", "cost", "tokens", "quality", "metrics"}
)
_EXTRA = tuple(name for name in TaskResult.model_fields if name not in _OWN)
#: The fields the plain JSON-lines reader reads by the same names (its rules apply to them).
_PLAIN = ("category", "critical", "output", *COST_UNITS)
#: The trial's other numbers: read as the plain reader reads a number, then validated.
_NUMBERS = ("wall_s", "attempts", "started_at")
#: What stands in for the fields :func:`~ablation.sources.readers.rows.checked_rows` checks
#: (the id; the tokens, so that ``usage`` is not mirrored into them) while the others are validated.
_CHECKED_LATER = {"task_id": "-", "tokens": 0}


def detect(first: Any) -> bool:
    """An export (the first line is the ``campaign`` header), or trials without one (the first
    line has ``task_id``, ``status`` and an ``arm`` of :data:`~ablation.schema.ARMS`)."""
    if not isinstance(first, Mapping):
        return False
    return _header(first) or ({"task_id", "status"} <= first.keys() and first.get("arm") in ARMS)


def _header(obj: Mapping[str, Any]) -> bool:
    """The ``campaign`` header line: that key and nothing else."""
    return len(obj) == 1 and isinstance(obj.get("campaign"), Mapping)


def rows(items: Iterable[tuple[int, Any]], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per stored trial of the arm ``--where`` keeps."""
    arms: dict[str, int] = {}
    picks_arm = any(path == "arm" for path in options.where)
    header: int | None = None  # the line of the campaign header
    runs: int | None = None  # the runs per task the header names
    for line, obj in items:
        if not isinstance(obj, Mapping):
            raise file_error(InputError, display, f"expected a JSON object, got {type(obj).__name__}", line=line)
        if _header(obj):
            if header is not None:
                raise file_error(InputError, display, f"a second campaign header (the first is on line {header}): "
                                 "an export holds one campaign", line=line)  # fmt: skip
            header, runs = line, _runs_of(obj["campaign"])
            _note_header(obj["campaign"], display, line)
            continue
        arm = obj.get("arm")
        _validated({"arm": arm}, _failure(line, obj, display, options))
        run = obj.get("run", 0)
        if runs is not None and options.run_field is None and isinstance(run, int) and not 0 <= run < runs:
            raise _failure(line, obj, display, options)(
                f"run {run}, but the campaign ran {runs} run(s) per task (its header, line {header})"
            )
        if options.where and not matches_where(obj, options.where):
            continue
        arms.setdefault(str(arm), line)
        if len(arms) > 1 and not picks_arm:
            first, second = list(arms.items())[:2]
            raise file_error(
                InputError, display,
                f"an ablation export holds both arms ({first[0]!r} from line {first[1]}, {second[0]!r} "
                f"from line {second[1]}): pick one with --where arm=candidate (and --baseline-where "
                "arm=baseline for BEFORE; load_results(..., where={'arm': 'candidate'}) in Python)", line=line,
            )  # fmt: skip
        yield _row(line, obj, display, options)


def _runs_of(header: Mapping[str, Any]) -> int | None:
    """The runs per task a campaign header names (``config.runs``), or ``None``."""
    config = header.get("config")
    runs = config.get("runs") if isinstance(config, Mapping) else None
    return runs if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1 else None


def sequential_header(header: Mapping[str, Any]) -> bool:
    """Whether a campaign header is a sequential campaign's (its configuration names a policy)."""
    config = header.get("config")
    return isinstance(config, Mapping) and config.get("sequential") is not None


def _note_header(header: Mapping[str, Any], display: str, line: int) -> None:
    """Note the campaign's header for a caller that collects notes
    (:data:`~ablation.sources.readers.rows.READ_NOTES`); the first header of the file counts.

    Raises:
        InputError: the header is a sequential campaign's and no caller collects it.
    """
    notes = READ_NOTES.get()
    if notes is None and sequential_header(header):
        campaign = header.get("campaign_id") or "(no id)"
        raise file_error(
            InputError, display,
            f"the export of sequential campaign {campaign}: its trials are every one that finished, "
            "more than the pairs its stop decided on, so they are no fixed-n sample to load as plain "
            "results (docs/STATISTICS.md section 10); judge it with `ablation compare FILE FILE "
            "--where arm=candidate --baseline-where arm=baseline`, which replays its stop", line=line,
        )  # fmt: skip
    if notes is not None and "campaign" not in notes:
        notes["campaign"] = header


def _failure(line: int, obj: Mapping[str, Any], display: str, options: ReadOptions) -> Callable[[str], Exception]:
    """The one-line error of a problem on ``line``, naming the row's task id."""
    task_id = dotted(obj, options.key or "task_id")
    named = None if task_id is MISSING else task_id
    return lambda problem: file_error(InputError, display, problem, line=line, task_id=named)


def _validated(fields: dict[str, Any], fail: Callable[[str], Exception]) -> None:
    """Raise ``fail`` of what :class:`TaskResult` refuses in ``fields`` (one line, every field)."""
    try:
        TaskResult.model_validate({**_CHECKED_LATER, **fields})
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise fail(validation_line(exc)) from None


def _row(line: int, obj: Mapping[str, Any], display: str, options: ReadOptions) -> Row:
    """The row of one stored trial, every field checked (one line naming file, line and task).

    The id is checked first, by the plain reader's rules, under the name the file gives it
    (``task_id``, or ``--key``): an error names the export's own field, not the plain ``id``.
    """
    key = options.key or "task_id"
    checked_task_id(dotted(obj, key), display, line, key)
    fail = _failure(line, obj, display, options)

    def numbers(name: str) -> dict[str, float]:
        values = obj.get(name)
        if values is None:
            return {}
        if not isinstance(values, Mapping):
            raise fail(f"{name!r} must be an object of numbers, got {type(values).__name__}")
        return {str(k): number(v, f"{name}.{k}", fail) for k, v in values.items()}

    def scalar(name: str) -> float | None:
        return None if obj.get(name) is None else number(obj[name], name, fail)

    status = obj.get("status", "completed")
    if status not in ("completed", "error", "timeout"):
        raise fail(f"'status' must be completed, error or timeout, got {status!r}")
    latency_s, cost, tokens = scalar("latency_s"), scalar("cost"), scalar("tokens")
    quality, metrics = numbers("quality"), numbers("metrics")
    extra = {k: obj[k] for k in _EXTRA if obj.get(k, MISSING) not in (MISSING, None)}
    plain = {k: extra.pop(k) for k in _PLAIN if k in extra}
    extra.update(_columns(plain, set(), fail, csv_cells=False)[2])  # the plain reader's own checks
    extra.update({k: number(extra[k], k, fail) for k in _NUMBERS if k in extra})
    error_type = obj.get("error_type")
    _validated({**extra, "error_type": error_type}, fail)
    return Row(
        line,
        dotted(obj, key),
        dotted(obj, options.field or "passed"),
        run=obj.get("run", 0) if options.run_field is None else dotted(obj, options.run_field),
        status=status,
        error_type=error_type,
        latency_s=latency_s,
        cost=cost,
        tokens=tokens,
        quality=quality,
        metrics=metrics,
        extra=extra,
    )
