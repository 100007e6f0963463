"""Brent's bracketing root finder with the semantics of ``scipy.optimize.brentq``.

A line-for-line port of scipy's ``brentq.c`` (Charles Harris's version of R. P. Brent,
*Algorithms for Minimization without Derivatives*, 1973, chapter 4: inverse quadratic
interpolation, secant steps and bisection, with the bracketing check), so the report path need
not import ``scipy.optimize`` (a third of a second). Same iterates, same stopping rule
``|b − a|/2 < (xtol + rtol·|x|)/2``, same errors for an invalid bracket or tolerances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["brentq"]

_RTOL_MIN = 4.0 * 2.0**-52  # 4 * np.finfo(float).eps, scipy's lower bound on rtol


def _check(xtol: float, rtol: float, maxiter: int) -> None:
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < _RTOL_MIN:
        raise ValueError(f"rtol too small ({rtol:g} < {_RTOL_MIN:g})")
    if maxiter < 0:
        raise ValueError("maxiter must be greater than 0")


def _step(xpre: float, xcur: float, xblk: float, fpre: float, fcur: float, fblk: float) -> float:
    """The interpolation step of scipy's ``brentq.c`` (secant or inverse quadratic)."""
    if xpre == xblk:
        return -fcur * (xcur - xpre) / (fcur - fpre)
    dpre = (fpre - fcur) / (xpre - xcur)
    dblk = (fblk - fcur) / (xblk - xcur)
    return -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))


def brentq(
    f: Callable[..., float],
    a: float,
    b: float,
    args: tuple[Any, ...] = (),
    xtol: float = 2e-12,
    rtol: float = 4.0 * 2.0**-52,
    maxiter: int = 100,
) -> float:
    """A root of ``f`` in ``[a, b]``, where ``f(a)`` and ``f(b)`` have opposite signs.

    Args:
        f: a continuous function of one float (plus ``args``).
        a, b: the bracket.
        args: extra positional arguments of ``f``.
        xtol, rtol: the root is returned once the bracket's half-width is below
            ``(xtol + rtol·|x|)/2``; ``xtol > 0``, ``rtol ≥ 4·eps`` (scipy's defaults and bounds).
        maxiter: iteration limit.

    Raises:
        ValueError: ``f(a)`` and ``f(b)`` have the same sign, or a tolerance is out of range.
        RuntimeError: no convergence within ``maxiter`` iterations.
    """
    _check(xtol, rtol, maxiter)
    xpre, xcur = float(a), float(b)
    fpre, fcur = float(f(xpre, *args)), float(f(xcur, *args))
    if fpre == 0.0:
        return xpre
    if fcur == 0.0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    xblk = fblk = spre = scur = 0.0
    for _ in range(maxiter):
        if fpre != 0.0 and fcur != 0.0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2.0
        sbis = (xblk - xcur) / 2.0
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            stry = _step(xpre, xcur, xblk, fpre, fcur, fblk)
            if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
                spre, scur = scur, stry
            else:
                spre = scur = sbis
        else:
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = float(f(xcur, *args))
    raise RuntimeError(f"brentq failed to converge after {maxiter} iterations")
