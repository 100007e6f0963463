"""The cost of a trial that reported usage: from the agent, an override, or the price database.

Order: a cost the agent reported (source ``"agent"``); else, when the usage names a model, its
``[tool.ablation.prices]`` entry (or that of the model id without a date the provider appended,
:func:`override_for`) (:class:`~ablation.config.ModelPrice`, source ``"override"``);
else the price of that model in ``genai-prices`` (pydantic's maintained price database, in US
dollars, source ``"price-db"``) when that package is installed (the ``llm`` extra) and knows the
model; else no cost. The database's prices are the ones installed with it (no download at run
time: :func:`genai_prices.calc_price` reads its bundled data unless told to update).

Input tokens are priced in three parts: those read from the prompt cache
(:attr:`~ablation.outputs.TrialUsage.cached_tokens`), those written to it
(:attr:`~ablation.outputs.TrialUsage.cache_write_tokens`, which Anthropic bills above the plain
input rate) and the rest. Both cache counts are part of ``input_tokens``; a usage whose cache
counts add up to more than its input (a source that counted input without them) is priced with
them cut to fit: reads first, then writes, so no part is negative. An override without
``cache_write_per_mtok`` prices cache writes at its input rate.

A model call read from an SDK's result (:mod:`ablation.agents.sdk`) is a :class:`CallUsage`: it
also carries, in memory, what the database prices beyond those four counts and what picks the
price, as the SDK's own accounting has them (pydantic-ai's ``ModelResponse.cost()``, genai-prices'
``extract_usage`` of a reply): one-hour cache writes (Anthropic bills them above five-minute
ones), web searches, audio and reasoning tokens, the provider that served the call (its API URL,
else its name; a name the database does not know leaves the model id alone to pick it, as for
a call naming no provider) and the price context (OpenAI's ``service_tier``: flex and priority
are priced apart). An override prices the four token counts only (a one-hour write at its
cache-write rate, web searches not at all). A trial's spans state none of these but the
provider (:func:`served_by`): a trial priced from its spans has every cache write at the
five-minute rate.

A usage that sums several model calls (a pydantic-ai run, a trial's spans) carries each call as
``calls`` (:class:`~ablation.outputs.ItemizedUsage`; kept in memory for pricing, never stored): each call is
priced at its own model and the costs summed, exactly, then rounded once. When any call cannot
be priced (its tokens unknown, no model, a model neither an override nor the database knows),
or the calls' prices are in different currencies, the trial has no cost: a partial sum is not
its cost. A sum in which an override priced any call has source ``"override"``.

A call whose model and tokens are known but which neither an override nor the database prices
is logged once per model and process (logger ``ablation.agents.pricing``, warning level, which
the ``ablation`` command shows on stderr), naming the model and the ``[tool.ablation.prices]``
entry that would price it: the report itself only counts the trials without a cost.

A cost of :data:`~ablation.outputs.VALUE_LIMIT` (1e100) or more, which no result holds (an
override's prices are finite but unbounded), is no cost either, logged once per model; a
database price that is not a finite number, 0 or more, is no price.

A usage whose token counts are unknown (``None``: a model call stated none) has no cost, as a
trial without usage has none; neither has one whose ``model`` joins several models
(:func:`~ablation.outputs.joined_models`) unless its calls are itemized: the database would
match such an id by its first model's prefix and price every token at that model.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from pydantic import PrivateAttr

from ablation.config import ModelPrice
from ablation.outputs import MODELS_SEPARATOR, VALUE_LIMIT, AgentOutput, PlainUsage, TrialUsage

__all__ = ["CallUsage", "database_price", "override_for", "override_price", "priced", "served_by"]

#: genai-prices usage keys a :class:`CallUsage` may carry beyond the four token counts, each with
#: the count it is part of (cut to fit it, as the cache counts are): ``None`` for one part of none.
UNITS: dict[str, str | None] = {
    "cache_write_5m_tokens": "cache_write_tokens", "cache_write_1h_tokens": "cache_write_tokens",
    "input_audio_tokens": "input_tokens", "cache_audio_read_tokens": "cached_tokens",
    "output_audio_tokens": "output_tokens", "output_reasoning_tokens": "output_tokens",
    "web_searches": None,
}  # fmt: skip


class CallUsage(PlainUsage):
    """One model call's usage with what the price database needs beyond its four token counts.

    Held in memory only, as an :class:`~ablation.outputs.ItemizedUsage`'s call (never stored nor
    compared: it equals the plain ``TrialUsage`` of the same fields). Made by
    :mod:`ablation.agents.sdk` from an SDK's own accounting; read by :func:`database_price`.
    """

    _units: dict[str, int] = PrivateAttr(default_factory=dict)
    _provider: tuple[str | None, str | None] = PrivateAttr(default=(None, None))
    _context: dict[str, Any] = PrivateAttr(default_factory=dict)
    _timestamp: datetime | None = PrivateAttr(default=None)

    @classmethod
    def of(
        cls, usage: TrialUsage, units: Mapping[str, int], *, provider_url: str | None = None,
        provider: str | None = None, context: Mapping[str, Any] | None = None, timestamp: datetime | None = None,
    ) -> CallUsage:  # fmt: skip
        """``usage`` with the further counts ``units`` (keys of :data:`UNITS`; zeros dropped), the
        provider that served the call (API URL and name), the price ``context`` (e.g.
        ``{"service_tier": "flex"}``) and the time of the call (``None``: now)."""
        call = cls(**dict(usage))
        call._units = {k: v for k, v in units.items() if k in UNITS and v}
        call._provider = (provider_url, provider)
        call._context = dict(context or {})
        call._timestamp = timestamp
        return call


def served_by(usage: TrialUsage, provider: str | None) -> TrialUsage:
    """One model call read from a span, with the provider the span names when the price database
    lists the call's model under it (``gen_ai.provider.name`` ``cerebras`` for ``gpt-oss-120b``:
    Cerebras' price, as for the SDK's call); otherwise as a call naming none, priced by its model
    id alone (a span's name for a provider need not be the database's)."""
    listed = provider is not None and usage.model is not None and _lists(provider, str(usage.model))
    return CallUsage.of(usage, {}, provider=provider if listed else None)


@functools.cache
def _lists(provider: str, model: str) -> bool:
    """Whether the price database lists ``model`` under the provider named ``provider``."""
    if _calc_price() is None:
        return False
    from genai_prices.data_snapshot import get_snapshot

    try:
        get_snapshot().find_provider_model(model, None, provider, None)
    except LookupError:
        return False
    return True


def _counts(usage: TrialUsage) -> tuple[int, int, int, int]:
    """``(input, cache reads, cache writes, output)`` tokens of ``usage``, the cache counts cut
    so that they fit in its input tokens.

    Raises:
        ValueError: A token count of ``usage`` is unknown (``None``): it has no price.
    """
    inputs, output = usage.input_tokens, usage.output_tokens
    if inputs is None or output is None or usage.cached_tokens is None or usage.cache_write_tokens is None:
        raise ValueError("a usage whose token counts are unknown has no price")
    cached = min(usage.cached_tokens, inputs)
    return inputs, cached, min(usage.cache_write_tokens, inputs - cached), output


def override_price(usage: TrialUsage, price: ModelPrice) -> float:
    """The cost of ``usage`` at ``price``, rounded once to a float (:func:`_override_exact`).

    Raises:
        ValueError: A token count of ``usage`` is unknown.
    """
    return float(_override_exact(usage, price))


def _override_exact(usage: TrialUsage, price: ModelPrice) -> Fraction:
    """The cost of ``usage`` at ``price`` (per million tokens; cache reads and cache writes at
    their own prices, each the input price when unset).

    Computed exactly, each price taken as the decimal it was written as (``0.15``, not the binary
    float nearest it), and rounded once to the nearest float, as genai-prices computes in
    ``Decimal``: the same prices give the same cost whichever of the two priced the trial.
    """
    inputs, cached, written, output = _counts(usage)
    cached_rate = price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    write_rate = price.input_per_mtok if price.cache_write_per_mtok is None else price.cache_write_per_mtok
    total = (
        (inputs - cached - written) * _decimal(price.input_per_mtok)
        + cached * _decimal(cached_rate)
        + written * _decimal(write_rate)
        + output * _decimal(price.output_per_mtok)
    )
    return total / 1_000_000


def _decimal(rate: float) -> Fraction:
    """A price as the decimal it was written as: the shortest text that reads back as ``rate``."""
    return Fraction(repr(rate))


#: A date a provider appends to a model id it answers with (``gpt-4o-mini-2024-07-18``,
#: ``claude-3-5-sonnet-20241022``).
_DATED = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def override_for(overrides: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """The ``[tool.ablation.prices]`` entry of ``model``: its own, else that of the model id
    without the date the provider appended to it (an API asked for ``gpt-4o-mini`` answers with
    ``gpt-4o-mini-2024-07-18``), else ``None``."""
    found = overrides.get(model)
    if found is None and _DATED.search(model):
        found = overrides.get(_DATED.sub("", model))
    return found


@functools.cache
def _calc_price() -> Any:
    """``genai_prices.calc_price`` and ``Usage``, or ``None`` when the package is not installed."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:
        return None
    return calc_price, Usage


