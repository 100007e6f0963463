"""A trial's OpenTelemetry spans as stored data, and what they say: model calls, tools, tokens.

:mod:`ablation.run.spans` collects the spans that instrumented code ends during a trial and
packs them here as :class:`TrialSpans`: one plain record per span (name, ids, start offset and
duration in seconds, status, attributes), JSON-encoded, zlib-compressed and base64-encoded so
that it travels inside the trial's JSON (store row, JSONL export, worker pipe) unchanged. This
module imports no OpenTelemetry package (and of the package only the ground rule of a count,
:func:`ablation.outputs.as_count`): a stored campaign's spans read back and summarise where the
SDK is not installed.

:func:`summarize` reads the GenAI semantic conventions
(https://opentelemetry.io/docs/specs/semconv/gen-ai/): a *model call* is a span with
``gen_ai.request.model`` or ``gen_ai.response.model`` whose ``gen_ai.operation.name`` is not
an agent or tool operation; a *tool call* is a span with ``gen_ai.tool.name`` (or the operation
``execute_tool``). Token counts (``gen_ai.usage.input_tokens`` / ``output_tokens``, and the older
``prompt_tokens`` / ``completion_tokens``; cache reads ``gen_ai.usage.cache_read.input_tokens`` and
cache writes ``gen_ai.usage.cache_creation.input_tokens``, which the conventions count within the
input tokens) are summed over the outermost model calls only: when
two instrumentations both record one request (pydantic-ai's model span around the OpenAI
client's span) or an agent span repeats its run's totals, nothing is counted twice. A response
pydantic-ai's ``FallbackModel`` rejected is billed: its attempt span, inside the ``chat`` span of
the request another model answered, states its usage and is a model call of its own. When one of
those calls states neither an input nor an output count, or gives a count that is no whole number
from 0 below 2**52 (``inf``, ``-5``, ``2.5``, text), the sums are unknown (``None``), never the
smaller sum of the calls that stated theirs nor a count cut to fit; so is a sum of 2**52 or more.
"""

# No ``from __future__ import annotations``: pydantic reads the fields' types without parsing.

import base64
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ablation.outputs import COUNT_LIMIT, as_count

__all__ = [
    "READ_ATTRIBUTES", "STEP_ATTRIBUTES", "SpanSummary", "TrialSpans", "answered_tools", "billed_attempt",
    "counted_calls", "stated", "summarize", "tool_name",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _no_items() -> list[Any]:
    """A new empty list (a Python function: pydantic does not parse ``list``'s text signature)."""
    return []


#: ``gen_ai.operation.name`` values that are not a model call even with a model attribute.
_NOT_MODEL_CALLS = frozenset({"invoke_agent", "create_agent", "execute_tool"})
_INPUT = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_OUTPUT = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
_CACHED = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_tokens")
_CACHE_WRITE = ("gen_ai.usage.cache_creation.input_tokens",)
#: The provider a model call's span names (the older conventions' ``gen_ai.system``).
_PROVIDER = ("gen_ai.provider.name", "gen_ai.system")
#: The attribute pydantic-ai sets on the span of an earlier attempt at a model request.
_ATTEMPT = "pydantic_ai.model_request.attempt"
#: How pydantic-ai's ``logfire.msg`` starts on the ``execute_tool`` span of an output function
#: (``ToolOutput``): the run's output, which its ``RunUsage.tool_calls`` does not count.
_OUTPUT_FUNCTION = ("logfire.msg", "running output function")
#: Spans whose durations a summary lists (the first ones, by start).
SUMMARY_SPANS = 50
#: The GenAI semantic conventions' attributes that say what a span did, kept in its step: an
#: instrumentation may name every tool span alike (pydantic-ai's ``running tool``) and give the
#: tool only here.
STEP_ATTRIBUTES = ("gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.tool.name", "gen_ai.request.model")
#: Every attribute a summary or a step reads: a span's record keeps these first when it cannot
#: keep all of its attributes (:mod:`ablation.run.spans`).
READ_ATTRIBUTES = (
    *STEP_ATTRIBUTES, "gen_ai.response.model", _ATTEMPT, _OUTPUT_FUNCTION[0], *_PROVIDER, *_INPUT, *_OUTPUT,
    *_CACHED, *_CACHE_WRITE,
)


class TrialSpans(BaseModel):
    """The spans of one trial, bounded and compressed.

    Attributes:
        count: Spans kept.
        dropped: Spans the trial ended beyond the per-trial caps (count or bytes), not kept.
        data: The kept span records: a JSON list, zlib-compressed, base64-encoded. Each record
            has ``name``, ``id`` and ``parent`` (hex span ids; ``parent`` is ``None`` for a span
            directly under the trial), ``start_s`` (seconds after the trial's agent call began), ``duration_s``,
            ``status`` (``"unset"``, ``"ok"`` or ``"error"``), ``error`` (the status description
            or the recorded exception, else ``None``) and ``attributes``.
    """

    model_config = _FROZEN

    count: int = Field(default=0, ge=0)
    dropped: int = Field(default=0, ge=0)
    data: str = ""

    @classmethod
    def pack(cls, encoded: Sequence[str], dropped: int = 0) -> "TrialSpans":
        """Spans from their records already JSON-encoded one by one (as the collector keeps them)."""
        text = "[" + ",".join(encoded) + "]"
        data = base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")
        return cls(count=len(encoded), dropped=dropped, data=data)

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]], dropped: int = 0) -> "TrialSpans":
        """Spans from plain records (see :attr:`data`)."""
        return cls.pack([json.dumps(dict(r), separators=(",", ":")) for r in records], dropped)

    def records(self) -> list[dict[str, Any]]:
        """The kept span records, in the order they ended."""
        if not self.data:
            return []
        found = json.loads(zlib.decompress(base64.b64decode(self.data)))
        return [r for r in found if isinstance(r, dict)]

    def steps(self) -> list[dict[str, Any]]:
        """The kept spans in start order as comparable steps: ``name``, ``status``, for a failed
        span ``error``, and the attributes of :data:`STEP_ATTRIBUTES` the span sets (no ids or
        timings, so two trials that did the same match, and two that called different tools or
        models under one span name, as ``running tool``, differ)."""
        return [_step(r) for r in sorted(self.records(), key=_start)]

    def summary(self) -> "SpanSummary":
        """:func:`summarize` of the kept records, with :attr:`dropped`."""
        return summarize(self.records(), dropped=self.dropped)


