"""Inspect AI evaluation logs: ``--log-format json`` files, and ``.eval`` archives via inspect-ai.

A log is one object with ``eval`` and ``samples[]``; each sample has ``id``, ``epoch`` (from 1),
``scores`` (``{scorer: {"value": "C"|"I"|"P"|"N"|number|bool}}``), ``model_usage`` (``{model:
{"total_tokens": n, ...}}``), ``total_time`` and ``error``. Mapping: id = ``id``; run =
``epoch - 1``; verdict = the value of the scorer ``--field`` names (default: the only scorer, an
error when there are several, or none beside a sample without ``error``: a log whose every
sample failed needs no scorer); latency = ``total_time``; tokens = the sum of ``total_tokens``;
numeric scorer values → quality; a sample with ``error`` is an error trial, at the ``agent``
stage, its type and message read from ``error.message`` (``"RuntimeError('...')"``; else the
type is ``SampleError``), with the end of ``error.traceback``.

Beside the verdict each trial keeps ``input`` (a chat input as ``{"role", "content"}`` texts),
``target`` (expected output), ``output.completion`` (output), the verdict scorer's
``explanation`` when it says more than its ``answer`` (the verifier's note), ``messages`` as its
trace (:func:`~ablation.sources.readers.transcripts.chat_trace`: roles, texts, tool calls and
returns, bounded) and its usage: ``input_tokens``, ``output_tokens``, ``input_tokens_cache_read``
(cached) and ``input_tokens_cache_write`` (cache writes) summed over ``model_usage``, one model
request per assistant message, tool calls by function name, and the model (the only key of
``model_usage``, else the output's ``model``). Inspect's ``ModelUsage.input_tokens`` excludes the
cache reads and writes (its total input is the sum of the three, and ``total_tokens`` adds the
output), so they are added to the trial's input tokens; an entry whose ``total_tokens`` is its
input plus output alone (a log whose provider counted the cache within ``input_tokens``) keeps
its input as it is.

Every entry of ``samples`` is one trial: the only samples not read are those ``--where`` leaves
out, each still an object with an id (checked first: another tool's entry is refused, never left
out). A sample that is not an object, whose ``id`` (or ``--key`` path) is absent or not a string
or an integer, whose ``epoch`` is not an integer from 1, whose ``scores`` is not an object, or
(unless it has an ``error``) whose ``scores.SCORER.value`` is absent, null, a list or an object
is refused with one line naming the file, the sample (``samples[3]``, from 0), the field and,
once known, the task id; so is a ``total_time`` that is not a number, a ``model_usage`` (or one
model's entry) that is not an object, a count of it that is not a whole number from 0, and a
``messages`` or a message's ``tool_calls`` that is not a list (absent or null: none).

A log whose ``status`` is not ``"success"`` (``"started"``: a run still going, or killed; an
``.eval`` archive without its header reads so; ``"error"``, ``"cancelled"``) is read as it
stands, and the reader says so once on the ``ablation.sources.readers`` logger (a warning the
``ablation`` command prints): the samples it never ran are missing pairs, which the report lists
and the completeness gate counts.

Verdict mapping (Inspect's ``CORRECT``/``INCORRECT``/``PARTIAL``/``NOANSWER``): ``C`` passes;
``I``, ``N`` and ``P`` fail (a partial answer is not a pass; ``--pass-values C,P`` counts it).
``.eval`` files are zip archives whose entries may be zstd-compressed, which the standard library
cannot read: they are read with ``inspect_ai.log.read_eval_log`` when inspect-ai is installed,
never from the file given: :func:`~ablation.sources.readers.eval_archive.vetted_copy` checks the
entries (their declared sizes, what each holds, decompressed in 1 MiB steps) and writes them
uncompressed to a temporary archive, which inspect-ai reads (a file without a directory is named a
truncated ``.eval`` archive). The same holds for a gzip-compressed archive (``.eval.gz``) and one
on standard input.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.outputs import TrialUsage
from ablation.sources.readers.eval_archive import vetted_copy
from ablation.sources.readers.rows import (
    MISSING,
    ReadOptions,
    Row,
    dotted,
    json_number,
    json_numbers,
    matches_where,
    named_usage,
)
from ablation.sources.readers.transcripts import (
    chat_trace,
    clip,
    clip_tail,
    count,
    detail_fields,
    entry_error,
    entry_id,
    entry_list,
    entry_mapping,
    entry_number,
    entry_object,
    split_error,
    text_of,
    usage_count,
    usage_with_metrics,
)
from ablation.sources.text import MAX_BYTES, file_error, short_repr

__all__ = ["INSPECT_VERDICTS", "detect", "inspect_verdict", "read_eval_archive", "rows"]

#: Messages of a chat input kept (its first ones).
MAX_INPUT_MESSAGES = 50
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


def read_eval_archive(display: str, data: bytes, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The log of a ``.eval`` archive as JSON-like data, read by inspect-ai from a checked copy.

    Args:
        display: The name errors give.
        data: The archive's bytes (read from its file or standard input, gzip decompressed).
        max_bytes: The most its entries may declare in all (``--max-input-bytes``).
    """
    with tempfile.TemporaryDirectory() as folder:
        path = vetted_copy(data, display, folder, max_bytes)  # checked before anything reads it
        try:
            from inspect_ai.log import read_eval_log
        except ImportError:
            raise file_error(
                InputError, display,
                "is an Inspect .eval archive: install inspect-ai to read it (pip install "
                "inspect-ai), or convert it with 'inspect log convert --to json'",
            ) from None
        try:
            log = read_eval_log(path)
        except Exception as exc:
            raise file_error(InputError, display, f"inspect-ai cannot read it ({exc})") from None
    result: dict[str, Any] = log.model_dump(mode="json")
    return result



