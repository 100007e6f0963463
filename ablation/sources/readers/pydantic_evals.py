"""pydantic-evals reports: the JSON of ``EvaluationReportAdapter.dump_json(report)``.

The document is one object with ``cases[]``; each case has ``name``, ``assertions`` (``{evaluator:
{"value": bool}}``), ``scores`` (``{name: {"value": number}}``), ``labels``, ``metrics``,
``task_duration`` and, when the evaluation ran with ``repeat=``, ``source_case_name`` (the case the
repeat belongs to). Mapping: id = ``source_case_name`` or ``name``; run = ``k - 1`` of the
repeat's name suffix `` [k/n]``, else the repeat's position among the rows of its case (0, 1,
...); verdict = the assertion ``--field`` names, or, by default, all assertions passed; scores → quality; ``metrics`` → metrics; ``task_duration`` →
latency. A case whose ``evaluator_failures`` holds an evaluator the verdict rests on (every one
by default, the one ``--field`` names otherwise) is an error trial at the ``verifier`` stage,
never a pass or fail. ``failures[]`` (cases whose task raised) become error trials, never dropped: the type
and message of ``error_message`` (``"RuntimeError: ..."``) are the error's, at the ``agent``
stage, with the end of ``error_stacktrace``.

Every entry of ``cases`` and ``failures`` is one trial: the only entries not read are those
``--where`` leaves out, each still an object with an id (checked first: another tool's entry is
refused, never left out). An entry that is not an object, whose id (``source_case_name``, else
``name``, or the ``--key`` path) is absent or not a string or an integer, or whose verdict
cannot be read (no ``assertions``, or an ``assertions.NAME.value`` that is not a boolean; the
``--field`` assertion or path absent) is refused with one line naming the file, the entry
(``cases[3]``, ``failures[0]``, from 0), the field and, once known, the task id; so is a
``task_duration``, ``metrics`` value or ``scores.NAME.value`` that is not a number, a
``metrics``, ``scores`` or score that is not an object and an ``evaluator_failures`` that is not
a list of objects (absent or null: none). A case with
no assertions has no verdict unless ``--field`` names one; a failure and a case whose verdict
rests on a crashed evaluator are not asked for one.

Beside the verdict each trial keeps ``inputs`` (input), ``output``, ``expected_output``, the
reasons of failed assertions (the verifier's note) and, as its trace, one ``{"kind": "case"}``
entry with the case's ``attributes``, ``labels`` and ``trace_id``/``span_id`` (when any is set).
The metrics pydantic-evals extracts from an instrumented pydantic-ai run become the trial's
usage: ``input_tokens``, ``output_tokens``, ``cache_read_tokens`` (cached), ``cache_write_tokens``
(cache writes, which pydantic-ai counts within the input tokens), ``requests`` (model requests);
``cost`` becomes its cost (currency unstated). ``cache_read_tokens``, ``requests`` and ``cost``
leave the metrics (the usage's own names take their place); ``cache_write_tokens`` stays one.
Reference: pydantic_evals.reporting.ReportCase / ReportCaseFailure,
pydantic_evals._task_run.extract_span_tree_metrics.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.outputs import TrialUsage
from ablation.sources.readers.rows import (
    MISSING,
    ReadOptions,
    Row,
    dotted,
    matches_where,
    named_usage,
)
from ablation.sources.readers.transcripts import (
    clip,
    clip_tail,
    detail_fields,
    entry_error,
    entry_id,
    entry_list,
    entry_mapping,
    entry_number,
    entry_object,
    split_error,
    usage_with_metrics,
)
from ablation.sources.text import file_error, short_repr

__all__ = ["detect", "rows"]

#: The suffix pydantic-evals gives the name of each repeat of a case: `` [k/n]``.
_REPEAT = re.compile(r" \[(\d+)/\d+\]\Z")
#: The metrics that become the trial's usage and cost (under those names, not these).
_MOVED = ("requests", "cache_read_tokens", "cost")


def detect(doc: Any) -> bool:
    """A pydantic-evals report: an object with a ``cases`` list (and ``failures``/``name``)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("cases"), list) and (
        "failures" in doc or "name" in doc
    )


