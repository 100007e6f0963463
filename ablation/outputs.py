"""What an agent reports beside its answer: usage, cost (with its currency and source), a trace.

These models sit on the ground floor with :mod:`ablation.schema` (which re-exports
:class:`AgentOutput`): they import nothing from the package. :func:`usage_metrics` turns a
:class:`TrialUsage` into the named numbers the report's paired metric comparisons read, so
token counts, model requests and per-tool call counts are analysed by the same code as any
other metric. A usage's token counts may be unknown (``None``: some model call stated none)
while its model requests and tool calls are known; unknown is never read as 0.
"""

# No ``from __future__ import annotations``: pydantic reads the fields' types without parsing.

import numbers
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    field_validator,
)

__all__ = [
    "COST_SOURCES",
    "COUNT_LIMIT",
    "MODELS_SEPARATOR",
    "NAMED_CELLS_LIMIT",
    "TOKEN_FIELDS",
    "TOOL_CALLS_PREFIX",
    "USAGE_METRICS",
    "VALUE_LIMIT",
    "AgentOutput",
    "CostSource",
    "ItemizedUsage",
    "NamedNumbers",
    "PlainUsage",
    "TrialCost",
    "TrialUsage",
    "as_count",
    "finite_values",
    "joined_models",
    "named_cells_problem",
    "usable_number",
    "usage_metrics",
]

#: Every count of a trial (tokens, requests, tool calls) is below it: exact in a float column.
COUNT_LIMIT = 1 << 52
#: Every number a trial gives the statistics (a duration, a cost, a score, a metric) is below it
#: in magnitude: a sum of squares of 10^9 such values (a variance, a t statistic) stays finite.
VALUE_LIMIT = 1e100
#: The most values one arm's columns of one kind of named number (quality scores, or metrics) may
#: hold: each name is a column with a value in every trial (NaN where absent), so names x trials,
#: a name counted as :data:`_NAME_ROWS` trials at least (the analysis keeps several arrays and
#: objects per name). 64 Mi floats are 512 MiB: 64 names over a million trials, or 65,536 names.
NAMED_CELLS_LIMIT = 1 << 26
_NAME_ROWS = 1024


def named_cells_problem(names: int, rows: int, kind: str) -> str | None:
    """Why ``names`` distinct ``kind`` names (``"quality"``, ``"metric"``) over ``rows`` trials
    are more than their columns may hold (:data:`NAMED_CELLS_LIMIT`), or ``None``."""
    if names * max(rows, _NAME_ROWS) <= NAMED_CELLS_LIMIT:
        return None
    return (
        f"{names} or more distinct {kind} names over {rows} trials: more than {NAMED_CELLS_LIMIT} values "
        f"to hold (each name is a column with a value in every trial, and counts as {_NAME_ROWS} "
        "trials at least); keep fewer distinct names"
    )

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Where a trial's cost came from: the agent said so, the price database (``genai-prices``)
#: priced its usage, or a ``[tool.ablation.prices]`` entry did.
CostSource = Literal["agent", "price-db", "override"]
COST_SOURCES: tuple[str, ...] = ("agent", "price-db", "override")

#: The token count fields of a :class:`TrialUsage` (each ``None`` when unknown).
TOKEN_FIELDS: tuple[str, ...] = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens")
#: Joins the models of a trial that called several (:func:`joined_models`), as mixed
#: currencies are shown ``"EUR+USD"``.
MODELS_SEPARATOR = "+"

#: Metric names derived from a :class:`TrialUsage` (see :func:`usage_metrics`).
USAGE_METRICS: tuple[str, ...] = ("input_tokens", "output_tokens", "cached_tokens", "model_requests")
#: Prefix of the per-tool call count metrics: ``tool_calls.<tool name>``.
TOOL_CALLS_PREFIX = "tool_calls."


def as_count(value: Any) -> int | None:
    """``value`` as a count a trial holds (tokens, requests): a whole number from 0 below
    :data:`COUNT_LIMIT`, given as an ``int`` or an integral ``float`` (a JSON reply or a span
    attribute may carry ``12.0``); ``None`` for anything else (NaN, an infinity, a negative or
    fractional number, a ``bool``, text), never a number cut to fit."""
    if isinstance(value, float) and value.is_integer():  # not NaN nor an infinity
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < COUNT_LIMIT:
        return value
    return None


def usable_number(value: float) -> bool:
    """Whether ``value`` is finite and below :data:`VALUE_LIMIT` in magnitude (NaN is not)."""
    return -VALUE_LIMIT < value < VALUE_LIMIT


def finite_values(values: dict[str, float]) -> dict[str, float]:
    """Refuse NaN, infinities (JSON would store them as null) and values past
    :data:`VALUE_LIMIT`; name the offending keys."""
    bad = sorted(k for k, v in values.items() if not usable_number(v))
    if bad:
        raise ValueError(
            f"value for {', '.join(bad)} is not a finite number below {VALUE_LIMIT:g} in "
            "magnitude: record it as an error instead"
        )
    return values


def _whole(value: Any) -> Any:
    """A whole number given as a ``float`` (``12.0``: a JSON reply, a span attribute) or as
    another integral type (``numpy.int64``) as the ``int`` it is, as :func:`as_count` reads it;
    anything else unchanged, for the strict check to refuse (a ``bool``, text, ``12.5``)."""
    kind = type(value)
    if kind is bool or kind is int:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value


#: A number of a trial (a cost, a metric), read strictly: an ``int`` is taken, a ``bool`` or a
#: text (``"0.5"``) is refused, never converted; the same rule for a Python agent's
#: :class:`AgentOutput` and a command or HTTP agent's JSON reply (``agents/forms.py``).
_Number = Annotated[float, Strict()]
#: A count (tokens, requests, tool calls): a whole number from 0 below 2**52 (sums of two stay
#: exact in the float columns a report reads), given as an ``int`` or a whole ``float``
#: (:func:`_whole`); a ``bool`` or a text is refused.
_Count = Annotated[int, BeforeValidator(_whole), Strict(), Field(ge=0, lt=COUNT_LIMIT)]
#: Named numbers of a trial (scores, metrics), each checked by :func:`finite_values`.
NamedNumbers = Annotated[dict[str, _Number], AfterValidator(finite_values)]
#: A token count, or ``None`` when unknown.
_Tokens = _Count | None


def joined_models(models: Iterable[str | None]) -> str | None:
    """The model of a trial from its calls' models: the one model when every call named the
    same, the distinct ones in order of first use joined by :data:`MODELS_SEPARATOR` when they
    differ (``"gpt-4o+gpt-4o-mini"``), ``None`` when no call named one (unnamed calls are
    skipped)."""
    distinct = list(dict.fromkeys(m for m in models if m))
    return MODELS_SEPARATOR.join(distinct) if distinct else None


class TrialUsage(BaseModel):
    """What one trial consumed of a model, as its SDK or the agent reports it.

    The four token counts are ``None`` when unknown: a trial some of whose model calls stated
    no usage (an OpenAI-compatible server that leaves it out) has no token total, never the
    smaller sum of the calls that did; its ``model_requests``, ``tool_calls`` and ``model`` are
    still known. A usage stored before unknown counts existed reads back unchanged (a missing
    count reads as 0, as then), and a usage with every count known serializes as it did.

    Attributes:
        input_tokens: Prompt tokens over every model request of the trial (cached ones included,
            as OpenAI and pydantic-ai count them).
        output_tokens: Completion tokens over every model request.
        cached_tokens: Input tokens served from the provider's prompt cache (cache reads; part
            of ``input_tokens``).
        cache_write_tokens: Input tokens written to the provider's prompt cache (part of
            ``input_tokens``, as genai-prices and pydantic-ai count them); Anthropic bills them
            above the plain input rate. A row stored without it reads as 0.
        model_requests: Model requests the trial made (a tool-using loop makes several).
        tool_calls: Calls per tool name; a tool that was not called may be absent (it counts 0
            for a trial with usage).
        model: The model id as the provider names it (e.g. ``"gpt-4o-mini"``), when known; for a
            trial whose calls used several models, their ids joined by ``"+"`` in order of first
            use (:func:`joined_models`), which no price matches: such a trial is priced call by
            call (:class:`ItemizedUsage`) or not at all.
    """

    model_config = _FROZEN

    # counts below 2**52: sums of two stay exact in the float columns a report reads
    input_tokens: _Tokens = 0
    output_tokens: _Tokens = 0
    cached_tokens: _Tokens = 0
    cache_write_tokens: _Tokens = 0
    model_requests: _Count = 0
    tool_calls: dict[str, _Count] = Field(default_factory=dict)
    model: str | None = None

    @field_validator("tool_calls")
    @classmethod
    def _counts(cls, value: dict[str, int]) -> dict[str, int]:
        bad = sorted(k for k, v in value.items() if not 0 <= v < COUNT_LIMIT or not k)
        if bad:
            raise ValueError(f"tool call counts must be in [0, 2**52) under a non-empty name: {bad}")
        return value

    @property
    def tokens_known(self) -> bool:
        """Whether all four token counts are known (what pricing needs)."""
        return all(getattr(self, name) is not None for name in TOKEN_FIELDS)

    @property
    def total_tokens(self) -> int | None:
        """Input + output tokens, or ``None`` when either is unknown."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


class TrialCost(BaseModel):
    """Money spent on one trial, with its currency and where the figure came from.

    Attributes:
        amount: The amount (finite, >= 0).
        currency: ISO 4217 code (``"USD"``); the price database prices in US dollars.
        source: ``"agent"``, ``"price-db"`` or ``"override"`` (:data:`CostSource`).
    """

    model_config = _FROZEN

    amount: _Number = Field(ge=0, lt=VALUE_LIMIT, allow_inf_nan=False)
    currency: str = Field(default="USD", min_length=1, max_length=16)
    source: CostSource = "agent"


class PlainUsage(TrialUsage):
    """A :class:`TrialUsage` holding more in memory (private attributes) that compares, hashes and
    prints as the plain ``TrialUsage`` of its fields: what it carries besides is never stored."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TrialUsage):
            return dict(self) == dict(other)
        return NotImplemented

    __hash__ = TrialUsage.__hash__

    def __repr_name__(self) -> str:
        return "TrialUsage"