_log = logging.getLogger("ablation.sources.readers")


def rows(doc: Mapping[str, Any], display: str, options: ReadOptions) -> Iterator[Row]:
    """One row per sample and epoch (``line`` is the sample number, from 1); an unfinished log
    said on the log (module docstring)."""
    status = doc.get("status")
    if status not in (None, "success"):
        _log.warning(
            "%s: the Inspect log's status is %s, not 'success': the run did not finish, so the "
            "samples it never ran are missing pairs", display, short_repr(status),
        )  # fmt: skip
    samples = doc.get("samples")
    if not isinstance(samples, list):
        raise file_error(InputError, display, "the Inspect log has no samples (was it logged with samples?)")
    scorer = options.field or _only_scorer(samples, display)
    for number, item in enumerate(samples, start=1):
        where = f"samples[{number - 1}]"
        sample = entry_object(item, display, where)
        task_id = entry_id(sample, options.key or "id", display, where)  # before --where: a result
        if options.where and not matches_where(sample, options.where):
            continue
        run = dotted(sample, options.run_field) if options.run_field else _run(sample, display, where, task_id)
        scores = sample.get("scores") or {}
        if not isinstance(scores, Mapping):
            raise entry_error(display, where, f"'scores' must be an object, got {short_repr(scores)}", task_id)
        verdict = dotted(scores[scorer], "value") if scorer in scores else MISSING
        if scorer is not None and scorer not in scores:
            verdict = dotted(sample, scorer)
        model_usage = entry_mapping(sample.get("model_usage"), "model_usage", display, where, task_id) or {}
        for n, message in enumerate(entry_list(sample.get("messages"), "messages", display, where, task_id) or ()):
            if isinstance(message, Mapping):  # (a message of another shape is left out of the trace)
                entry_list(message.get("tool_calls"), f"messages[{n}].tool_calls", display, where, task_id)
        usage = named_usage(lambda: _usage(sample), display, number, task_id)  # noqa: B023 (called now)
        tokens = [_count(model, u, "total_tokens") for model, u in model_usage.items()]  # checked by _usage
        error_type, extra = _error(sample.get("error"))
        if not error_type and scorer is not None:  # (no scorer: every sample has an error)
            _check_verdict(verdict, scorer, scorer in scores or not options.field, display, where, task_id)
        yield Row(
            number,
            task_id,
            verdict,
            run=run,
            status="error" if error_type else "completed",
            error_type=error_type,
            latency_s=entry_number(sample.get("total_time"), "total_time", display, where, task_id),
            tokens=json_number(sum(tokens)) if tokens else None,
            quality=json_numbers((name, dotted(s, "value")) for name, s in scores.items()),
            metrics=usage_with_metrics(usage, {}),
            extra={**extra, **detail_fields(
                input=_input(sample.get("input")), expected_output=sample.get("target"),
                output=None if error_type else dotted(sample, "output.completion") or None,
                usage=usage, trace=chat_trace(sample.get("messages")),
                verifier_note=_note(scores.get(scorer)),
            )},
        )


def _run(sample: Mapping[str, Any], display: str, where: str, task_id: Any) -> int:
    """The run of a sample: ``epoch - 1`` (0 without an epoch); an epoch that is not an integer
    from 1 is refused naming it (:func:`entry_error`)."""
    epoch = sample.get("epoch")
    if epoch is None:
        return 0
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise entry_error(display, where, f"'epoch' must be an integer from 1, got {short_repr(epoch)}", task_id)
    return epoch - 1


def _check_verdict(value: Any, scorer: str, scored: bool, display: str, where: str, task_id: Any) -> None:
    """Refuse a verdict that is absent or can be none (null, a list, an object), naming
    ``scores.SCORER.value`` (``scored``: the scorer's, not a ``--field`` path of the sample)."""
    path = f"scores.{scorer}.value" if scored else scorer
    if value is MISSING:
        what = f"no {path!r} field" if scored else f"no scorer or field {scorer!r}"
        raise entry_error(display, where, f"{what} (the verdict)", task_id)
    if value is None or isinstance(value, list | Mapping):
        raise entry_error(display, where, f"{path!r} must be a letter (C, I, P, N), a number or a boolean, got "
                          f"{short_repr(value)}", task_id)  # fmt: skip


def _error(error: Any) -> tuple[str | None, dict[str, Any]]:
    """``(error type, the row's error fields)`` of a sample's ``error`` (``(None, {})``: none)."""
    if not error:
        return None, {}
    message = dotted(error, "message")
    error_type, text = split_error(message) if isinstance(message, str) else (None, "")
    traceback = dotted(error, "traceback")
    return error_type or "SampleError", detail_fields(
        error_stage="agent", error_message=clip(text) if text else None,
        error_traceback=clip_tail(traceback) if isinstance(traceback, str) and traceback else None,
    )


def _usage(sample: Mapping[str, Any]) -> TrialUsage | None:
    """The sample's usage (module docstring), or ``None`` without ``model_usage``."""
    model_usage = sample.get("model_usage")
    if not isinstance(model_usage, Mapping) or not model_usage:
        return None

    for model, counts in model_usage.items():
        if not isinstance(counts, Mapping):
            raise ValueError(f"'model_usage.{model}' must be an object, got {short_repr(counts)}")

    def total(name: str) -> int:
        return sum(_count(model, u, name) for model, u in model_usage.items())

    messages = [m for m in sample.get("messages") or () if isinstance(m, Mapping)]
    replies = [m for m in messages if m.get("role") == "assistant"]
    calls = [dotted(c, "function") for m in replies for c in m.get("tool_calls") or ()]
    model = next(iter(model_usage)) if len(model_usage) == 1 else dotted(sample, "output.model")
    return TrialUsage(
        input_tokens=sum(_input_tokens(model, u) for model, u in model_usage.items()), output_tokens=total("output_tokens"),
        cached_tokens=total("input_tokens_cache_read"), cache_write_tokens=total("input_tokens_cache_write"),
        model_requests=len(replies),
        tool_calls=count([str(c) for c in calls if isinstance(c, str) and c]),
        model=model if isinstance(model, str) else None,
    )  # fmt: skip


def _count(model: str, usage: Mapping[str, Any], name: str) -> int:
    """The count ``name`` of ``model``'s ``model_usage`` entry (:func:`usage_count`: 0 when absent or null)."""
    return usage_count(usage.get(name), f"model_usage.{model}.{name}")


def _input_tokens(model: str, usage: Mapping[str, Any]) -> int:
    """Every prompt token of one ``model_usage`` entry, cache reads and writes included (module
    docstring: added unless ``total_tokens`` shows the entry's input already holds them)."""
    inputs, output = _count(model, usage, "input_tokens"), _count(model, usage, "output_tokens")
    cache = _count(model, usage, "input_tokens_cache_read") + _count(model, usage, "input_tokens_cache_write")
    total = _count(model, usage, "total_tokens")
    return inputs if cache and total and total == inputs + output else inputs + cache


def _input(value: Any) -> Any:
    """A sample's input: its text, or a chat input as ``{"role", "content"}`` texts."""
    if isinstance(value, list):
        return [{"role": str(dotted(m, "role")), "content": clip(text_of(dotted(m, "content")))}
                for m in value[:MAX_INPUT_MESSAGES] if isinstance(m, Mapping)]
    return value


def _note(score: Any) -> str | None:
    """The verdict scorer's explanation, when it says more than its answer."""
    explanation, answer = dotted(score, "explanation"), dotted(score, "answer")
    if isinstance(explanation, str) and explanation.strip() and explanation != answer:
        return clip(explanation)
    return None


def _only_scorer(samples: list[Any], display: str) -> str | None:
    """The one scorer of the samples; ``None`` when no sample was scored and every one has an
    ``error`` (a run that failed throughout: error trials need no verdict); several scorers, or
    none beside a sample that ran, is an error asking for ``--field``."""
    if not samples:
        raise file_error(InputError, display, "the Inspect log's samples list is empty: no results")
    names: list[str] = []
    for sample in samples:  # (a sample, or its scores, of another shape is refused by :func:`rows`)
        scores = sample.get("scores") if isinstance(sample, Mapping) else None
        for name in scores if isinstance(scores, Mapping) else ():
            if name not in names:
                names.append(name)
    if not names and all(isinstance(sample, Mapping) and sample.get("error") for sample in samples):
        return None
    if len(names) != 1:
        raise file_error(
            InputError, display,
            f"choose the scorer with --field (scorers: {', '.join(names) or 'none'})",
        )
    return names[0]


