"""Trials written by ``ablation report --export-jsonl`` (:meth:`~ablation.store.transfer.JsonlTransfer.export_jsonl`).

The first line is ``{"campaign": {...}}`` (the campaign's header), every other line one stored
:class:`~ablation.schema.TaskResult` of either arm. Mapping: id = ``task_id`` (``--key`` another
dotted path), run = ``run``, verdict = ``passed`` (``--field``); ``status``, the error type and
every other field of the trial are kept as the campaign stored them, so an error or a timeout
stays one (never a plain failure) and the completeness gate sees it as the campaign's own report
does.

The file holds both arms: each side of a comparison takes one with ``--where arm=NAME`` (or
``--baseline-where`` for BEFORE only); a file read without one that holds both arms is an error
saying so, not a list of duplicate ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.schema import TaskResult
from ablation.sources.readers.generic import number
from ablation.sources.readers.rows import MISSING, ReadOptions, Row, dotted, matches_where
from ablation.sources.text import file_error

__all__ = ["detect", "rows"]

#: The trial's fields a :class:`Row` holds apart; every other stored field goes to ``extra``.
_OWN = frozenset(
    {"task_id", "arm", "run", "passed", "status", "error_type", "latency_s", "cost", "tokens", "quality", "metrics"}
)
_EXTRA = tuple(name for name in TaskResult.model_fields if name not in _OWN)


def detect(first: Any) -> bool:
    """An export: the first line is the ``campaign`` header and nothing else."""
    return isinstance(first, Mapping) and len(first) == 1 and isinstance(first.get("campaign"), Mapping)


def rows(items: Iterable[tuple[int, Any]], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per stored trial of the arm ``--where`` keeps."""
    arms: dict[str, int] = {}
    picks_arm = any(path == "arm" for path in options.where)
    for line, obj in items:
        if not isinstance(obj, Mapping):
            raise file_error(InputError, display, f"expected a JSON object, got {type(obj).__name__}", line=line)
        if detect(obj):
            continue
        if options.where and not matches_where(obj, options.where):
            continue
        arm = obj.get("arm")
        arms.setdefault(str(arm), line)
        if len(arms) > 1 and not picks_arm:
            first, second = list(arms.items())[:2]
            raise file_error(
                InputError, display,
                f"an ablation export holds both arms ({first[0]!r} from line {first[1]}, {second[0]!r} "
                f"from line {second[1]}): pick one with --where arm=candidate (and --baseline-where "
                "arm=baseline for BEFORE)", line=line,
            )  # fmt: skip
        yield _row(line, obj, display, options)


def _row(line: int, obj: Mapping[str, Any], display: str, options: ReadOptions) -> Row:
    """The row of one stored trial, its numbers checked (one line naming file, line and task)."""
    task_id = dotted(obj, options.key or "task_id")

    def fail(problem: str) -> Exception:
        return file_error(InputError, display, problem, line=line, task_id=task_id)

    def numbers(name: str) -> dict[str, float]:
        values = obj.get(name) or {}
        if not isinstance(values, Mapping):
            raise fail(f"{name!r} must be an object of numbers, got {type(values).__name__}")
        return {str(k): number(v, f"{name}.{k}", fail) for k, v in values.items()}

    def scalar(name: str) -> float | None:
        return None if obj.get(name) is None else number(obj[name], name, fail)

    status = obj.get("status", "completed")
    if status not in ("completed", "error", "timeout"):
        raise fail(f"'status' must be completed, error or timeout, got {status!r}")
    return Row(
        line,
        task_id,
        dotted(obj, options.field or "passed"),
        run=obj.get("run", 0) if options.run_field is None else dotted(obj, options.run_field),
        status=status,
        error_type=obj.get("error_type"),
        latency_s=scalar("latency_s"),
        cost=scalar("cost"),
        tokens=scalar("tokens"),
        quality=numbers("quality"),
        metrics=numbers("metrics"),
        extra={k: obj[k] for k in _EXTRA if obj.get(k, MISSING) not in (MISSING, None)},
    )
