"""pydantic-evals reports: the JSON of ``EvaluationReportAdapter.dump_json(report)``.

The document is one object with ``cases[]``; each case has ``name``, ``assertions`` (``{evaluator:
{"value": bool}}``), ``scores`` (``{name: {"value": number}}``), ``labels``, ``metrics``,
``task_duration`` and, when the evaluation ran with ``repeat=``, ``source_case_name`` (the case the
repeat belongs to). Mapping: id = ``source_case_name`` or ``name``; run = the repeat's position
among the rows of its case (0, 1, ...); verdict = the assertion ``--field`` names, or, by default,
all assertions passed; scores → quality; numeric ``metrics`` → metrics; ``task_duration`` →
latency. ``failures[]`` (cases whose task raised) become error trials, never dropped.
Reference: pydantic_evals.reporting.ReportCase / ReportCaseFailure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ablation.sources.readers.rows import MISSING, ReadOptions, Row, dotted, matches_where

__all__ = ["detect", "rows"]


def detect(doc: Any) -> bool:
    """A pydantic-evals report: an object with a ``cases`` list (and ``failures``/``name``)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("cases"), list) and (
        "failures" in doc or "name" in doc
    )


def rows(doc: Mapping[str, Any], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per case and per failure (``line`` is the sample number, from 1)."""
    seen: dict[str, int] = {}
    cases = [(c, False) for c in doc.get("cases") or []] + [(f, True) for f in doc.get("failures") or []]
    for number, (case, failed) in enumerate(cases, start=1):
        if not isinstance(case, Mapping) or (options.where and not matches_where(case, options.where)):
            continue
        task_id = dotted(case, options.key) if options.key else case.get("source_case_name") or case.get("name")
        run = dotted(case, options.run_field) if options.run_field else None
        if run is None and isinstance(task_id, str | int):
            run = seen.get(str(task_id), 0)
            seen[str(task_id)] = run + 1
        if failed:
            yield Row(number, task_id, None, run=run, status="error",
                      error_type=str(case.get("error_type") or "TaskFailure"))
            continue
        yield Row(
            number,
            task_id,
            _verdict(case, options.field),
            run=run,
            latency_s=_float(case.get("task_duration")),
            quality=_values(case.get("scores")),
            metrics={k: float(v) for k, v in (case.get("metrics") or {}).items()
                     if isinstance(v, int | float) and not isinstance(v, bool)},
        )


def _verdict(case: Mapping[str, Any], field: str | None) -> Any:
    assertions = case.get("assertions") or {}
    if field:
        if field in assertions:
            return dotted(assertions[field], "value")
        return dotted(case, field)
    values = [dotted(a, "value") for a in assertions.values()]
    if not values or any(not isinstance(v, bool) for v in values):
        return MISSING
    return all(values)


def _values(group: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, entry in (group or {}).items():
        value = dotted(entry, "value")
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
