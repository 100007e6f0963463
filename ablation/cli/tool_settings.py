"""The ``[tool.ablation]`` keys: a strict model generated from the option table, checked before
anything runs.

:class:`ToolSettings` is built from :data:`ablation.cli.option_table.OPTIONS`: one field per
option that has a key, with the option's type, range and choices, so the file and the command
line accept the same values (``settings.py`` refuses any other key; ``format`` takes the report
formats of :data:`ablation.render.FORMATS`). TOML has types; a key of the wrong type is refused
rather than misread (``no_significant_regression = "false"`` would turn the gate on, ``quality =
"rubric"`` would be iterated letter by letter, ``seed = true`` would become 1). Errors name the
file, the section, the key (and a table's entry: ``labels.team``, ``prices.gpt-4o.currency``)
and the line it is written on: ``pyproject.toml [tool.ablation] margin: ... (got 2) (line 7)``.
A label is text and a metric margin a finite number above 0 here already, so that such an
entry is refused with its line, as any other value is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from ablation.cli.option_table import OPTIONS, Option
from ablation.errors import ConfigError

__all__ = ["ToolSettings", "check_tool_types", "known_keys"]

_Number = StrictInt | StrictFloat


def _positive(value: float) -> float:
    """``value`` if it is a finite number above 0 (a metric margin)."""
    if not (math.isfinite(value) and value > 0):
        raise ValueError("must be a finite number above 0")
    return value


class _Price(BaseModel):
    """One ``[tool.ablation.prices."MODEL"]`` table (see :class:`ablation.config.ModelPrice`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_per_mtok: _Number = Field(ge=0)
    output_per_mtok: _Number = Field(ge=0)
    cached_input_per_mtok: _Number | None = Field(default=None, ge=0)
    cache_write_per_mtok: _Number | None = Field(default=None, ge=0)
    currency: StrictStr = Field(default="USD", min_length=1, max_length=16)


def _field(option: Option) -> tuple[Any, Any]:
    """``(annotation, Field)`` of ``option``'s key: its file type, range and choices."""
    simple: dict[str, Any] = {
        "float": _Number, "int": StrictInt, "str": StrictStr, "path": StrictStr, "switch": StrictBool,
        "off": StrictBool, "list": list[StrictStr],
        "margins": dict[StrictStr, Annotated[_Number, AfterValidator(_positive)]],
        "labels": dict[StrictStr, StrictStr], "prices": dict[StrictStr, _Price],
    }  # fmt: skip
    kind = option.file_kind or option.kind
    annotation: Any = simple.get(kind)
    if kind == "choice" and isinstance(option.choices, tuple):
        annotation = Literal[option.choices]
    elif kind == "choice":
        annotation = Annotated[StrictStr, AfterValidator(partial(_one_of, option.choices))]
    bounds = option.bounds
    if bounds is None:
        return annotation | None, Field(default=None)
    low_in, high_in = bounds.low_inclusive, bounds.high_inclusive
    return annotation | None, Field(
        default=None, allow_inf_nan=False,
        ge=bounds.low if low_in else None, gt=None if low_in else bounds.low,
        le=bounds.high if high_in else None, lt=None if high_in else bounds.high,
    )  # fmt: skip


def _one_of(choices: Any, value: str) -> str:
    """``value`` if it is one of ``choices`` (a lazily imported list)."""
    if value not in choices:
        raise ValueError(f"must be one of {', '.join(choices)}")
    return value


#: The accepted type (and range) of each ``[tool.ablation]`` key; the key is the option's name
#: with underscores (``metric_margins`` is the table form of ``--metric-margin``). Its validator
#: is built on first use (``defer_build``): a project without a ``[tool.ablation]`` table never
#: pays for it at start-up.
ToolSettings: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "ToolSettings",
    __config__=ConfigDict(frozen=True, extra="forbid", defer_build=True),
    __module__=__name__,
    **{o.key: _field(o) for o in OPTIONS if o.key is not None},
)


def known_keys() -> frozenset[str]:
    """Every accepted ``[tool.ablation]`` key (underscore form)."""
    return frozenset(ToolSettings.model_fields)


def check_tool_types(settings: dict[str, Any], path: Path, line: Callable[[str], str]) -> None:
    """Raise :class:`ConfigError` naming ``path [tool.ablation] KEY`` for the first bad value,
    and where the key is written: ``line(KEY)`` (``" (line 5)"``, or nothing) ends the message."""
    try:
        ToolSettings(**settings)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        # The entry of a table key (labels.team), its value; the rest of a location names a
        # union's member (int | float), whose errors come one per member, the widest last.
        named, value = [key], settings.get(key)
        for part in first["loc"][1:]:
            if not (isinstance(value, dict) and part in value):
                break
            named.append(str(part))
            value = value[part]
        same = [e for e in errors if e["loc"][: len(named)] == first["loc"][: len(named)]]
        msg = same[-1]["msg"].removeprefix("Value error, ")
        written = line(key) if key in settings else ""
        raise ConfigError(f"{path} [tool.ablation] {'.'.join(named)}: {msg} (got {value!r}){written}") from None
