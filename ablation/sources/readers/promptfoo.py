"""promptfoo ``results.json`` (``promptfoo eval -o results.json``).

One object whose ``results.results[]`` hold one entry per test and prompt/provider: ``testIdx``,
``promptIdx``, ``provider`` (``{"id", "label"}``), ``success``, ``score``, ``latencyMs``, ``cost``,
``response.tokenUsage`` (``total``, ``prompt``, ``completion``) and ``namedScores``. Mapping: id =
``testIdx``; verdict = ``success`` (``--field`` another dotted path); ``score`` and
``namedScores`` → quality; ``latencyMs`` / 1000 → latency; ``cost``; ``tokenUsage.total`` →
tokens. A file with several prompts or providers holds several candidates: pick one with
``--where promptIdx=1`` (or ``--where provider.id=...``); without it the file is refused.
Reference: promptfoo's EvaluateResult / EvaluateSummaryV3 (src/types/index.ts).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.readers.rows import ReadOptions, Row, dotted, matches_where
from ablation.sources.text import file_error

__all__ = ["detect", "rows"]


def detect(doc: Any) -> bool:
    """A promptfoo output: ``results.results`` is a list."""
    return isinstance(doc, Mapping) and isinstance(dotted(doc, "results.results"), list)


def rows(doc: Mapping[str, Any], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per kept result (``line`` is the result number, from 1)."""
    entries = dotted(doc, "results.results")
    if not options.where:
        combos = sorted({(str(e.get("promptIdx")), str(dotted(e, "provider.id"))) for e in entries
                         if isinstance(e, Mapping)})
        if len(combos) > 1:
            shown = ", ".join(f"promptIdx={p} provider.id={q}" for p, q in combos)
            raise file_error(
                InputError, display,
                f"holds several prompts/providers ({shown}): choose one with --where promptIdx=N",
            )
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, Mapping) or (options.where and not matches_where(entry, options.where)):
            continue
        quality = {f"score.{k}": float(v) for k, v in (entry.get("namedScores") or {}).items()
                   if isinstance(v, int | float) and not isinstance(v, bool)}
        if isinstance(score := entry.get("score"), int | float) and not isinstance(score, bool):
            quality["score"] = float(score)
        latency = _float(entry.get("latencyMs"))
        error = entry.get("error") if entry.get("failureReason") == 2 else None
        yield Row(
            number,
            dotted(entry, options.key or "testIdx"),
            dotted(entry, options.field or "success"),
            run=dotted(entry, options.run_field) if options.run_field else None,
            status="error" if error else "completed",
            error_type="ProviderError" if error else None,
            latency_s=None if latency is None else latency / 1000.0,
            cost=_float(entry.get("cost")),
            tokens=_float(dotted(entry, "response.tokenUsage.total")),
            quality=quality,
        )


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
