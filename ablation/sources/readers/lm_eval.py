"""lm-evaluation-harness ``--log_samples`` files (``samples_{task}_{date}.jsonl``).

One JSON object per line with ``doc_id``, ``filter`` (``none``, or ``strict-match`` /
``flexible-extract`` for generative tasks such as gsm8k, one line per filter), ``metrics`` (the
names of the metric fields) and one field per metric (``acc``, ``exact_match``, ...). Mapping:
id = ``doc_id``; verdict = the metric ``--field`` names (default: the first of ``metrics``), which
must be 0/1; the other numeric metrics → quality. With several filters, ``--where
filter=strict-match`` picks one (without it, the file is refused, naming the filters).
Reference: lm_eval/loggers/evaluation_tracker.py (``save_results_samples``) and
docs/interface.md (``--log_samples``) of EleutherAI/lm-evaluation-harness.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.readers.rows import MISSING, ReadOptions, Row, dotted, matches_where
from ablation.sources.text import file_error

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
        if options.where and not matches_where(obj, options.where):
            continue
        names = [m for m in obj.get("metrics") or [] if isinstance(m, str)]
        field = options.field or (names[0] if names else "acc")
        verdict = dotted(obj, field)
        yield Row(
            line,
            dotted(obj, options.key) if options.key else obj.get("doc_id", MISSING),
            verdict,
            run=dotted(obj, options.run_field) if options.run_field else None,
            quality={n: float(v) for n in names if n != field
                     and isinstance(v := obj.get(n), int | float) and not isinstance(v, bool)},
        )
