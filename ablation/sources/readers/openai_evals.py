"""OpenAI evals record logs (``--record_path``, JSONL).

The first line is ``{"spec": {...}}``, a later one ``{"final_report": {...}}``; every other line
is an event with ``run_id``, ``event_id``, ``sample_id``, ``type`` and ``data``. A match eval
records one ``"type": "match"`` event per sample with ``data.correct``. Mapping: id =
``sample_id``; verdict = ``data.correct`` of the ``match`` events (``--field`` another dotted path,
``--where type=...`` other events); the other event types (``sampling``, ...) are not results.
Reference: evals/record.py (``RecorderBase.record_match``, ``LocalRecorder``) of openai/evals.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.readers.rows import ReadOptions, Row, dotted, matches_where
from ablation.sources.text import file_error

__all__ = ["detect", "rows"]


def detect(first: Any) -> bool:
    """An OpenAI evals record: the first line holds ``spec``."""
    return isinstance(first, Mapping) and isinstance(first.get("spec"), Mapping)


def rows(items: Iterable[tuple[int, Any]], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per ``match`` event (or per event ``--where`` keeps)."""
    where = dict(options.where) or {"type": "match"}
    for line, obj in items:
        if not isinstance(obj, Mapping):
            raise file_error(InputError, display, f"expected a JSON object, got {type(obj).__name__}", line=line)
        if "spec" in obj or "final_report" in obj or not matches_where(obj, where):
            continue
        yield Row(
            line,
            dotted(obj, options.key or "sample_id"),
            dotted(obj, options.field or "data.correct"),
            run=dotted(obj, options.run_field) if options.run_field else None,
        )
