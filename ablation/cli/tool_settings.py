"""Types of the ``[tool.ablation]`` keys, checked before anything runs.

TOML has types; a key of the wrong type used to be accepted and misread (``no_significant_regression
= "false"`` turned the gate on, ``quality = "rubric"`` was iterated letter by letter, ``seed = true``
became 1, ``format = "pdf"`` failed only after the campaign). :func:`check_tool_types` validates
every key with a strict pydantic type and names the file, the section and the key in the error:
``pyproject.toml [tool.ablation] margin: ...``.
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
)

from ablation.errors import ConfigError

__all__ = [
    "MAX_RESAMPLES",
    "MIN_RATE_LIMIT",
    "ToolSettings",
    "check_tool_types",
    "rate_limit_flag",
    "resamples_flag",
]

#: Smallest accepted calls-per-second cap (one call per ~17 minutes); below it a run never ends.
MIN_RATE_LIMIT = 1e-3
#: Largest accepted number of bootstrap resamples (memory grows with it).
MAX_RESAMPLES = 10_000_000

_Number = StrictInt | StrictFloat


class _Price(BaseModel):
    """One ``[tool.ablation.prices."MODEL"]`` table (see :class:`ablation.config.ModelPrice`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_per_mtok: _Number = Field(ge=0)
    output_per_mtok: _Number = Field(ge=0)
    cached_input_per_mtok: _Number | None = Field(default=None, ge=0)
    currency: StrictStr = Field(default="USD", min_length=1, max_length=16)


class ToolSettings(BaseModel):
    """The accepted type (and range) of each ``[tool.ablation]`` key.

    Its validator is built on first use (``defer_build``): a project without a ``[tool.ablation]``
    table never pays for it at start-up.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    alpha: _Number | None = Field(default=None, gt=0, lt=1)
    confidence: _Number | None = Field(default=None, gt=0, lt=1)
    margin: _Number | None = Field(default=None, gt=0, lt=1)
    max_latency_ratio: _Number | None = Field(default=None, gt=0)
    rate_limit: _Number | None = Field(default=None, ge=MIN_RATE_LIMIT)
    timeout: _Number | None = Field(default=None, gt=0)
    concurrency: StrictInt | None = Field(default=None, ge=1)
    max_attempts: StrictInt | None = Field(default=None, ge=1)
    resamples: StrictInt | None = Field(default=None, ge=100, le=MAX_RESAMPLES)
    runs: StrictInt | None = Field(default=None, ge=1)
    seed: StrictInt | None = Field(default=None, ge=0)
    max_output_bytes: StrictInt | None = Field(default=None, ge=1)
    fail_fast: StrictInt | None = Field(default=None, ge=0)
    min_completed: _Number | None = Field(default=None, ge=0, le=1)
    stop_when_inconclusive_after: StrictInt | None = Field(default=None, ge=1)
    store: StrictStr | None = None
    on_error: Literal["fail", "exclude", "abort"] | None = None
    format: Literal["terminal", "markdown", "json", "html"] | None = None
    no_significant_regression: StrictBool | None = None
    critical_gate: StrictBool | None = None
    quality: list[StrictStr] | None = None
    retry_on: list[StrictStr] | None = None
    labels: dict[StrictStr, Any] | None = None
    isolation: Literal["thread", "process"] | None = None
    sandbox: Literal["bubblewrap", "process"] | None = None
    worker_memory_mb: StrictInt | None = Field(default=None, ge=64)
    prices: dict[StrictStr, _Price] | None = None


def check_tool_types(settings: dict[str, Any], path: Path) -> None:
    """Raise :class:`ConfigError` naming ``path [tool.ablation] KEY`` for the first bad value."""
    try:
        ToolSettings(**settings)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        raise ConfigError(
            f"{path} [tool.ablation] {key}: {first['msg']} (got {settings.get(key)!r})"
        ) from None


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
