"""Configuration models of a campaign: retries, release gates, the campaign config and provenance.

Frozen pydantic models with ``extra="forbid"`` (a misspelt field is an error). These describe *how*
a campaign runs and is judged; :mod:`ablation.schema` describes *what* it runs on and records.
"""

# No ``from __future__ import annotations``: pydantic reads the fields' types without parsing.

import builtins
import importlib
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from ablation.errors import WrongType

__all__ = [
    "CampaignConfig", "GatePolicy", "ModelPrice", "Provenance", "RetryPolicy", "SequentialPolicy", "config_or_default",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_FROZEN_ANY = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


def _resolve_exception(spec: Any) -> type[BaseException]:
    if isinstance(spec, type) and issubclass(spec, BaseException):
        return spec
    if isinstance(spec, str):
        module_name, _, attr = spec.rpartition(":") if ":" in spec else spec.rpartition(".")
        try:
            obj = (
                getattr(builtins, attr)
                if not module_name
                else getattr(importlib.import_module(module_name), attr)
            )
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"retry_on: cannot find exception type {spec!r}") from exc
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return obj
    raise ValueError(f"retry_on: {spec!r} is not an exception type")


def _placeholder_exception(spec: str) -> type[BaseException]:
    """Stand-in for a stored exception name that cannot be imported here (e.g. a local class).

    It keeps the name, so a stored configuration still reads and compares, but it matches no
    real exception: a policy read back this way retries nothing it could not name.
    """
    module, _, name = spec.rpartition(":") if ":" in spec else spec.rpartition(".")
    return type(name or spec, (Exception,), {"__module__": module or "builtins", "__qualname__": name})


class RetryPolicy(BaseModel):
    """When and how to retry an agent call (tenacity, around the agent call only).

    Exceptions of the ``retry_on`` types are retried, and with ``retry_transient`` (the default)
    also every transient error, recognised by class hierarchy and HTTP status rather than by exact
    type: connection and time-out errors and 408, 429 and 5xx responses of openai, anthropic,
    httpx, requests, aiohttp and the standard library (the rule: :mod:`ablation.run.transient`).
    Anything else fails the trial at once. Waits grow exponentially from ``initial_wait_s`` up to
    ``max_wait_s`` plus up to ``jitter_s`` of random jitter, or last as long as the failed
    response's ``Retry-After`` asks (a 429 or 503), at most ``max_wait_s``.
    """

    model_config = _FROZEN_ANY

    max_attempts: int = Field(default=1, ge=1)
    initial_wait_s: float = Field(default=0.5, ge=0)
    max_wait_s: float = Field(default=30.0, ge=0)
    jitter_s: float = Field(default=0.5, ge=0)
    retry_on: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)
    retry_transient: bool = True

    @field_validator("retry_on", mode="before")
    @classmethod
    def _parse_retry_on(cls, value: Any) -> tuple[type[BaseException], ...]:
        if isinstance(value, type | str):
            value = (value,)
        resolved = []
        for v in value:
            try:
                resolved.append(_resolve_exception(v))
            except ValueError:
                if not isinstance(v, str) or ":" not in v:
                    raise
                resolved.append(_placeholder_exception(v))
        return tuple(resolved)

    @field_serializer("retry_on")
    def _dump_retry_on(self, value: tuple[type[BaseException], ...]) -> list[str]:
        return [
            t.__name__ if t.__module__ == "builtins" else f"{t.__module__}:{t.__qualname__}"
            for t in value
        ]


class GatePolicy(BaseModel):
    """Release gates, chosen before the run.

    The defaults protect a user who sets nothing: critical tasks must not regress, the candidate
    must not be significantly worse, and the comparison must be complete. Turning one of these
    off is explicit, and the report's gate list shows it as turned off.

    Attributes:
        critical_must_not_regress: Any regression of a ``critical`` task fails.
        noninferiority_margin: If set (e.g. 0.02), the candidate must be shown non-inferior within
            this pass-rate margin (exact unconditional test at ``alpha``); inconclusive fails.
        no_significant_regression: Fail when the candidate is significantly worse at ``alpha``
            (exact McNemar, one-sided), Holm-adjusted across the gated metrics. On by default.
        max_latency_ratio: If set, fail when the geometric-mean latency ratio is significantly
            above this value.
        require_complete: Fail when an expected pair is missing (an interrupted campaign, ids on
            one side only) or an arm's share of completed trials is below ``min_completed``.
            Tasks a sequential campaign decided not to run are not missing.
        min_completed: Least share of each arm's trials that must complete (not error, not
            timeout) for the completeness gate.
        metric_margins: Per numeric metric or quality score, a non-inferiority margin in the
            metric's units (``latency_s``, ``cost`` and ``tokens`` are lower-is-better; any
            other metric higher-is-better); each adds a gate.
        custom: Settings of gates added with :func:`ablation.analysis.gates.register_gate`, by
            gate name (JSON-safe values; the built-in gates ignore it).
    """

    model_config = _FROZEN

    critical_must_not_regress: bool = True
    noninferiority_margin: float | None = Field(default=None, gt=0, lt=1)
    no_significant_regression: bool = True
    max_latency_ratio: float | None = Field(default=None, gt=0)
    require_complete: bool = True
    min_completed: float = Field(default=0.95, ge=0, le=1)
    metric_margins: dict[str, float] = Field(default_factory=dict)
    custom: dict[str, Any] = Field(default_factory=dict)

    @field_validator("metric_margins")
    @classmethod
    def _positive_margins(cls, value: dict[str, float]) -> dict[str, float]:
        bad = sorted(k for k, v in value.items() if not v > 0)
        if bad:
            raise ValueError(f"metric margins must be positive: {', '.join(bad)}")
        return dict(sorted(value.items()))