class SpanDuration(BaseModel):
    """One span in a summary: its name, when it started, how long it took, its status."""

    model_config = _FROZEN

    name: str
    start_s: float
    duration_s: float
    status: str = "unset"


class SpanSummary(BaseModel):
    """What a trial's spans say, for the drill-down.

    Attributes:
        spans: Spans kept.
        dropped: Spans not kept (over the per-trial caps).
        model_calls: Outermost model-call spans and billed attempts (see the module docstring).
        models: The models called, in order of first use (response model, else request model).
        tools: Tool calls in the order they started.
        errors: ``"span name: description"`` of each span whose status is an error.
        input_tokens: Input tokens over the outermost model calls; each of the four token
            sums is ``None`` when one of those calls states no token count (:func:`stated`).
        output_tokens: Output tokens over the outermost model calls.
        cached_tokens: Cache-read input tokens over the outermost model calls.
        cache_write_tokens: Input tokens written to the cache over the outermost model calls.
        timeline: The first :data:`SUMMARY_SPANS` spans by start, with their durations.
    """

    model_config = _FROZEN

    spans: int = 0
    dropped: int = 0
    model_calls: int = 0
    models: list[str] = Field(default_factory=_no_items)
    tools: list[str] = Field(default_factory=_no_items)
    errors: list[str] = Field(default_factory=_no_items)
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cached_tokens: int | None = 0
    cache_write_tokens: int | None = 0
    timeline: list[SpanDuration] = Field(default_factory=_no_items)


def _attr(attrs: Mapping[str, Any], names: Sequence[str]) -> Any:
    return next((attrs[n] for n in names if attrs.get(n) is not None), None)


def _int(value: Any) -> int:
    """A stated call's token count (:func:`stated`): 0 when the attribute is absent."""
    return as_count(value) or 0


def _attrs(record: Mapping[str, Any]) -> Mapping[str, Any]:
    attrs = record.get("attributes")
    return attrs if isinstance(attrs, Mapping) else {}


def _is_model_call(attrs: Mapping[str, Any]) -> bool:
    model = _attr(attrs, ("gen_ai.request.model", "gen_ai.response.model"))
    return model is not None and attrs.get("gen_ai.operation.name") not in _NOT_MODEL_CALLS


def stated(attrs: Mapping[str, Any]) -> bool:
    """Whether a model call's attributes state its token counts: an input or an output count,
    and every token count it gives a usable one (:func:`~ablation.outputs.as_count`). A count
    that is no whole number from 0 (``inf``, ``-5``, ``2.5``, ``"100"``) states nothing: the
    call's tokens are unknown, never that count cut to a whole number or taken as 0."""
    given = [_attr(attrs, names) for names in (_INPUT, _OUTPUT, _CACHED, _CACHE_WRITE)]
    if given[0] is None and given[1] is None:
        return False
    return all(value is None or as_count(value) is not None for value in given)


def _is_tool_call(attrs: Mapping[str, Any]) -> bool:
    return attrs.get("gen_ai.operation.name") == "execute_tool" or attrs.get("gen_ai.tool.name") is not None


def tool_name(record: Mapping[str, Any]) -> str:
    """The tool a tool-call span record called: ``gen_ai.tool.name``, else the span's name."""
    return str(_attr(_attrs(record), ("gen_ai.tool.name",)) or record.get("name") or "?")


