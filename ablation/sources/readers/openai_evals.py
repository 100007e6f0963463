"""OpenAI evals record logs (``--record_path``, JSONL).

The first line is ``{"spec": {...}}``, a later one ``{"final_report": {...}}``; every other line
is an event with ``run_id``, ``event_id``, ``sample_id``, ``type`` and ``data``. A match eval
records one ``"type": "match"`` event per sample with ``data.correct``. Mapping: id =
``sample_id``; verdict = ``data.correct`` of the ``match`` events (``--field`` another dotted path,
``--where type=...`` other events); the other event types (``sampling``, ...) are not results.
A line that is none of these (no ``type``, ``spec`` or ``final_report``: another tool's line in
the file) is refused naming it, as is a ``data.usage`` that is not an object or a count in it
that is not a whole number from 0 (absent or null: none).

Beside the verdict each trial keeps ``data.sampled`` (output), ``data.expected`` (expected
output) and, from the sample's ``sampling`` events before it, the prompt (input: the first
event's ``data.prompt``), the prompts and samples as a chat trace (bounded) and, when the
events record ``data.usage`` (``prompt_tokens``, ``completion_tokens``), the usage: one model
request per sampling event.
Reference: evals/record.py (``RecorderBase.record_match``, ``LocalRecorder``) of openai/evals.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
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
    chat_trace,
    detail_fields,
    usage_count,
    usage_with_metrics,
)
from ablation.sources.text import file_error, short_repr

__all__ = ["detect", "rows"]


def detect(first: Any) -> bool:
    """An OpenAI evals record: the first line holds ``spec``."""
    return isinstance(first, Mapping) and isinstance(first.get("spec"), Mapping)


def rows(items: Iterable[tuple[int, Any]], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per ``match`` event (or per event ``--where`` keeps)."""
    where = dict(options.where) or {"type": "match"}
    sampling: dict[Any, list[Mapping[str, Any]]] = {}
    for line, obj in items:
        if not isinstance(obj, Mapping):
            raise file_error(InputError, display, f"expected a JSON object, got {type(obj).__name__}", line=line)
        if "spec" not in obj and "final_report" not in obj and "type" not in obj:
            raise file_error(InputError, display, "not an OpenAI evals record line: no 'type' (an event's), "
                             "'spec' or 'final_report' field", line=line)  # fmt: skip
        if obj.get("type") == "sampling" and isinstance(obj.get("data"), Mapping):
            sampling.setdefault((_key(obj.get("run_id")), _key(obj.get("sample_id"))), []).append(obj["data"])
        if "spec" in obj or "final_report" in obj or not matches_where(obj, where):
            continue
        events = sampling.pop((_key(obj.get("run_id")), _key(obj.get("sample_id"))), [])
        task_id = dotted(obj, options.key or "sample_id")
        usage = named_usage(lambda: _usage(events), display, line, task_id)  # noqa: B023 (called now)
        yield Row(
            line,
            task_id,
            dotted(obj, options.field or "data.correct"),
            run=dotted(obj, options.run_field) if options.run_field else None,
            tokens=None if usage is None or (total := usage.total_tokens) is None else float(total),
            metrics=usage_with_metrics(usage, {}),
            extra=detail_fields(
                output=_present(dotted(obj, "data.sampled")), expected_output=_present(dotted(obj, "data.expected")),
                input=events[0].get("prompt") if events else None, usage=usage, trace=_trace(events),
            ),
            names=(options.key or "sample_id", options.field or "data.correct"),
        )


def _key(value: Any) -> Any:
    return value if isinstance(value, str | int) else repr(value)


def _present(value: Any) -> Any:
    return None if value is MISSING else value


def _trace(events: list[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """The sampling events' prompts and samples as one chat transcript."""
    messages: list[Any] = []
    for data in events:
        prompt = data.get("prompt")
        messages += prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
        sampled = data.get("sampled")
        for text in sampled if isinstance(sampled, list) else [sampled]:
            messages.append({"role": "assistant", "content": text})
    return chat_trace(messages)


def _usage(events: list[Mapping[str, Any]]) -> TrialUsage | None:
    """``data.usage`` summed over the sampling events, ``None`` when none records it."""
    usages = [u for data in events if (u := data.get("usage")) is not None]
    if not usages:
        return None
    for usage in usages:
        if not isinstance(usage, Mapping):
            raise ValueError(f"a sampling event's 'data.usage' must be an object, got {short_repr(usage)}")

    def total(name: str) -> int:
        return sum(usage_count(u.get(name), f"data.usage.{name}") for u in usages)

    return TrialUsage(input_tokens=total("prompt_tokens"), output_tokens=total("completion_tokens"),
                      model_requests=len(events))