class ItemizedUsage(PlainUsage):
    """A :class:`~ablation.outputs.TrialUsage` that sums model calls, with the calls beside it.

    ``calls`` holds one usage per model call (its own ``model`` and tokens), or ``None`` for a
    call that cannot be itemized (its tokens or model unknown, e.g. a delegated run's calls that
    only the total counts). It lives in memory only, for :func:`priced`: it is not a field, so
    it is neither stored nor compared, and an itemized usage equals (and serializes as) the plain
    ``TrialUsage`` of the same fields. Made by :mod:`ablation.agents.sdk` (a pydantic-ai run's
    responses) and :mod:`ablation.run.spans` (a trial's model-call spans); read by
    :func:`ablation.agents.pricing.priced`.
    """

    _calls: tuple[TrialUsage | None, ...] = PrivateAttr(default=())

    @classmethod
    def of(cls, total: TrialUsage, calls: Iterable[TrialUsage | None]) -> "ItemizedUsage":
        """``total`` with its ``calls``."""
        usage = cls(**dict(total))
        usage._calls = tuple(calls)
        return usage

    @property
    def calls(self) -> tuple[TrialUsage | None, ...]:
        """The model calls this usage sums (``None``: a call that cannot be itemized)."""
        return self._calls


class AgentOutput(BaseModel):
    """What an agent may return instead of a bare output, to report cost and usage.

    Attributes:
        output: The answer that the verifier checks.
        cost: Money spent on this call: a :class:`TrialCost`, or a bare number (its currency is
            then unstated and its source ``"agent"``).
        tokens: Tokens used (derived as input + output tokens when ``usage`` states them).
        metrics: Any further numeric measurements, kept with the trial.
        usage: Token counts, model requests and tool calls (:class:`TrialUsage`).
        trace: What happened inside the call (e.g. the model messages), kept with the trial
            as plain data for the drill-down.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    output: Any = None
    cost: _Number | TrialCost | None = None
    tokens: _Count | None = None
    metrics: NamedNumbers = Field(default_factory=dict)
    usage: TrialUsage | None = None
    trace: list[Any] | None = None

    @field_validator("cost")
    @classmethod
    def _finite_cost(cls, value: float | TrialCost | None) -> float | TrialCost | None:
        if isinstance(value, float | int) and not (usable_number(value) and value >= 0):
            raise ValueError(f"cost must be a finite number, 0 or more, below {VALUE_LIMIT:g}")
        return value

    def cost_fields(self) -> dict[str, Any]:
        """The trial's ``cost``, ``cost_currency`` and ``cost_source`` from :attr:`cost`."""
        cost = self.cost
        if cost is None:
            return {"cost": None, "cost_currency": None, "cost_source": None}
        if isinstance(cost, TrialCost):
            return {"cost": cost.amount, "cost_currency": cost.currency, "cost_source": cost.source}
        return {"cost": float(cost), "cost_currency": None, "cost_source": "agent"}


def usage_metrics(usage: TrialUsage) -> dict[str, float]:
    """The named numbers of ``usage`` for the paired metric comparisons.

    ``model_requests`` always, and ``input_tokens``, ``output_tokens``, ``cached_tokens`` whenever
    known (so every trial with usage has them and pairs are not lost to a missing key; a count
    that is unknown is missing, never 0), and ``tool_calls.<name>`` for each tool the trial
    called. The analysis counts a tool absent from a trial with usage (``model_requests``) as 0
    calls.
    """
    values = {name: getattr(usage, name) for name in USAGE_METRICS}
    out = {name: float(value) for name, value in values.items() if value is not None}
    out.update({TOOL_CALLS_PREFIX + name: float(n) for name, n in sorted(usage.tool_calls.items())})
    return out
