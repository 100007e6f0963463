"""Collects each trial's OpenTelemetry spans from code that is already instrumented.

With the ``otel`` extra (``opentelemetry-sdk``) and ``CampaignConfig.traces`` not ``"off"``, each
trial's agent call (every attempt; not its setup hook nor its verifier, whose model calls are not
the agent's) runs under its own span, ``ablation.trial`` (attributes ``ablation.task_id``,
``ablation.arm``, ``ablation.run``), started as the root of a fresh trace. Every span that
instrumented code starts inside it (pydantic-ai ``instrument=True``,
``opentelemetry-instrumentation-openai-v2``, OpenInference, logfire, the user's own) inherits
that trace id, so a :class:`SpanCollector` added to the SDK ``TracerProvider`` files each ended
span under its trial by trace id, whatever the concurrency: async agents carry the context in
their task, and sync agents run by the engine's threads get the trial's context attached
(:meth:`SpanCollector.bind`).

Assumptions and limits:

- The provider: the global one when it is an SDK ``TracerProvider`` (the collector is *added*
  to it; the user's processors and exporters keep receiving every span, the trial spans too);
  when no provider is set, an SDK ``TracerProvider`` with only the collector is installed as the
  global one only where ablation may change process-wide state: in the ``ablation`` command's
  own process (:func:`ablation.process_hooks.owns_process`) or when ``traces="on"`` asks for it.
  A library call with ``traces="auto"`` leaves an unset provider unset (OpenTelemetry allows one
  global provider, and the application may set its own later) and collects nothing.
  Any other provider (a no-op one) cannot take a processor: nothing is collected.
- A span is collected when it *ends* before its trial's agent call does; spans of work left running after the
  trial, spans the user's sampler drops, spans started under an explicit fresh root context, and
  spans of agents run in worker processes (``isolation="process"``) or in a user-supplied
  executor are not.
- Per trial at most :data:`MAX_SPANS` spans and :data:`MAX_BYTES` bytes of encoded records are
  kept; further spans are counted in ``TrialSpans.dropped``. Attribute values, a span's name and
  its error text are cut to :data:`MAX_VALUE_CHARS` characters; at most :data:`MAX_ATTRIBUTES`
  attributes are kept per span, those a summary reads (usage, models, tools) first.
- Usage from spans (:func:`usage_from_spans`): a trial with a counted model call (as
  :func:`ablation.spans.summarize` counts them) has usage: its model requests, tool calls (those
  that did not fail, :func:`~ablation.spans.answered_tools`) and
  model (several joined by ``"+"``); its token counts are known only when every counted call
  states them in ``gen_ai.usage.input_tokens`` / ``output_tokens`` (or the older
  ``prompt_tokens`` / ``completion_tokens``), else unknown (``None``); each call keeps its own
  model and tokens, so that a trial calling two models is priced call by call.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import Field

from ablation.errors import ConfigError
from ablation.outputs import ItemizedUsage, TrialUsage, joined_models
from ablation.spans import (  # as it counts them
    _CACHE_WRITE,
    _CACHED,
    _INPUT,
    _OUTPUT,
    _PROVIDER,
    READ_ATTRIBUTES,
    SpanSummary,
    TrialSpans,
    _attr,
    _int,
    _no_items,
    answered_tools,
    billed_attempt,
    counted_calls,
    stated,
    summarize,
)

__all__ = [
    "MAX_ATTRIBUTES",
    "MAX_BYTES",
    "MAX_SPANS",
    "MAX_VALUE_CHARS",
    "CaughtSummary",
    "SpanCollector",
    "TrialCatch",
    "open_collector",
    "usage_from_spans",
]

MAX_SPANS = 2000
MAX_BYTES = 1024 * 1024
MAX_VALUE_CHARS = 4000
MAX_ATTRIBUTES = 64
TRIAL_SPAN = "ablation.trial"

_LOCK = threading.Lock()
#: One encoder for every record (``json.dumps`` with options builds a new one per call).
_ENCODE = json.JSONEncoder(separators=(",", ":"), default=str, check_circular=False).encode
_PLAIN = (bool, int, float, type(None))
_COLLECTOR: SpanCollector | None = None


def sdk_available() -> bool:
    """True when ``opentelemetry-sdk`` is importable."""
    try:
        return importlib.util.find_spec("opentelemetry.sdk.trace") is not None
    except ModuleNotFoundError:
        return False


def _value(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "..."
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, tuple | list):
        return [_value(v) for v in value[:MAX_ATTRIBUTES]]
    return _value(str(value))


def _error(span: Any) -> str | None:
    """The status description, else the first recorded exception's ``type: message``; cut as
    an attribute value is (:data:`MAX_VALUE_CHARS`)."""
    description = getattr(span.status, "description", None)
    if description:
        return str(_value(str(description)))
    for event in span.events or ():
        if event.name == "exception":
            attrs = event.attributes or {}
            text = f"{attrs.get('exception.type', '?')}: {attrs.get('exception.message', '')}"
            return str(_value(text))
    return None


def _kept_attributes(attributes: Any) -> dict[str, Any]:
    """At most :data:`MAX_ATTRIBUTES` of a span's attributes, in their order: every one a summary
    reads (:data:`~ablation.spans.READ_ATTRIBUTES`; an instrumentation that records each prompt
    message as attributes sets the usage after them), then the first of the others."""
    if len(attributes) <= MAX_ATTRIBUTES:
        return dict(attributes)
    kept = {name for name in READ_ATTRIBUTES if name in attributes}
    for name in attributes:
        if len(kept) >= MAX_ATTRIBUTES:
            break
        kept.add(name)
    return {name: value for name, value in attributes.items() if name in kept}


class CaughtSummary(SpanSummary):
    """The summary of a trial's kept spans with each counted model call's own usage.

    Attributes:
        calls: One usage per counted model call, in start order (its model and tokens;
            ``None`` when the span states no token counts).
        requests: The model requests among them: every counted call but the billed attempts
            (:func:`~ablation.spans.billed_attempt`), each of which was part of the request
            another model then answered, as pydantic-ai's own ``RunUsage.requests`` counts.
        answered: The tool calls that did not fail (:func:`~ablation.spans.answered_tools`),
            which the usage counts, as pydantic-ai's ``RunUsage.tool_calls`` does.
        providers: The provider each of :attr:`calls` names (``gen_ai.provider.name``, else the
            older ``gen_ai.system``; ``None`` when it names none), which picks its price.
    """

    calls: list[TrialUsage | None] = Field(default_factory=_no_items)
    requests: int = 0
    providers: list[str | None] = Field(default_factory=_no_items)
    answered: list[str] = Field(default_factory=_no_items)


def _model_calls(records: list[dict[str, Any]]) -> tuple[list[TrialUsage | None], int, list[str | None]]:
    """Each model call :func:`~ablation.spans.summarize` counts (:func:`~ablation.spans.counted_calls`),
    in start order, as a usage with its own model and tokens (``None`` for one stating no token
    count), how many of them are requests (:attr:`CaughtSummary.requests`), and the provider
    each names (:attr:`CaughtSummary.providers`)."""
    found: list[TrialUsage | None] = []
    requests = 0
    providers: list[str | None] = []
    for record in counted_calls(sorted(records, key=lambda r: float(r.get("start_s") or 0.0))):
        attrs = record.get("attributes") or {}
        requests += not billed_attempt(attrs)
        provider = _attr(attrs, _PROVIDER)
        providers.append(None if provider is None else str(provider))
        if not stated(attrs):
            found.append(None)
            continue
        model = _attr(attrs, ("gen_ai.response.model", "gen_ai.request.model"))
        found.append(TrialUsage(
            input_tokens=_int(_attr(attrs, _INPUT)), output_tokens=_int(_attr(attrs, _OUTPUT)),
            cached_tokens=_int(_attr(attrs, _CACHED)), cache_write_tokens=_int(_attr(attrs, _CACHE_WRITE)),
            model_requests=1, model=None if model is None else str(model),
        ))  # fmt: skip
    return found, requests, providers


class TrialCatch:
    """The spans of one running trial, filled by the collector (thread-safe)."""

    def __init__(self, start_ns: int, root_id: int) -> None:
        self.start_ns = start_ns
        self.root_id = root_id  # the trial span's id: a span directly under it has no parent
        self.encoded: list[str] = []
        self.records: list[dict[str, Any]] = []
        self.size = 0
        self.dropped = 0
        self.lock = threading.Lock()

    def add(self, span: Any) -> None:
        """Keep ``span`` (an SDK ``ReadableSpan``) unless a cap is reached (then count it)."""
        if len(self.encoded) >= MAX_SPANS:
            with self.lock:
                self.dropped += 1
            return
        status = span.status.status_code.name.lower()
        parent = span.parent
        attrs = _kept_attributes(span.attributes or {})
        record = {
            "name": _value(str(span.name)),
            "id": format(span.context.span_id, "016x"),
            "parent": None if parent is None or parent.span_id == self.root_id else format(parent.span_id, "016x"),
            "start_s": round((span.start_time - self.start_ns) / 1e9, 6),
            "duration_s": round(((span.end_time or span.start_time) - span.start_time) / 1e9, 6),
            "status": status,
            "error": _error(span) if status == "error" else None,
            "attributes": {str(k): _value(v) for k, v in attrs.items()},
        }
        text = _ENCODE(record)
        with self.lock:
            if len(self.encoded) >= MAX_SPANS or self.size + len(text) > MAX_BYTES:
                self.dropped += 1
                return
            self.encoded.append(text)
            self.records.append(record)
            self.size += len(text)

    def spans(self) -> TrialSpans | None:
        """The kept spans, or ``None`` when the trial ended none."""
        with self.lock:
            if not self.encoded and not self.dropped:
                return None
            return TrialSpans.pack(self.encoded, self.dropped)

    def summary(self) -> CaughtSummary:
        """The kept spans' summary without its timeline (read from the records, not the packed
        data), with each model call's usage, for :func:`usage_from_spans`."""
        with self.lock:
            records = list(self.records)
        summary = summarize(records, self.dropped, timeline=False)
        calls, requests, providers = _model_calls(records) if summary.model_calls else ([], 0, [])
        return CaughtSummary(
            **dict(summary), calls=calls, requests=requests, providers=providers, answered=answered_tools(records)
        )


class SpanCollector:
    """A span processor that files ended spans under their trial, and starts trials' spans.

    Implements the SDK's ``SpanProcessor`` interface (``on_start``, ``on_end``, ``shutdown``,
    ``force_flush``) without subclassing it, so this module imports without the SDK.
    """

    def __init__(self, provider: Any) -> None:
        from opentelemetry import trace

        self._trace = trace
        self.provider = provider
        self._tracer = provider.get_tracer("ablation")
        self._open: dict[int, TrialCatch] = {}

    # ---- SpanProcessor
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        """Nothing to do when a span starts."""

    def _on_ending(self, span: Any) -> None:
        """Nothing to do before a span ends."""

    def on_end(self, span: Any) -> None:
        """File ``span`` under the open trial of its trace (ignored when there is none)."""
        catch = self._open.get(span.context.trace_id)
        if catch is not None and span.name != TRIAL_SPAN:
            catch.add(span)

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Spans are filed as they end: nothing is pending."""
        return True

    # ---- trials
    @contextlib.contextmanager
    def trial(self, task_id: str, arm: str, run: int) -> Iterator[TrialCatch]:
        """Run the block as one trial: under a fresh root span whose trace collects its spans."""
        from opentelemetry.context import Context

        attributes: dict[str, Any] = {"ablation.task_id": task_id, "ablation.arm": arm, "ablation.run": run}
        with self._tracer.start_as_current_span(
            TRIAL_SPAN, context=Context(), attributes=attributes, end_on_exit=True,
            record_exception=False, set_status_on_exception=False,
        ) as span:
            trace_id = span.get_span_context().trace_id
            catch = TrialCatch(getattr(span, "start_time", None) or 0, span.get_span_context().span_id)
            self._open[trace_id] = catch
            try:
                yield catch
            finally:
                self._open.pop(trace_id, None)

    def bind(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` run, in whatever thread calls it, under the caller's current trace context."""
        from opentelemetry import context

        current = context.get_current()

        def in_trial(*args: Any) -> Any:
            token = context.attach(current)
            try:
                return fn(*args)
            finally:
                context.detach(token)

        return in_trial