def rows(doc: Mapping[str, Any], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per case and per failure (``line`` is the sample number, from 1)."""
    seen: dict[str, int] = {}
    failures = doc.get("failures")
    if failures is not None and not isinstance(failures, list):
        raise file_error(InputError, display, f"'failures' must be a list, got {short_repr(failures)}")
    cases = [(f"cases[{i}]", c, False) for i, c in enumerate(doc.get("cases") or [])]
    cases += [(f"failures[{i}]", f, True) for i, f in enumerate(failures or [])]
    for number, (where, item, failed) in enumerate(cases, start=1):
        case = entry_object(item, display, where)
        id_path = options.key or ("source_case_name" if case.get("source_case_name") else "name")
        task_id = entry_id(case, id_path, display, where)  # before --where: a result
        if options.where and not matches_where(case, options.where):
            continue
        run = dotted(case, options.run_field) if options.run_field else None
        if run is None and case.get("source_case_name") and (match := _REPEAT.search(str(case.get("name")))):
            run = int(match.group(1)) - 1
        if run is None:
            run = seen.get(str(task_id), 0)
            seen[str(task_id)] = run + 1
        texts = detail_fields(input=case.get("inputs"), expected_output=case.get("expected_output"))
        if failed:
            yield _failure(number, task_id, run, case, texts)
            continue
        metrics = _numbers(case, "metrics", display, where, task_id)
        usage = named_usage(lambda: _usage(metrics), display, number, task_id)  # noqa: B023 (called now)
        crashed = _crashed_evaluator(case, options.field, display, where, task_id)
        yield Row(
            number,
            task_id,
            _checked_verdict(case, options.field, crashed is not None, display, where, task_id),
            run=run,
            **(_evaluator_error(crashed) if crashed is not None else {}),
            latency_s=entry_number(case.get("task_duration"), "task_duration", display, where, task_id),
            cost=metrics.get("cost"),
            tokens=None if usage is None or (total := usage.total_tokens) is None else float(total),
            quality=_numbers(case, "scores", display, where, task_id),
            metrics=usage_with_metrics(usage, {k: v for k, v in metrics.items()
                                               if k != "cost" and (usage is None or k not in _MOVED)}),
            extra={**texts, **detail_fields(
                output=case.get("output"), usage=usage, trace=_case_trace(case),
                verifier_note=_reasons(case.get("assertions")),
                **(_evaluator_texts(crashed) if crashed is not None else {}),
            )},
        )


def _crashed_evaluator(
    case: Mapping[str, Any], field: str | None, display: str, where: str, task_id: Any
) -> Mapping[str, Any] | None:
    """The failure of an evaluator the verdict rests on (every one by default, else the one
    ``field`` names), or ``None``: a crashed check is the trial's error, never a pass or fail.
    An ``evaluator_failures`` that is not a list of objects is refused (:func:`entry_list`), never
    read as no failure."""
    failures = entry_list(case.get("evaluator_failures"), "evaluator_failures", display, where, task_id) or []
    for number, item in enumerate(failures):
        failure = entry_mapping(item, f"evaluator_failures[{number}]", display, where, task_id)
        if failure is not None and (field is None or failure.get("name") == field):
            return failure
    return None


def _evaluator_error(failure: Mapping[str, Any]) -> dict[str, Any]:
    message = failure.get("error_message")
    error_type, _ = split_error(message) if isinstance(message, str) else (None, None)
    return {"status": "error", "error_type": error_type or "EvaluatorFailure"}


def _evaluator_texts(failure: Mapping[str, Any]) -> dict[str, Any]:
    message, trace = failure.get("error_message"), failure.get("error_stacktrace")
    _, text = split_error(message) if isinstance(message, str) else (None, None)
    name = failure.get("name")
    return {
        "error_stage": "verifier",
        "error_message": clip(f"evaluator {name!r}: {text}" if text else f"evaluator {name!r} failed"),
        "error_traceback": clip_tail(trace) if isinstance(trace, str) else None,
    }


def _failure(number: int, task_id: Any, run: Any, case: Mapping[str, Any], texts: dict[str, Any]) -> Row:
    """The error trial of a case whose task raised (its exception's type and message)."""
    message = case.get("error_message")
    error_type, text = split_error(message) if isinstance(message, str) else (None, None)
    trace = case.get("error_stacktrace")
    return Row(
        number, task_id, None, run=run, status="error",
        error_type=error_type or str(case.get("error_type") or "TaskFailure"),
        extra={**texts, **detail_fields(
            error_stage="agent", error_message=clip(text) if text else None,
            error_traceback=clip_tail(trace) if isinstance(trace, str) else None,
            trace=_case_trace(case),
        )},
    )  # fmt: skip


def _usage(metrics: Mapping[str, float]) -> TrialUsage | None:
    """The usage pydantic-evals recorded as metrics, or ``None`` when it recorded none."""
    names = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
             "cached_tokens": "cache_read_tokens", "cache_write_tokens": "cache_write_tokens",
             "model_requests": "requests"}
    if not any(name in metrics for name in names.values()) or not all(
        0 <= (count := metrics.get(name, 0.0)) < math.inf and count.is_integer() for name in names.values()
    ):
        return None  # (a negative, fractional or non-finite count is no usage: the metrics keep it)
    return TrialUsage.model_validate({field: int(metrics.get(name, 0)) for field, name in names.items()})


def _case_trace(case: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The case's attributes, labels and span ids as one trace entry (``None`` when all empty)."""
    entry = {k: case[k] for k in ("attributes", "labels", "trace_id", "span_id") if case.get(k)}
    return [{"kind": "case", **entry}] if entry else None


def _reasons(assertions: Any) -> str | None:
    """``"name: reason"`` of each failed assertion that gives a reason."""
    reasons = [f"{name}: {dotted(a, 'reason')}" for name, a in (assertions or {}).items()
               if dotted(a, "value") is False and isinstance(dotted(a, "reason"), str)]
    return clip("; ".join(reasons)) if reasons else None


def _checked_verdict(
    case: Mapping[str, Any], field: str | None, crashed: bool, display: str, where: str, task_id: Any
) -> Any:
    """The case's verdict (module docstring), ``None`` when a crashed evaluator stands in for it;
    a verdict that cannot be read is refused naming the case's field (:func:`entry_error`)."""
    assertions = case.get("assertions")
    if assertions is not None and not isinstance(assertions, Mapping):
        raise entry_error(display, where, f"'assertions' must be an object, got {short_repr(assertions)}", task_id)
    if crashed:
        return None
    assertions = assertions or {}
    if field and field not in assertions:
        value = dotted(case, field)
        if value is MISSING:
            raise entry_error(display, where, f"no assertion or field {field!r} (the verdict)", task_id)
        return value
    if not assertions:
        raise entry_error(display, where, "no 'assertions' (the verdict): name a field with --field", task_id)
    names = [field] if field else list(assertions)
    values = [dotted(assertions[name], "value") for name in names]
    for name, value in zip(names, values, strict=True):
        path = f"assertions.{name}.value"
        if value is MISSING:
            raise entry_error(display, where, f"no {path!r} field (the verdict)", task_id)
        if not isinstance(value, bool):
            raise entry_error(display, where, f"{path!r} must be true or false, got {short_repr(value)}", task_id)
    return all(values)


def _numbers(case: Mapping[str, Any], group: str, display: str, where: str, task_id: Any) -> dict[str, float]:
    """The numbers of the case's ``metrics`` (``{name: number}``) or ``scores`` (``{name: {"value":
    number}}``), null ones left out; a group, score or value of another type is refused naming
    it (:func:`entry_mapping`, :func:`entry_number`)."""
    out = {}
    for name, item in (entry_mapping(case.get(group), group, display, where, task_id) or {}).items():
        path, value = f"{group}.{name}", item
        if group == "scores":
            path, value = f"{path}.value", (entry_mapping(item, path, display, where, task_id) or {}).get("value")
        if (number := entry_number(value, path, display, where, task_id)) is not None:
            out[name] = number
    return out

