"""Shared input validation and small helpers (private)."""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats import _dist

ALTERNATIVES = ("two-sided", "less", "greater")


def as_count(value: object, name: str) -> int:
    """Return ``value`` as a non-negative ``int``.

    Accepts Python/numpy integers and integral floats; rejects bools, negatives, NaN and fractions.
    """
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a count, not a bool")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif (
        isinstance(value, numbers.Real)
        and math.isfinite(float(value))
        and float(value).is_integer()
    ):
        out = int(float(value))
    else:
        raise ValueError(f"{name} must be a non-negative integer count, got {value!r}")
    if out < 0:
        raise ValueError(f"{name} must be a non-negative integer count, got {out}")
    return out


def as_table(n11: object, n12: object, n21: object, n22: object) -> tuple[int, int, int, int]:
    """The four cells of a paired 2x2 table as counts ``(n11, b, c, n22)``, each checked."""
    return as_count(n11, "n11"), as_count(n12, "n12"), as_count(n21, "n21"), as_count(n22, "n22")


def check_level(confidence_level: float, name: str = "confidence_level") -> float:
    """Validate a probability strictly inside ``(0, 1)``."""
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {confidence_level!r}")
    return level


def check_alternative(alternative: str) -> str:
    """Validate ``alternative``."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return alternative


def z_two_sided(confidence_level: float) -> float:
    """Standard normal quantile ``z_{1 − α/2}`` for a two-sided level ``1 − α``."""
    return -float(_dist.ndtri((1.0 - confidence_level) / 2.0))


def paired_arrays(x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate two paired 1-D float arrays of equal length with finite values."""
    xa = np.asarray(x, dtype=np.float64).reshape(-1)
    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    if xa.shape != ya.shape:
        raise ValueError(
            f"x and y must have the same length (paired by task), got {xa.size} and {ya.size}"
        )
    bad = int(np.count_nonzero(~np.isfinite(xa)) + np.count_nonzero(~np.isfinite(ya)))
    if bad:
        raise ValueError(f"x and y must be finite; {bad} value(s) are NaN or infinite")
    return xa, ya


def clip_unit(value: float, low: float = 0.0, high: float = 1.0) -> float:
    """Clip ``value`` into ``[low, high]`` as a Python float."""
    return float(min(max(value, low), high))


def exp_or_inf(x: float) -> float:
    """``exp(x)``, ``inf`` where it overflows a float (``math.exp`` raises there)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf
