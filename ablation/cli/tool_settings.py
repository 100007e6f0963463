"""The ``[tool.ablation]`` keys: one declaration of each key's type and range, checked before
anything runs.

:class:`ToolSettings` is the single list of accepted keys (``settings.py`` refuses any other, and
the key list in its docstring is tested against this model; ``format`` takes the report formats of
:data:`ablation.render.FORMATS`). A numeric key that has a flag takes
its range from :data:`ablation.cli.flag_types.FLAG_RANGES` (:func:`_ranged`), so the file and the
command line accept the same values. TOML has types; a key of the wrong type is refused rather
than misread (``no_significant_regression = "false"`` would turn the gate on, ``quality =
"rubric"`` would be iterated letter by letter, ``seed = true`` would become 1). Errors name the
file, the section and the key: ``pyproject.toml [tool.ablation] margin: ...``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from ablation.cli.flag_types import FLAG_RANGES
from ablation.errors import ConfigError

__all__ = [
    "MAX_RESAMPLES",
    "MIN_RATE_LIMIT",
    "ToolSettings",
    "check_tool_types",
    "known_keys",
    "rate_limit_flag",
    "resamples_flag",
]

#: Smallest accepted calls-per-second cap (one call per ~17 minutes); below it a run never ends.
MIN_RATE_LIMIT = 1e-3
#: Largest accepted number of bootstrap resamples (memory grows with it).
MAX_RESAMPLES = 10_000_000

_Number = StrictInt | StrictFloat


def _ranged(flag: str) -> Any:
    """A ``Field`` (default ``None``) with the range ``FLAG_RANGES`` gives ``flag``."""
    _, low, high, low_in, high_in = FLAG_RANGES[flag]
    return Field(
        default=None,
        ge=low if low_in else None, gt=None if low_in else low,
        le=high if high_in else None, lt=None if high_in else high,
    )  # fmt: skip


class _Price(BaseModel):
    """One ``[tool.ablation.prices."MODEL"]`` table (see :class:`ablation.config.ModelPrice`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_per_mtok: _Number = Field(ge=0)
    output_per_mtok: _Number = Field(ge=0)
    cached_input_per_mtok: _Number | None = Field(default=None, ge=0)
    currency: StrictStr = Field(default="USD", min_length=1, max_length=16)


class ToolSettings(BaseModel):
    """The accepted type (and range) of each ``[tool.ablation]`` key; the key is the option's name
    with underscores (``metric_margins`` is the table form of ``--metric-margin``).

    Its validator is built on first use (``defer_build``): a project without a ``[tool.ablation]``
    table never pays for it at start-up.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    alpha: _Number | None = _ranged("--alpha")
    confidence: _Number | None = _ranged("--confidence")
    margin: _Number | None = _ranged("--margin")
    max_latency_ratio: _Number | None = _ranged("--max-latency-ratio")
    rate_limit: _Number | None = Field(default=None, ge=MIN_RATE_LIMIT)
    timeout: _Number | None = _ranged("--timeout")
    concurrency: StrictInt | None = _ranged("--concurrency")
    max_attempts: StrictInt | None = _ranged("--max-attempts")
    resamples: StrictInt | None = Field(default=None, ge=100, le=MAX_RESAMPLES)
    runs: StrictInt | None = _ranged("--runs")
    seed: StrictInt | None = _ranged("--seed")
    max_output_bytes: StrictInt | None = _ranged("--max-output-bytes")
    fail_fast: StrictInt | None = _ranged("--fail-fast")
    min_completed: _Number | None = _ranged("--min-completed")
    stop_when_inconclusive_after: StrictInt | None = _ranged("--stop-when-inconclusive-after")
    worker_memory_mb: StrictInt | None = _ranged("--worker-memory-mb")
    suite_claim: StrictBool | None = None
    store: StrictStr | None = None
    on_error: Literal["fail", "exclude", "abort"] | None = None
    format: StrictStr | None = None
    no_significant_regression: StrictBool | None = None
    allow_significant_regression: StrictBool | None = None
    require_complete: StrictBool | None = None
    allow_incomplete: StrictBool | None = None
    critical_gate: StrictBool | None = None
    timestamps: StrictBool | None = None
    sequential: StrictBool | None = None
    metric_margins: dict[StrictStr, _Number] | None = None
    quality: list[StrictStr] | None = None
    retry_on: list[StrictStr] | None = None
    agent_env: list[StrictStr] | None = None
    labels: dict[StrictStr, Any] | None = None
    isolation: Literal["thread", "process"] | None = None
    sandbox: Literal["bubblewrap", "process"] | None = None
    prices: dict[StrictStr, _Price] | None = None

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        from ablation.render import FORMATS  # the report formats, declared once

        if value is not None and value not in FORMATS:
            raise ValueError(f"must be one of {', '.join(FORMATS)}")
        return value


def known_keys() -> frozenset[str]:
    """Every accepted ``[tool.ablation]`` key (underscore form)."""
    return frozenset(ToolSettings.model_fields)


def check_tool_types(settings: dict[str, Any], path: Path) -> None:
    """Raise :class:`ConfigError` naming ``path [tool.ablation] KEY`` for the first bad value."""
    try:
        ToolSettings(**settings)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        # A union (int | float) lists one error per member, its widest ("a valid number") last.
        same = [e for e in errors if e["loc"][:1] == first["loc"][:1]]
        msg = same[-1]["msg"] if len(first["loc"]) > 1 else first["msg"]
        raise ConfigError(f"{path} [tool.ablation] {key}: {msg} (got {settings.get(key)!r})") from None


def resamples_flag(text: str) -> int:
    """argparse type of ``--resamples``: an integer in [100, MAX_RESAMPLES]."""
    value = int(text)
    if not 100 <= value <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(
            f"--resamples must be between 100 and {MAX_RESAMPLES}, got {value}"
        )
    return value


def rate_limit_flag(text: str) -> float:
    """argparse type of ``--rate-limit``: calls per second, at least MIN_RATE_LIMIT."""
    value = float(text)
    if not value >= MIN_RATE_LIMIT or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"--rate-limit must be a finite number >= {MIN_RATE_LIMIT}, got {text}"
        )
    return value