def database_price(usage: TrialUsage) -> float | None:
    """The cost in US dollars of ``usage`` by ``genai-prices``, or ``None`` when the package is
    not installed, the usage names no model, the database does not know it, or a token count is
    unknown."""
    found = _database_exact(usage)
    return None if found is None else float(found)


def _database_exact(usage: TrialUsage) -> Decimal | None:
    """:func:`database_price` as the database's own ``Decimal``: a :class:`CallUsage` with its
    further counts, at the provider that served it (:func:`_providers`), in its price context."""
    found = _calc_price()
    if found is None or not usage.model or not usage.tokens_known:
        return None
    calc_price, usage_type = found
    inputs, cached, written, output = _counts(usage)
    fitted = {"input_tokens": inputs, "cached_tokens": cached, "cache_write_tokens": written, "output_tokens": output}
    units = getattr(usage, "_units", None) or {}
    more = {k: v if UNITS[k] is None else min(v, fitted[str(UNITS[k])]) for k, v in units.items()}
    counts = usage_type(input_tokens=inputs, cache_read_tokens=cached, cache_write_tokens=written,
                        output_tokens=output, **more)  # fmt: skip
    options = {"price_context": getattr(usage, "_context", None) or None,
               "genai_request_timestamp": getattr(usage, "_timestamp", None)}  # fmt: skip
    for provider in _providers(getattr(usage, "_provider", (None, None))):
        try:
            result = calc_price(counts, model_ref=usage.model, **provider, **options)
            break
        except LookupError:
            continue
    else:
        return None
    amount = Decimal(result.total_price)
    return amount if amount.is_finite() and amount >= 0 else None  # no price, never NaN