def _install(may_set_provider: bool) -> SpanCollector | None:
    """The collector on the current global SDK provider (added once per provider; a provider
    installed when none is set and ``may_set_provider``)."""
    global _COLLECTOR
    with _LOCK:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        provider = trace.get_tracer_provider()
        if _COLLECTOR is not None and _COLLECTOR.provider is provider:
            return _COLLECTOR
        if isinstance(provider, trace.ProxyTracerProvider):
            if not may_set_provider:
                return None
            trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            return None
        collector = SpanCollector(provider)
        provider.add_span_processor(collector)  # type: ignore[arg-type]
        _COLLECTOR = collector
        return collector


def open_collector(mode: str) -> SpanCollector | None:
    """The collector for ``CampaignConfig.traces`` = ``mode``, or ``None`` when spans are not
    collected (``"off"``; ``"auto"`` without the SDK; a provider that takes no processor).

    Raises:
        ConfigError: ``mode`` is ``"on"`` and ``opentelemetry-sdk`` is not installed.
    """
    if mode == "off":
        return None
    if not sdk_available():
        if mode == "on":
            raise ConfigError("traces='on' needs opentelemetry-sdk: pip install 'ablation[otel]'")
        return None
    from ablation.process_hooks import owns_process

    return _install(mode == "on" or owns_process())


def usage_from_spans(
    summary: CaughtSummary, served_by: Callable[[TrialUsage, str | None], TrialUsage] | None = None
) -> TrialUsage | None:
    """The trial's usage as its spans report it: ``None`` when they count no model call (tool
    spans alone state no usage); else its model requests (:attr:`CaughtSummary.requests`: a
    billed fallback attempt is a call, not a request), tool calls that did not fail and model, with token
    counts unknown (``None``) unless every counted model call states them (a call without them
    makes the total unknown, never a smaller number). The usage carries each call (``calls``)
    so that it is priced call by call, each at its own model, and as ``served_by(call,
    provider)`` makes it, with the provider its span names (:attr:`CaughtSummary.providers`).

    ``None`` too when spans were dropped over the per-trial caps (``summary.dropped``): a dropped
    span may be a model or tool call, so every count would be a lower bound given as the count."""
    if not summary.model_calls or summary.dropped:
        return None
    counts: dict[str, int] = {}
    for tool in summary.answered:
        counts[tool] = counts.get(tool, 0) + 1
    total = TrialUsage(
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        cached_tokens=summary.cached_tokens,
        cache_write_tokens=summary.cache_write_tokens,
        model_requests=summary.requests,
        tool_calls=counts,
        model=joined_models(summary.models),
    )
    if not (len(summary.calls) == summary.model_calls and total.tokens_known):
        return ItemizedUsage.of(total, [None])
    providers = summary.providers if len(summary.providers) == len(summary.calls) else [None] * len(summary.calls)
    return ItemizedUsage.of(total, [
        None if call is None else call if served_by is None else served_by(call, provider)
        for call, provider in zip(summary.calls, providers, strict=True)
    ])  # fmt: skip
