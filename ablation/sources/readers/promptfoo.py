"""promptfoo ``results.json`` (``promptfoo eval -o results.json``).

One object whose ``results.results[]`` hold one entry per test and prompt/provider: ``testIdx``,
``promptIdx``, ``provider`` (``{"id", "label"}``), ``success``, ``score``, ``latencyMs``, ``cost``,
``response.tokenUsage`` (``total``, ``prompt``, ``completion``) and ``namedScores``. Mapping: id =
``testIdx``; verdict = ``success`` (``--field`` another dotted path); ``score`` and
``namedScores`` → quality; ``latencyMs`` / 1000 → latency; ``cost``; ``tokenUsage.total`` →
tokens. A file with several prompts or providers holds several candidates: pick one with
``--where promptIdx=1`` (or ``--where provider.id=...``); without it the file is refused.
A result that failed with an error (``failureReason`` 2) is an error trial of type
``ProviderError`` at the ``agent`` stage whose message is ``error``.

Every entry of ``results.results`` is one result: the only entries not read are those
``--where`` leaves out, each still an object with an id (checked first: another tool's entry in
the list is refused, never left out as another prompt's). An entry that is not an object, that has no ``testIdx`` (or ``--key``
path) holding a string or an integer, or whose ``success`` is absent or not a boolean (the
``--field`` path absent) is refused with one line naming the file, the entry
(``results.results[1]``, from 0), the field and, once known, the task id; an error result is
not asked for a verdict. So is a ``score``, ``latencyMs``, ``cost``, ``namedScores`` value or
``tokenUsage.total`` that is not a number, a ``namedScores``, ``response`` or ``tokenUsage`` that
is not an object, and a token count that is not a whole number from 0 (absent or null: none).

Beside the verdict each trial keeps ``vars`` (input: the prompt's variables), the test's
``assert`` list (expected output, when the test has one), ``response.output`` (output),
``gradingResult.reason`` of a failed grade (the verifier's note), the rendered ``prompt.raw``
and the output as its trace, and its usage: ``tokenUsage`` ``prompt``, ``completion`` and
``cached`` tokens, ``numRequests`` model requests (1 when not given) and the model (the
provider id after its last ``:``, ``openai:gpt-4o-mini`` → ``gpt-4o-mini``).
Reference: promptfoo's EvaluateResult / EvaluateSummaryV3 (src/types/index.ts).
"""

from __future__ import annotations

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
    detail_fields,
    entry_error,
    entry_id,
    entry_mapping,
    entry_number,
    entry_object,
    text_of,
    usage_count,
    usage_with_metrics,
)
from ablation.sources.text import file_error, short_repr

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
    for number, item in enumerate(entries, start=1):
        where = f"results.results[{number - 1}]"
        entry = entry_object(item, display, where)
        task_id = entry_id(entry, options.key or "testIdx", display, where)  # before --where: a result
        if options.where and not matches_where(entry, options.where):
            continue

        def numeric(value: Any, name: str) -> float | None:
            return entry_number(value, name, display, where, task_id)  # noqa: B023 (called now)

        named = entry_mapping(entry.get("namedScores"), "namedScores", display, where, task_id) or {}
        quality = {f"score.{k}": n for k, v in named.items() if (n := numeric(v, f"namedScores.{k}")) is not None}
        if (score := numeric(entry.get("score"), "score")) is not None:
            quality["score"] = score
        latency = numeric(entry.get("latencyMs"), "latencyMs")
        response = entry_mapping(entry.get("response"), "response", display, where, task_id) or {}
        usage_record = entry_mapping(response.get("tokenUsage"), "response.tokenUsage", display, where, task_id)
        error = entry.get("error") if entry.get("failureReason") == 2 else None
        verdict = dotted(entry, options.field or "success")
        if not error:
            _check_verdict(verdict, options.field, display, where, task_id)
        usage = named_usage(lambda: _usage(entry), display, number, task_id)  # noqa: B023 (called now)
        yield Row(
            number,
            task_id,
            verdict,
            run=dotted(entry, options.run_field) if options.run_field else None,
            status="error" if error else "completed",
            error_type="ProviderError" if error else None,
            latency_s=None if latency is None else latency / 1000.0,
            cost=numeric(entry.get("cost"), "cost"),
            tokens=numeric((usage_record or {}).get("total"), "response.tokenUsage.total"),
            quality=quality,
            metrics=usage_with_metrics(usage, {}),
            extra=_details(entry, error, usage),
        )


def _check_verdict(verdict: Any, field: str | None, display: str, where: str, task_id: Any) -> None:
    """Refuse an absent verdict, or a ``success`` that is not a boolean (a ``--field`` path's
    value is checked by :func:`~ablation.sources.readers.rows.checked_rows`: it may be a number)."""
    if verdict is MISSING:
        raise entry_error(display, where, f"no {field or 'success'!r} field (the verdict)", task_id)
    if field is None and not isinstance(verdict, bool):
        raise entry_error(display, where, f"'success' must be true or false, got {short_repr(verdict)}", task_id)


def _details(entry: Mapping[str, Any], error: Any, usage: TrialUsage | None) -> dict[str, Any]:
    """Input, expected output, output, error message, note, trace and usage of one result."""
    output = dotted(entry, "response.output")
    output = None if output is MISSING else output
    reason = dotted(entry, "gradingResult.reason")
    failed = dotted(entry, "gradingResult.pass") is False and isinstance(reason, str) and reason
    prompt = dotted(entry, "prompt.raw")
    trace = [{"kind": "user", "parts": [{"kind": "text", "content": clip(prompt)}]}] if isinstance(prompt, str) else []
    if output is not None:
        trace.append({"kind": "assistant", "parts": [{"kind": "text", "content": clip(text_of(output))}]})
    expected = dotted(entry, "testCase.assert")
    inputs = entry.get("vars", dotted(entry, "testCase.vars"))
    return detail_fields(
        input=None if inputs is MISSING else inputs, expected_output=None if expected is MISSING else expected,
        output=output, usage=usage, trace=trace or None,
        error_message=clip(str(error)) if error else None, error_stage="agent" if error else None,
        verifier_note=clip(reason) if failed else None,
    )


def _usage(entry: Mapping[str, Any]) -> TrialUsage | None:
    """``response.tokenUsage`` as a usage (module docstring), ``None`` without one."""
    tokens = dotted(entry, "response.tokenUsage")
    if not isinstance(tokens, Mapping):
        return None

    def count(name: str, default: int = 0) -> int:
        return usage_count(tokens.get(name), f"response.tokenUsage.{name}", default)

    provider = dotted(entry, "provider.id")
    return TrialUsage(
        input_tokens=count("prompt"), output_tokens=count("completion"), cached_tokens=count("cached"),
        model_requests=count("numRequests", 1),
        model=provider.rsplit(":", 1)[-1] if isinstance(provider, str) and provider else None,
    )