class SequentialPolicy(BaseModel):
    """Sequential mode: run tasks in a seeded random order and stop once the gates are decided.

    After every completed pair (with ``runs > 1``: every run of a task in both arms; the task is
    the unit) anytime-valid statistics are updated (DESIGN.md section 5, STATISTICS.md section 10):
    an e-process for "significant regression" (always on in sequential mode), a confidence
    sequence for the uplift when a non-inferiority margin is set, and the first regression of a
    critical task when that gate is on. The campaign stops at the first decision, after
    ``futility_after`` pairs, or at the end of the suite.

    Attributes:
        futility_after: Stop as inconclusive after this many pairs (``None``: never).
        candidates: Candidates compared with the same baseline in one command; the family-wise
            ``alpha`` is split equally among them (Bonferroni, valid under any dependence and any
            stopping rule).
        suite_claim: Opt-in. ``False`` (default): the confidence sequence behind the
            non-inferiority decision treats the tasks as i.i.d. draws, the population claim of
            the fixed-n test (about tasks like these, not only this suite). ``True``: sampling
            without replacement from the suite, a claim about the suite's own uplift only; the
            interval then shrinks to the observed uplift near the end of the suite.
    """

    model_config = _FROZEN

    futility_after: int | None = Field(default=None, ge=1)
    candidates: int = Field(default=1, ge=1)
    suite_claim: bool = False


