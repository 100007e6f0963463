"""Structural equality for verdicts: numbers within a tiny tolerance, strings without surrounding
white space, numpy arrays and scalars as plain Python data, containers compared element by element.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

__all__ = ["FLOAT_ABS_TOL", "FLOAT_REL_TOL", "MAX_DEPTH", "close", "plain", "values_equal"]

FLOAT_REL_TOL = 1e-9
FLOAT_ABS_TOL = 1e-12
#: Levels of nested containers :func:`values_equal` follows.
MAX_DEPTH = 100

#: Types whose equal values (``==``, same exact type) pass every rule below: the common verdict
#: is decided without the rules' conversions and checks.
_PLAIN_SCALARS = frozenset({str, int, float, bool})


#: The builtin types whose subclasses are read through the builtin's own methods, so that an
#: overridden ``__eq__``, ``strip`` or ``__iter__`` of an output cannot change what is compared.
_BASE_VALUE: dict[type, Callable[[Any], Any]] = {
    bool: bool,
    int: lambda v: int.__add__(v, 0),
    float: lambda v: float.__add__(v, 0.0),
    str: str.__str__,
    bytes: lambda v: bytes.__getitem__(v, slice(None)),
    list: list.copy,
    tuple: lambda v: tuple.__getitem__(v, slice(None)),
    dict: lambda v: dict(dict.items(v)),
    set: set.copy,
    frozenset: frozenset.copy,
}


def plain(value: Any) -> Any:
    """Plain Python data for a verdict: builtin values as they are, a subclass of a builtin as
    the builtin value it holds (read with the builtin's methods, never its own), and numpy arrays
    and scalars (anything non-builtin with ``tolist``) as their ``tolist()``."""
    kind = type(value)
    if kind in _BASE_VALUE:
        return value
    for base, read in _BASE_VALUE.items():
        if isinstance(value, base):
            return read(value) if base is not bool else value
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) else value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def close(a: float, b: float, rel_tol: float, abs_tol: float) -> bool:
    """Whether ``|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)``; NaN is close to NaN only.

    Assumes ``a`` and ``b`` are ``int`` or ``float`` and the tolerances are 0 or more. An ``int``
    past the float range is compared exactly (fractions); it is close to no infinity and no NaN.
    """
    if a == b:
        return True
    if any(isinstance(x, float) and not math.isfinite(x) for x in (a, b)):
        return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    try:
        return abs(a - b) <= max(rel_tol * max(abs(a), abs(b)), abs_tol)
    except OverflowError:  # an int beyond float range: compare exactly with fractions
        if math.isinf(rel_tol) or math.isinf(abs_tol):
            return True  # two finite numbers are within an infinite tolerance
        fa, fb = Fraction(a), Fraction(b)
        return abs(fa - fb) <= max(Fraction(rel_tol) * max(abs(fa), abs(fb)), Fraction(abs_tol))


def values_equal(a: Any, b: Any, *, strip_strings: bool = True, _depth: int = 0) -> bool:
    """Structural equality used by :data:`equals` and :func:`json_equal`.

    Rules: numpy values are compared through ``tolist()`` (never ``bool(array)``); ``bool`` only
    equals ``bool``; numbers compare with ``rel_tol=1e-9, abs_tol=1e-12`` (NaN equals NaN);
    strings compare after stripping surrounding whitespace when ``strip_strings``; lists and tuples
    are interchangeable and compared element-wise; mappings need the same keys and equal values
    (key order is irrelevant); anything else must be of the expected value's exact type and
    equal to it both ways (``a == b`` and ``b == a`` each a real ``True``), so an object whose
    ``__eq__`` always says yes (``unittest.mock.ANY``, a buggy agent's sentinel) never equals a
    value of another type. A subclass of a builtin is compared by the builtin value it holds
    (:func:`plain`), whatever its own ``__eq__`` says.

    Raises:
        RecursionError: containers nested more than :data:`MAX_DEPTH` levels deep (a list that
            holds itself is): they are not compared, and no verdict is given.
    """
    if _depth > MAX_DEPTH:
        raise RecursionError(f"the values are nested more than {MAX_DEPTH} levels deep (or hold themselves)")
    kind = type(a)
    if kind is type(b) and kind in _PLAIN_SCALARS and a == b:
        return True
    a, b = plain(a), plain(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return close(a, b, FLOAT_REL_TOL, FLOAT_ABS_TOL)
    if isinstance(a, str) and isinstance(b, str):
        return a.strip() == b.strip() if strip_strings else a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if set(a) != set(b):
            return False
        return all(
            values_equal(a[k], b[k], strip_strings=strip_strings, _depth=_depth + 1) for k in a
        )
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(
            values_equal(x, y, strip_strings=strip_strings, _depth=_depth + 1)
            for x, y in zip(a, b, strict=True)
        )
    if type(a) is not type(b):
        return False
    try:
        return (a == b) is True and (b == a) is True
    except Exception:
        return False
