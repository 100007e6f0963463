"""lm-evaluation-harness ``--log_samples`` files (``samples_{task}_{date}.jsonl``).

One JSON object per line with ``doc_id``, ``filter`` (``none``, or ``strict-match`` /
``flexible-extract`` for generative tasks such as gsm8k, one line per filter), ``metrics`` (the
names of the metric fields) and one field per metric (``acc``, ``exact_match``, ...). Mapping:
id = ``doc_id``; verdict = the metric ``--field`` names (default: the first of ``metrics``), which
must be 0/1; the other numeric metrics → quality. With several filters, ``--where
filter=strict-match`` picks one (without it, the file is refused, naming the filters). A line
``--where`` leaves out is still checked to be a sample (its ``doc_id``, or ``--key`` path, an
id): another tool's line in the file is refused naming it, never left out as another filter's.
A ``metrics`` that is not a list of names is refused naming the line and the task id.

Beside the verdict each trial keeps ``doc`` (input), ``target`` (expected output), ``resps``
(output: the model's one response as text, else the list), ``filtered_resps`` (the verifier's
note: what the filter extracted and the metric scored) and, as its trace, the prompts of
``arguments`` and the responses as a ``request``/``response`` pair (bounded).
Reference: lm_eval/loggers/evaluation_tracker.py (``save_results_samples``) and
docs/interface.md (``--log_samples``) of EleutherAI/lm-evaluation-harness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.readers.rows import (
    MISSING,
    ReadOptions,
    Row,
    checked_task_id,
    dotted,
    json_numbers,
    matches_where,
)
from ablation.sources.readers.transcripts import MAX_MESSAGES, clip, detail_fields
from ablation.sources.text import file_error, short_repr

__all__ = ["detect", "rows"]


def detect(first: Any) -> bool:
    """An lm-eval sample line: ``doc_id`` with ``filter``, ``resps`` or ``doc``."""
    return isinstance(first, Mapping) and "doc_id" in first and (
        "filter" in first or "resps" in first or "doc" in first
    )


def rows(items: Iterable[tuple[int, Any]], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per kept line."""
    items = list(items)
    if "filter" not in options.where:
        filters = sorted({str(obj.get("filter")) for _, obj in items if isinstance(obj, Mapping)})
        if len(filters) > 1:
            raise file_error(
                InputError, display,
                f"several filters ({', '.join(filters)}): choose one with --where filter=NAME",
            )
    for line, obj in items:
        if not isinstance(obj, Mapping):
            raise file_error(InputError, display, f"expected a JSON object, got {type(obj).__name__}", line=line)
        raw_id = dotted(obj, options.key) if options.key else obj.get("doc_id", MISSING)
        if options.where and not matches_where(obj, options.where):
            checked_task_id(raw_id, display, line, options.key or "doc_id")  # a line left out is a sample too
            continue
        if (listed := obj.get("metrics")) is not None and not isinstance(listed, list):
            raise file_error(InputError, display, f"'metrics' must be a list of metric names, got {short_repr(listed)}",
                             line=line, task_id=checked_task_id(raw_id, display, line, options.key or "doc_id"))
        names = [m for m in listed or [] if isinstance(m, str)]
        field = options.field or (names[0] if names else "acc")
        verdict = dotted(obj, field)
        yield Row(
            line,
            raw_id,
            verdict,
            run=dotted(obj, options.run_field) if options.run_field else None,
            quality=json_numbers((n, obj.get(n)) for n in names if n != field),
            extra=_details(obj),
            names=(options.key or "doc_id", field),
        )


def _details(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The document, target, responses, filtered responses and prompts of one sample line."""
    resps = obj.get("resps")
    flat = []
    for group in resps if isinstance(resps, list) else ():
        flat += group if isinstance(group, list) else [group]
    filtered = obj.get("filtered_resps")
    note = None if filtered is None else f"{obj.get('filter', 'filtered')}: {json.dumps(filtered, default=str)}"
    arguments = obj.get("arguments")
    prompts = [a["arg_0"] for a in arguments.values() if isinstance(a, Mapping) and "arg_0" in a] if isinstance(
        arguments, Mapping) else []
    trace = [{"kind": "request", "parts": [_text(p) for p in prompts[:MAX_MESSAGES]]},
             {"kind": "response", "parts": [_text(r) for r in flat[:MAX_MESSAGES]]}]
    return detail_fields(
        input=obj.get("doc"), expected_output=obj.get("target"),
        output=flat[0] if len(flat) == 1 else (flat or None),
        verifier_note=clip(note) if note else None, trace=trace if prompts or flat else None,
    )


def _text(value: Any) -> dict[str, Any]:
    return {"kind": "text", "content": clip(value if isinstance(value, str) else json.dumps(value, default=str))}