class ModelPrice(BaseModel):
    """A model's price per million tokens, which overrides the price database for that model.

    Attributes:
        input_per_mtok: Price of a million prompt tokens that were neither read from nor written
            to the prompt cache.
        output_per_mtok: Price of a million completion tokens.
        cached_input_per_mtok: Price of a million prompt tokens read from the cache (``None``:
            as uncached).
        cache_write_per_mtok: Price of a million prompt tokens written to the cache (``None``:
            as uncached, ``input_per_mtok``; Anthropic bills them at 1.25 times its input price
            for a five-minute cache). Left unset, it is left out of the price's JSON: a stored
            configuration without the key compares equal when a campaign is resumed.
        currency: ISO 4217 code of the prices (``"USD"``).
    """

    model_config = _FROZEN

    input_per_mtok: float = Field(ge=0, allow_inf_nan=False)
    output_per_mtok: float = Field(ge=0, allow_inf_nan=False)
    cached_input_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    cache_write_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    currency: str = Field(default="USD", min_length=1, max_length=16)

    @model_serializer(mode="wrap")
    def _without_unset_write_price(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The price's fields, without ``cache_write_per_mtok`` when it is ``None``: the resume
        check (:mod:`ablation.store.resume`) compares a stored configuration's prices key by key,
        and one stored without that key must equal a price that leaves it unset."""
        data: dict[str, Any] = handler(self)
        if self.cache_write_per_mtok is None:
            data.pop("cache_write_per_mtok", None)
        return data


class CampaignConfig(BaseModel):
    """Everything that decides how a campaign runs and is analysed.

    Attributes:
        seed: Seeds arm order and every resampling, so a report is reproducible.
        concurrency: Maximum trials in flight at once.
        timeout_s: Per-trial time limit in seconds (``None``: no limit).
        runs: Repeats of every task per arm.
        retry: Retry policy for agent calls.
        on_error: How errors and timeouts count: ``"fail"`` (a failed trial), ``"exclude"``
            (the pair is excluded and listed) or ``"abort"`` (stop the campaign).
        alpha: Significance level for tests and gates, in (0, 0.5): every gate tests one side, and
            the non-inferiority and equivalence tests use the 1 - 2 alpha interval.
        confidence_level: Level of every reported interval.
        n_resamples: Bootstrap resamples.
        rate_limit_per_s: Optional cap on agent calls per second per arm.
        gates: Release gates.
        labels: User labels kept in provenance (model configuration, dataset version, ...).
        sequential: Sequential mode (``None``: every task runs, fixed-n analysis).
        isolation: Where Python agents run: ``"thread"`` (default: daemon threads and the event
            loop of this process) or ``"process"`` (worker processes, so an agent that calls
            ``os._exit``, segfaults or exhausts memory costs one trial; see
            :mod:`ablation.run.isolation`).
        worker_memory_mb: With ``isolation="process"``, each worker's address-space limit in MiB
            (``RLIMIT_AS``; ``None``: no limit).
        sandbox: How ``code_tests`` verifiers that do not choose confine agent-written code:
            ``"bubblewrap"`` (default; where bubblewrap cannot run, such a trial is an error
            naming the fix) or ``"process"`` (weaker: resource limits only, named in the
            report's provenance and every trial's note). See docs/SECURITY.md.
        max_output_bytes: Cap on a Python agent's output (:mod:`ablation.run.output_caps`); a
            larger output is the trial's error. Command and HTTP agents take the same number
            from ``--max-output-bytes``. Default 8 MiB, at most 128 MiB (the largest a trial's
            stored row can hold with room to spare: SQLite refuses values over 10⁹ bytes).
        prices: Per model id, a price that overrides the price database when a trial reports
            usage but no cost (``[tool.ablation.prices]``; see
            :mod:`ablation.agents.pricing`).
        traces: Whether each trial's OpenTelemetry spans are collected
            (:mod:`ablation.run.spans`): ``"auto"`` (default) when ``opentelemetry-sdk`` is
            installed (the ``otel`` extra), ``"on"`` (an error without it) or ``"off"``.
    """

    model_config = _FROZEN

    seed: int = 0
    concurrency: int = Field(default=8, ge=1)
    timeout_s: float | None = Field(default=300.0, gt=0)
    runs: int = Field(default=1, ge=1)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    on_error: Literal["fail", "exclude", "abort"] = "fail"
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    confidence_level: float = Field(default=0.95, gt=0, lt=1)
    n_resamples: int = Field(default=10_000, ge=100)
    rate_limit_per_s: float | None = Field(default=None, gt=0)
    gates: GatePolicy = Field(default_factory=GatePolicy)
    labels: dict[str, str] = Field(default_factory=dict)
    sequential: SequentialPolicy | None = None
    isolation: Literal["thread", "process"] = "thread"
    worker_memory_mb: int | None = Field(default=None, ge=64)
    sandbox: Literal["bubblewrap", "process"] = "bubblewrap"
    max_output_bytes: int = Field(default=8 * 1024 * 1024, ge=1, le=128 * 1024 * 1024)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    traces: Literal["auto", "on", "off"] = "auto"

    @model_validator(mode="after")
    def _isolation_fits(self) -> Self:
        if self.worker_memory_mb is not None and self.isolation != "process":
            raise ValueError(
                "worker_memory_mb: limits worker processes, so it needs isolation='process'"
            )
        if self.traces == "on" and self.isolation == "process":
            raise ValueError(
                "traces: 'on' requires spans from agents in this process, and isolation='process' "
                "runs them in worker processes, where none is collected"
            )
        return self


class Provenance(BaseModel):
    """Where a report's numbers come from: seed, methods, versions, suite and agents, times.

    The analysis settings (seed, resamples, confidence level, alpha, runs, on_error, methods and
    versions) are filled in by :func:`ablation.analysis.build.build_report` from the configuration it
    used; callers give only what the analysis cannot know (agents, suite, times, campaign).
    """

    model_config = _FROZEN

    seed: int | None = None
    n_resamples: int = 10_000
    confidence_level: float = 0.95
    alpha: float = 0.05
    runs: int = 1
    on_error: str = "fail"
    methods: dict[str, str] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    suite_fingerprint: str | None = None
    baseline_agent: str | None = None
    candidate_agent: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    campaign_id: str | None = None
    baseline_reused_from: str | None = None
    baseline_ran_at: str | None = None
    source: str = "campaign"
    labels: dict[str, str] = Field(default_factory=dict)
    #: Where the campaign's Python agents ran (``"thread"`` or ``"process"``; ``None``: not a campaign).
    isolation: str | None = None
    #: How ``code_tests`` confined agent-written code by default (``None``: not a campaign).
    sandbox: str | None = None


def config_or_default(config: object) -> CampaignConfig:
    """``config``, or ``CampaignConfig()`` when it is ``None``: what every public function taking
    ``config=`` does with it.

    Raises:
        WrongType: for anything else, e.g. a ``dict`` of its fields (``CampaignConfig(**fields)``
            is the config), which failed later as an ``AttributeError`` deep in the run.
    """
    if config is None:
        return CampaignConfig()
    if not isinstance(config, CampaignConfig):
        raise WrongType(
            f"config must be a CampaignConfig, got {type(config).__name__}"
            + (" (pass CampaignConfig(**fields))" if isinstance(config, dict) else "")
        )
    return config