def answered_tools(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tools of the tool-call span records that did not fail (status other than
    ``"error"``), in start order, but a pydantic-ai output function's: the calls pydantic-ai's
    ``RunUsage.tool_calls`` counts, as a trial's usage counts them (a call that raised, a
    ``ModelRetry`` included, is no call, nor is the run's output)."""
    name, prefix = _OUTPUT_FUNCTION
    return [
        tool_name(r) for r in sorted(records, key=_start)
        if _is_tool_call(_attrs(r)) and r.get("status") != "error" and not str(_attrs(r).get(name) or "").startswith(prefix)
    ]  # fmt: skip


def _step(record: Mapping[str, Any]) -> dict[str, Any]:
    attrs = _attrs(record)
    return {
        "name": record.get("name"), "status": record.get("status"),
        **({"error": record["error"]} if record.get("error") else {}),
        **{k: attrs[k] for k in STEP_ATTRIBUTES if attrs.get(k) is not None},
    }  # fmt: skip


def _start(record: Mapping[str, Any]) -> float:
    value = record.get("start_s")
    return float(value) if isinstance(value, int | float) else 0.0


def billed_attempt(attrs: Mapping[str, Any]) -> bool:
    """Whether a span is an earlier attempt at a model request that returned a response its
    stated usage bills (pydantic-ai's ``FallbackModel``: a response its ``fallback_on`` handler
    rejected, recorded as a child of the request's ``chat`` span with :data:`_ATTEMPT`)."""
    return attrs.get(_ATTEMPT) is not None and _is_model_call(attrs) and stated(attrs)


def counted_calls(ordered: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The model calls a summary counts among span records in start order: the outermost ones
    (a model-call span inside another is the same call seen by two instrumentations), and each
    billed attempt (:func:`billed_attempt`: another call, to another model, inside the request
    whose ``chat`` span holds it; an attempt that raised states no usage and is not counted).

    Assumption: a record's ``parent`` names a span of the same trial or none; a parent that was
    dropped counts as absent (the span is then outermost).
    """
    by_id = {r.get("id"): r for r in ordered if r.get("id") is not None}
    calls = {id(r) for r in ordered if _is_model_call(_attrs(r))}
    attempts = {id(r) for r in ordered if id(r) in calls and billed_attempt(_attrs(r))}

    def outermost(record: Mapping[str, Any]) -> bool:
        parent, seen = record.get("parent"), 0
        while parent is not None and parent in by_id and seen < len(by_id):
            above = by_id[parent]
            if id(above) in calls:
                return False
            parent, seen = above.get("parent"), seen + 1
        return True

    return [r for r in ordered if id(r) in attempts or (id(r) in calls and outermost(r))]


def _token_sums(counted: Sequence[Mapping[str, Any]]) -> dict[str, int | None]:
    """The four token sums of a summary over ``counted`` calls, each ``None`` when a call states
    no token count."""
    names = {"input_tokens": _INPUT, "output_tokens": _OUTPUT, "cached_tokens": _CACHED,
             "cache_write_tokens": _CACHE_WRITE}  # fmt: skip
    if not all(stated(_attrs(r)) for r in counted):
        return dict.fromkeys(names)
    sums = {name: sum(_int(_attr(_attrs(r), keys)) for r in counted) for name, keys in names.items()}
    return {name: total if total < COUNT_LIMIT else None for name, total in sums.items()}  # no result holds more


def summarize(records: Sequence[Mapping[str, Any]], dropped: int = 0, timeline: bool = True) -> SpanSummary:
    """The :class:`SpanSummary` of span records (any order; see the module docstring); without
    its timeline when ``timeline`` is false (what a trial's usage needs, built faster). Its
    model calls are :func:`counted_calls`.
    """
    ordered = sorted(records, key=_start)
    counted = counted_calls(ordered)
    models: list[str] = []
    for r in counted:
        model = _attr(_attrs(r), ("gen_ai.response.model", "gen_ai.request.model"))
        if model is not None and str(model) not in models:
            models.append(str(model))
    tools = [tool_name(r) for r in ordered if _is_tool_call(_attrs(r))]
    errors = [
        f"{r.get('name')}: {r.get('error')}" if r.get("error") else str(r.get("name"))
        for r in ordered if r.get("status") == "error"
    ]  # fmt: skip
    return SpanSummary(
        spans=len(ordered),
        dropped=dropped,
        model_calls=len(counted),
        models=models,
        tools=tools,
        errors=errors,
        **_token_sums(counted),
        timeline=[] if not timeline else [
            SpanDuration(
                name=str(r.get("name")), start_s=_start(r),
                duration_s=float(r.get("duration_s") or 0.0), status=str(r.get("status") or "unset"),
            )
            for r in ordered[:SUMMARY_SPANS]
        ],
    )