def _providers(provider: tuple[str | None, str | None]) -> list[dict[str, str]]:
    """How the database is asked for a call's provider, in turn, as pydantic-ai prices a
    response: by its API URL, then by its name; a name the database does not know (a local
    server, a test model) leaves the model id alone to pick the provider, as a call naming none."""
    url, name = provider
    ways = [{"provider_api_url": url}] if url else []
    if name and _known_provider(name):
        return [*ways, {"provider_id": name}]
    return [*ways, {}]


@functools.cache
def _known_provider(name: str) -> bool:
    """Whether the price database has a provider of this name (or alias)."""
    from genai_prices.data_snapshot import get_snapshot

    try:
        get_snapshot().find_provider(None, name, None)
    except LookupError:
        return False
    return True


def _priceable(call: TrialUsage) -> bool:
    """Whether a call names one model and states its tokens: all a price needs besides the
    model's rates."""
    return bool(call.model) and call.tokens_known and MODELS_SEPARATOR not in str(call.model)


def _call_price(call: TrialUsage | None, overrides: Mapping[str, ModelPrice]) -> tuple[Fraction, str, str] | None:
    """``(exact cost, currency, source)`` of one model call, or ``None`` when it cannot be priced
    (unknown, without a model, its tokens unknown, or its model several joined)."""
    if call is None or call.model is None or not _priceable(call):
        return None
    override = override_for(overrides, call.model)
    if override is not None:
        return _override_exact(call, override), override.currency, "override"
    amount = _database_exact(call)
    return None if amount is None else (Fraction(amount), "USD", "price-db")


_log = logging.getLogger(__name__)


@functools.cache
def _unpriced(model: str) -> None:
    """Say once per process that ``model`` has no price (module docstring)."""
    database = "genai-prices does not know it" if _calc_price() is not None else (
        "genai-prices is not installed (pip install 'ablation[llm]')"
    )
    _log.warning(
        "no price for model %r (%s, and [tool.ablation.prices] has no entry for it): its trials "
        "have no cost; to price them, add under [tool.ablation.prices] in pyproject.toml the line "
        "%s = { input_per_mtok = ..., output_per_mtok = ... }",
        model, database, json.dumps(model),
    )


def priced(out: AgentOutput, overrides: Mapping[str, ModelPrice]) -> dict[str, Any]:
    """``cost``, ``cost_currency`` and ``cost_source`` of a trial from its agent output: the
    agent's own cost, else its usage priced call by call (the usage itself is one call unless it
    carries ``calls``), else none."""
    fields = out.cost_fields()
    usage = out.usage
    if fields["cost"] is not None or usage is None:
        return fields
    calls: tuple[TrialUsage | None, ...] = getattr(usage, "calls", None) or (usage,)
    prices = [_call_price(call, overrides) for call in calls]
    for call, price in zip(calls, prices, strict=True):
        if price is None and call is not None and _priceable(call):
            _unpriced(str(call.model))  # a model and its tokens known, yet no price
    known = [p for p in prices if p is not None]
    if len(known) < len(prices) or len({currency for _, currency, _ in known}) != 1:
        return fields  # a call that cannot be priced, or amounts in two currencies: no cost
    source = "override" if any(s == "override" for _, _, s in known) else "price-db"
    total = sum((a for a, _, _ in known), Fraction(0))
    if not total < VALUE_LIMIT:  # exact: a float would overflow past 1.8e308
        _too_costly(str(usage.model))
        return fields
    return {"cost": float(total), "cost_currency": known[0][1], "cost_source": source}


@functools.cache
def _too_costly(model: str) -> None:
    """Say once per process that ``model``'s price gives a cost no trial can hold."""
    _log.warning(
        "the price of model %r gives a trial a cost of %s or more, which no result holds: its "
        "trials over that have no cost; check its [tool.ablation.prices] entry",
        model, f"{VALUE_LIMIT:g}",
    )
