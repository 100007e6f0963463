"""Inspect AI evaluation logs: ``--log-format json`` files, and ``.eval`` archives via inspect-ai.

A log is one object with ``eval`` and ``samples[]``; each sample has ``id``, ``epoch`` (from 1),
``scores`` (``{scorer: {"value": "C"|"I"|"P"|"N"|number|bool}}``), ``model_usage`` (``{model:
{"total_tokens": n, ...}}``), ``total_time`` and ``error``. Mapping: id = ``id``; run =
``epoch - 1``; verdict = the value of the scorer ``--field`` names (default: the only scorer, an
error when there are several); latency = ``total_time``; tokens = the sum of ``total_tokens``;
numeric scorer values → quality; a sample with ``error`` is an error trial.

Verdict mapping (Inspect's ``CORRECT``/``INCORRECT``/``PARTIAL``/``NOANSWER``): ``C`` passes;
``I``, ``N`` and ``P`` fail (a partial answer is not a pass; ``--pass-values C,P`` counts it).
``.eval`` files are zip archives whose entries may be zstd-compressed, which the standard library
cannot read: they are read with ``inspect_ai.log.read_eval_log`` when inspect-ai is installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.readers.rows import ReadOptions, Row, dotted, matches_where
from ablation.sources.text import file_error

__all__ = ["INSPECT_VERDICTS", "detect", "inspect_verdict", "read_eval_archive", "rows"]

#: Inspect's letter values and the verdict each stands for.
INSPECT_VERDICTS = {"C": True, "I": False, "P": False, "N": False}


def detect(doc: Any) -> bool:
    """An Inspect log: an object with ``eval`` and ``samples`` (or ``version`` and ``eval``)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("eval"), Mapping) and (
        "samples" in doc or "version" in doc
    )


def inspect_verdict(value: Any) -> bool | None:
    """The documented mapping of Inspect's letter values (``None`` for anything else)."""
    return INSPECT_VERDICTS.get(value) if isinstance(value, str) else None


def read_eval_archive(path: str, display: str) -> dict[str, Any]:
    """The log of a ``.eval`` archive as JSON-like data, read by inspect-ai."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise file_error(
            InputError, display,
            "is an Inspect .eval archive: install inspect-ai to read it (pip install inspect-ai), "
            "or convert it with 'inspect log convert --to json'",
        ) from None
    try:
        log = read_eval_log(path)
    except Exception as exc:
        raise file_error(InputError, display, f"inspect-ai cannot read it ({exc})") from None
    data: dict[str, Any] = log.model_dump(mode="json")
    return data


def rows(doc: Mapping[str, Any], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per sample and epoch (``line`` is the sample number, from 1)."""
    samples = doc.get("samples")
    if not isinstance(samples, list):
        raise file_error(InputError, display, "the Inspect log has no samples (was it logged with samples?)")
    scorer = options.field or _only_scorer(samples, display)
    for number, sample in enumerate(samples, start=1):
        if not isinstance(sample, Mapping) or (options.where and not matches_where(sample, options.where)):
            continue
        task_id = dotted(sample, options.key) if options.key else sample.get("id")
        if options.run_field:
            run = dotted(sample, options.run_field)
        else:
            epoch = sample.get("epoch")
            run = epoch - 1 if isinstance(epoch, int) and not isinstance(epoch, bool) else epoch
        scores = sample.get("scores") or {}
        verdict = dotted(scores[scorer], "value") if scorer in scores else dotted(sample, scorer)
        usage = sample.get("model_usage") or {}
        tokens = [dotted(u, "total_tokens") for u in usage.values()]
        error = sample.get("error")
        yield Row(
            number,
            task_id,
            verdict,
            run=run,
            status="error" if error else "completed",
            error_type="SampleError" if error else None,
            latency_s=_float(sample.get("total_time")),
            tokens=float(sum(t for t in tokens if isinstance(t, int))) if tokens else None,
            quality={name: float(v) for name, s in scores.items()
                     if isinstance(v := dotted(s, "value"), int | float) and not isinstance(v, bool)},
        )


def _only_scorer(samples: list[Any], display: str) -> str:
    names: list[str] = []
    for sample in samples:
        for name in (sample.get("scores") or {}) if isinstance(sample, Mapping) else ():
            if name not in names:
                names.append(name)
    if len(names) != 1:
        raise file_error(
            InputError, display,
            f"choose the scorer with --field (scorers: {', '.join(names) or 'none'})",
        )
    return names[0]


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


