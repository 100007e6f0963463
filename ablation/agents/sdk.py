"""Results of LLM SDKs returned by a Python agent, read as an answer with its usage.

A Python agent may return what its SDK gave it: an OpenAI ``ChatCompletion`` or ``Response``, an
Anthropic ``Message`` (or ``BetaMessage``, from ``client.beta.messages.create``), or a pydantic-ai
``AgentRunResult`` (what ``Agent.run`` returns, so a
pydantic-ai ``Agent`` is itself an agent: its ``run`` method is called with the task input), or
the finished ``StreamedRunResult`` of ``Agent.run_stream`` or ``AgentRun`` of ``Agent.iter``
(read as the ``AgentRunResult`` each settles into; one not finished is the trial's error). The
text (or the run's output) is the trial's output; token counts (cache reads and writes among
the input tokens, each also counted apart), model requests, tool calls by tool name and the model
id become its :class:`~ablation.outputs.TrialUsage`; pydantic-ai's messages become its trace.
A result that states no token counts (an OpenAI-compatible server may leave ``usage`` out, or
send it without them) has its request, tool calls and model, with its tokens and cost unknown,
never zero; so has one that states its input or its output tokens alone (the other unknown). The
cache counts are details: a reply without them read none from the cache. A pydantic-ai run some of whose responses
stated no usage keeps its model requests, tool calls and model, with its token counts unknown.

No SDK is imported here: an object is recognised only when its class comes from a package that
is already loaded (``sys.modules``), so an agent that does not use an SDK costs one string test
per trial, and none of these packages is a dependency.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ablation.agents.forms import AgentProcessError
from ablation.agents.pricing import UNITS, CallUsage
from ablation.outputs import (
    TOKEN_FIELDS,
    AgentOutput,
    ItemizedUsage,
    TrialUsage,
    as_count,
    joined_models,
)
from ablation.schema import to_jsonable

__all__ = ["TRACE_MESSAGES", "pydantic_ai_runner", "sdk_output"]

#: At most this many messages of a pydantic-ai run are kept as its trace (the first ones).
TRACE_MESSAGES = 200
_TRACE_TEXT = 2000  # characters of one message part's content kept in the trace
#: The contents pydantic-ai gives the return of an output tool's call, and of a function tool's
#: call it skipped (a final result was already processed): calls its ``RunUsage`` does not count.
_NOT_RUN = frozenset({
    "Final result processed.",
    "Output not used as the final result - addressing tool retries from this round first.",
    "Output tool not used - a final result was already processed.",
    "Output tool processed, but its value will not be the final result of the agent run.",
    "Output tool not used - output function execution failed.",
    "Output tool not used - output failed validation.",
    "Tool not executed - a final result was already processed.",
})  # fmt: skip


def _get(obj: Any, *names: str) -> Any:
    """``obj.a.b...`` with ``None`` as soon as a link is missing."""
    for name in names:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def _whole(obj: Any, *names: str) -> int:
    """The count at ``obj.a.b...`` (``_get``), 0 when missing or ``None``.

    SDK objects are built from the provider's JSON without validation, and Python's JSON reader
    gives ``NaN``, ``Infinity`` and fractions where a count should be: such a value is refused,
    naming the field, rather than cut to a whole number (``int(2.5)`` is 2) or left to fail
    unnamed (``int(nan)``).

    Raises:
        AgentProcessError: The value is not a whole number in ``[0, 2**52)`` (an ``int`` or an
            integral ``float``; ``bool`` and text are not counts).
    """
    value = _get(obj, *names)
    if value is None:
        return 0
    count = as_count(value)
    if count is not None:
        return count
    raise AgentProcessError(
        f"the SDK result's usage {'.'.join(names)} is {value!r:.60}, not a token or request count "
        "(a whole number, 0 or more, below 2**52): the provider's reply is not usable"
    )


def _given(obj: Any, *names: str) -> int | None:
    """A count a usage must state (its input or output tokens): :func:`_whole`, or ``None`` when
    the reply leaves it out or gives ``null`` (unknown, never 0: an OpenAI-compatible server may
    send ``"usage": {}``)."""
    return None if _get(obj, *names) is None else _whole(obj, *names)


def _count(names: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def _unstated(output: Any, names: Iterable[str], model: Any) -> AgentOutput:
    """One model request whose reply stated no usage: its tool calls and model, tokens unknown
    (never zero, so no cost is made up; the trial's spans may state them)."""
    more = {"model_requests": 1, "tool_calls": _count(names), "model": None if model is None else str(model)}
    return AgentOutput(output=output, usage=TrialUsage.model_validate({**dict.fromkeys(TOKEN_FIELDS), **more}))


def _chat_completion(resp: Any) -> AgentOutput:
    """An OpenAI ``ChatCompletion``: the first choice's text, usage and tool calls (a ``function``
    call under its function's name, a ``custom`` one under its custom tool's). A completion without
    ``usage`` (OpenAI-compatible servers may leave it out) has its request, tool calls and model
    with token counts unknown (:func:`_unstated`), and one whose ``usage`` leaves a count out has
    that count unknown (:func:`_given`)."""
    message = resp.choices[0].message if resp.choices else None
    calls = (_get(message, "tool_calls") or []) if message is not None else []
    names = [_get(c, "custom" if _get(c, "type") == "custom" else "function", "name") for c in calls]
    usage = resp.usage
    if usage is None:  # an OpenAI-compatible server that reports none: unknown, never zero
        return _unstated(_get(message, "content"), (str(name) for name in names), resp.model)
    total = TrialUsage(
        input_tokens=_given(usage, "prompt_tokens"),
        output_tokens=_given(usage, "completion_tokens"),
        cached_tokens=_whole(usage, "prompt_tokens_details", "cached_tokens"),
        cache_write_tokens=_whole(usage, "prompt_tokens_details", "cache_write_tokens"),
        model_requests=1,
        tool_calls=_count(str(name) for name in names),
        model=resp.model,
    )
    units = {"input_audio_tokens": _whole(usage, "prompt_tokens_details", "audio_tokens"),
             "output_audio_tokens": _whole(usage, "completion_tokens_details", "audio_tokens"),
             "output_reasoning_tokens": _whole(usage, "completion_tokens_details", "reasoning_tokens")}  # fmt: skip
    return AgentOutput(output=_get(message, "content"), usage=_one_call(total, units, _tier(resp)))


def _tier(resp: Any) -> dict[str, str]:
    """The price context of an OpenAI reply: its ``service_tier`` (flex and priority are priced
    apart), when it states one."""
    tier = getattr(resp, "service_tier", None)
    return {"service_tier": tier} if isinstance(tier, str) else {}


def _one_call(total: TrialUsage, units: dict[str, int], context: dict[str, str]) -> ItemizedUsage:
    """The usage of a reply that is one model call, carrying that call with what the price
    database needs beyond its token counts (:class:`~ablation.agents.pricing.CallUsage`)."""
    return ItemizedUsage.of(total, [CallUsage.of(total, units, context=context)])


_RESPONSE_CALLS = frozenset({"function_call", "custom_tool_call"})


def _response(resp: Any) -> AgentOutput:
    """An OpenAI Responses-API ``Response``: ``output_text``, usage and tool calls (its
    ``function_call`` and ``custom_tool_call`` items, by name)."""
    usage = resp.usage
    calls = [item for item in resp.output or () if getattr(item, "type", None) in _RESPONSE_CALLS]
    if usage is None:  # unknown, never zero
        return _unstated(resp.output_text, (str(c.name) for c in calls), resp.model)
    total = TrialUsage(
        input_tokens=_given(usage, "input_tokens"),
        output_tokens=_given(usage, "output_tokens"),
        cached_tokens=_whole(usage, "input_tokens_details", "cached_tokens"),
        cache_write_tokens=_whole(usage, "input_tokens_details", "cache_write_tokens"),
        model_requests=1,
        tool_calls=_count(str(c.name) for c in calls),
        model=resp.model,
    )
    units = {"output_reasoning_tokens": _whole(usage, "output_tokens_details", "reasoning_tokens")}
    return AgentOutput(output=resp.output_text, usage=_one_call(total, units, _tier(resp)))


def _anthropic_message(msg: Any) -> AgentOutput:
    """An Anthropic ``Message``: its text blocks joined, usage and tool-use blocks.

    Anthropic counts cache reads and writes apart from ``input_tokens``; they are added to the
    input here so that ``input_tokens`` means every prompt token, as for the other SDKs, and are
    kept as ``cached_tokens`` and ``cache_write_tokens`` (``cache_creation_input_tokens``).
    """
    blocks = msg.content or ()
    usage = msg.usage
    cached = _whole(usage, "cache_read_input_tokens")
    written = _whole(usage, "cache_creation_input_tokens")
    uncached = _given(usage, "input_tokens")
    total = TrialUsage(
        input_tokens=None if uncached is None else uncached + cached + written,
        output_tokens=_given(usage, "output_tokens"),
        cached_tokens=cached,
        cache_write_tokens=written,
        model_requests=1,
        tool_calls=_count(str(b.name) for b in blocks if getattr(b, "type", None) == "tool_use"),
        model=msg.model,
    )
    units = {"cache_write_5m_tokens": _whole(usage, "cache_creation", "ephemeral_5m_input_tokens"),
             "cache_write_1h_tokens": _whole(usage, "cache_creation", "ephemeral_1h_input_tokens"),
             "web_searches": _whole(usage, "server_tool_use", "web_search_requests"),
             "output_reasoning_tokens": _whole(usage, "output_tokens_details", "thinking_tokens")}  # fmt: skip
    return AgentOutput(
        output="".join(b.text for b in blocks if getattr(b, "type", None) == "text"),
        usage=_one_call(total, units, {}),
    )


def _trace_part(part: Any) -> dict[str, Any]:
    """One message part as plain data: its kind, tool name, and content or arguments (cut)."""
    kind = getattr(part, "part_kind", type(part).__name__)
    out: dict[str, Any] = {"kind": kind}
    tool = getattr(part, "tool_name", None)
    if tool is not None:
        out["tool"] = tool
    value = getattr(part, "args", None) if kind == "tool-call" else getattr(part, "content", None)
    if value is not None:
        text = value if isinstance(value, str) else repr(value)
        out["content"] = text[:_TRACE_TEXT] + ("..." if len(text) > _TRACE_TEXT else "")
    return out


def _function_calls(result: Any, messages: list[Any]) -> list[str]:
    """The names of a pydantic-ai run's function-tool calls that ran, as its ``RunUsage`` counts
    them: a call answered by a successful tool return, never an output tool's (the run's
    ``final_result``, its output mechanism: named by the result, or answered by one of
    pydantic-ai's output status texts), nor a call retried, failed, denied or not executed."""
    output_tool = getattr(result, "_output_tool_name", None)
    returns = [
        p for m in messages for p in getattr(m, "parts", ())
        if getattr(p, "part_kind", None) == "tool-return"
    ]  # fmt: skip
    ran = {
        p.tool_call_id for p in returns
        if getattr(p, "outcome", "success") == "success" and p.tool_name != output_tool
        and not (isinstance(content := getattr(p, "content", None), str) and content in _NOT_RUN)
    }  # fmt: skip
    return [
        p.tool_name for m in messages for p in getattr(m, "parts", ())
        if getattr(p, "part_kind", None) == "tool-call" and getattr(p, "tool_call_id", None) in ran
    ]  # fmt: skip


def _stated(usage: Any) -> bool:
    """Whether a pydantic-ai usage states token counts: pydantic-ai records a response whose
    provider left usage out as ``unmeasured_requests`` with zero counts (older versions: only
    the zeros), and a model call that consumed no tokens at all has stated none."""
    if getattr(usage, "unmeasured_requests", 0):
        return False
    return bool(getattr(usage, "input_tokens", 0) or getattr(usage, "output_tokens", 0))


def _tokens(usage: Any, **more: Any) -> TrialUsage:
    """The token counts of a pydantic-ai ``RunUsage`` or ``RequestUsage``."""
    return TrialUsage(
        input_tokens=_whole(usage, "input_tokens"),
        output_tokens=_whole(usage, "output_tokens"),
        cached_tokens=_whole(usage, "cache_read_tokens"),
        cache_write_tokens=_whole(usage, "cache_write_tokens"),
        **more,
    )


def _response_call(response: Any) -> CallUsage:
    """One pydantic-ai ``ModelResponse`` (or a ``FallbackModel``'s failed attempt:
    ``ModelRequestAttempt``) as a call priced as its ``cost()`` prices it: its
    ``RequestUsage`` (one-hour cache writes, web searches, audio and reasoning tokens too), the
    provider that served it (``provider_url``, ``provider_name``), its ``provider_details`` as the
    price context (OpenAI's ``service_tier``) and its ``timestamp``."""
    usage = response.usage
    tokens = _tokens(usage, model_requests=1, model=getattr(response, "model_name", None))
    details = getattr(response, "provider_details", None)
    return CallUsage.of(
        tokens, {key: _whole(usage, key) for key in UNITS},
        provider_url=getattr(response, "provider_url", None), provider=getattr(response, "provider_name", None),
        context=details if isinstance(details, dict) else None, timestamp=getattr(response, "timestamp", None),
    )  # fmt: skip


def _run_usage(result: Any, usage: Any, calls: list[str]) -> TrialUsage | None:
    """A pydantic-ai run's usage, itemized by its responses for pricing; ``None`` for a run that
    made no model request.

    Each of the run's new responses (``ModelResponse.usage`` and ``model_name``) is one call, and
    so is each attempt a ``FallbackModel`` moved on from that reported usage (a response its
    ``fallback_on`` handler rejected: listed in the next response's ``failed_attempts``, billed
    and counted in the ``RunUsage``, though not a request of the run); the run's model is theirs
    (:func:`~ablation.outputs.joined_models`: several joined by ``"+"``). When a call's provider
    stated no usage, the run's token counts are unknown
    (``None``: a total with an unknown part is unknown, never a smaller number), while its
    requests, tool calls and model stay; the trial is then not priced. When the calls do
    not add up to the run's ``RunUsage`` (a delegated agent run with ``usage=ctx.usage`` adds
    its tokens, on its own model, to the parent's usage but not its messages), a call is
    missing from the itemization, so the trial is not priced either.
    """
    responses = [m for m in result.new_messages() if getattr(m, "kind", None) == "response"]
    requests = _whole(usage, "requests")
    if not responses and not requests:
        return None
    billed = [
        call for m in responses
        for call in [*(a for a in getattr(m, "failed_attempts", None) or () if getattr(a, "usage", None)), m]
    ]  # fmt: skip
    more: dict[str, Any] = {
        "model_requests": requests, "tool_calls": _count(calls),
        "model": joined_models(getattr(m, "model_name", None) for m in billed),
    }  # fmt: skip
    if not _stated(usage) or not all(_stated(getattr(m, "usage", None)) for m in billed):
        unknown = TrialUsage.model_validate({**dict.fromkeys(TOKEN_FIELDS), **more})
        return ItemizedUsage.of(unknown, [None])
    total = _tokens(usage, **more)
    itemized: list[TrialUsage | None] = [_response_call(m) for m in billed]
    if any(sum(getattr(c, f) for c in itemized if c) != getattr(total, f) for f in TOKEN_FIELDS):
        itemized.append(None)  # tokens of calls not among the responses: not priced
    return ItemizedUsage.of(total, itemized)


def _pydantic_ai_run(result: Any) -> AgentOutput:
    """A pydantic-ai ``AgentRunResult``: its output, the run's usage (:func:`_run_usage`: each
    response priced at its own model; unknown tokens when a response stated no usage),
    function-tool calls by name from the messages (:func:`_function_calls`), and the messages
    as the trace."""
    messages = list(result.all_messages())
    usage = result.usage  # a property in newer pydantic-ai (calling it warns), a method before
    if callable(usage) and not hasattr(usage, "input_tokens"):
        usage = usage()
    calls = _function_calls(result, messages)
    trace = [
        {"kind": getattr(m, "kind", "?"), "parts": [_trace_part(p) for p in getattr(m, "parts", ())]}
        for m in messages[:TRACE_MESSAGES]
    ]
    return AgentOutput(output=result.output, usage=_run_usage(result, usage, calls), trace=trace)


def _settled(run: Any) -> AgentOutput:
    """A pydantic-ai streamed run (``StreamedRunResult``) or iterated one (``AgentRun``) as the
    ``AgentRunResult`` it settled into (its ``result``).

    Raises:
        AgentProcessError: The run had not finished (its stream not consumed, its nodes not all
            iterated): its output and usage are not known yet.
    """
    try:
        result = run.result
    except Exception as exc:  # pydantic-ai's UserError: the stream has not finished
        raise AgentProcessError(f"the pydantic-ai run returned had not finished: {exc}") from exc
    if result is None:
        raise AgentProcessError("the pydantic-ai run returned had not finished (iterate it to its end)")
    return _pydantic_ai_run(result)


#: (module in ``sys.modules``, class name, reader) of every recognised SDK result.
_FORMS: tuple[tuple[str, str, Callable[[Any], AgentOutput]], ...] = (
    ("openai.types.chat", "ChatCompletion", _chat_completion),
    ("openai.types.responses", "Response", _response),
    ("anthropic.types", "Message", _anthropic_message),
    ("anthropic.types.beta", "BetaMessage", _anthropic_message),  # client.beta.messages.create
    ("pydantic_ai.run", "AgentRunResult", _pydantic_ai_run),
    ("pydantic_ai.agent", "AgentRunResult", _pydantic_ai_run),
    ("pydantic_ai.result", "StreamedRunResult", _settled),
    ("pydantic_ai.run", "AgentRun", _settled),
)
_PACKAGES = frozenset(module.split(".")[0] for module, _, _ in _FORMS)


def sdk_output(raw: Any) -> Any:
    """``raw`` as an :class:`~ablation.outputs.AgentOutput` when it is a recognised SDK result
    (its package loaded), else ``raw`` unchanged.

    An attribute the SDK's object lacks (an older or newer layout) counts as zero or unknown;
    an exception while reading it propagates (the trial records it at the agent stage).
    """
    if type(raw).__module__.partition(".")[0] not in _PACKAGES:
        return raw
    for module_name, class_name, read in _FORMS:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type) and isinstance(raw, cls):
            return read(raw)
    return raw


def pydantic_ai_runner(obj: Any) -> Callable[[Any], Awaitable[Any]] | None:
    """For a pydantic-ai ``Agent`` (its package loaded), an async function running it on a task
    input: ``agent.run(prompt)``, the prompt being the input when it is text and its JSON
    otherwise, the agent kept as its ``pydantic_ai_agent`` (which a resume fingerprints);
    ``None`` for any other object."""
    cls = getattr(sys.modules.get("pydantic_ai.agent"), "AbstractAgent", None)
    if not (isinstance(cls, type) and isinstance(obj, cls)):
        return None
    agent: Any = obj

    async def run_pydantic_ai(input_data: Any) -> Any:
        prompt = input_data if isinstance(input_data, str) else json.dumps(to_jsonable(input_data))
        return await agent.run(prompt)

    run_pydantic_ai.__qualname__ = f"pydantic_ai:{getattr(obj, 'name', None) or 'Agent'}"
    run_pydantic_ai.pydantic_ai_agent = obj  # type: ignore[attr-defined]
    return run_pydantic_ai
