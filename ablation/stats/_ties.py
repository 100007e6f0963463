"""Paired differences with scale-aware ties and zeros, for the rank and sign statistics (private).

``y − x`` carries the round-off of its operands: when ``x`` and ``y`` are decimals stored as
floats, each is off by up to half an ulp of itself and the subtraction adds half an ulp of the
result, so a difference is known only to within ``2·eps·max(|x|, |y|)`` (``eps = 2⁻⁵²``), its
*tolerance*. Differences equal in decimal can therefore differ in their last bits, and a rank
test would see ties split (``scipy.stats.wilcoxon`` warns about exactly this). The rule here is
relative to each pair's own operands, so it is the same at every scale (a rank test must not
change when the data are multiplied by 10¹³):

* a difference within its tolerance of 0 is zero (and ties only with the other zeros);
* differences whose magnitudes ``|d|``, sorted, are within the sum of their tolerances of the
  next are tied (a chain of such steps forms one group), and every member of a group takes the
  magnitude of the member with the smallest operands (the least round-off), with its own sign.

Differences of exactly representable values (integers, binary fractions) are exact and stay as
they are; distinct differences farther apart than a few ulps of their operands are never merged.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._common import paired_arrays

__all__ = ["TIE_ULPS", "tied_differences"]

TIE_ULPS = 2.0
"""Tolerance of a difference in units of ``eps·max(|x|, |y|)`` (module docstring)."""

_EPS = float(np.finfo(np.float64).eps)


def tied_differences(x: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """``y − x`` with scale-aware zeros and ties (module docstring); a new array of ``n``.

    Memory: the differences, their tolerances and magnitudes (three arrays of ``n``), plus, when
    some differences are within their tolerances of each other, the magnitudes' order and their
    sorted copies; each temporary is freed as soon as it is read for the last time.

    Raises:
        ValueError: On mismatched or non-finite input (as :func:`paired_arrays`).
    """
    xa, ya = paired_arrays(x, y)
    d = ya - xa
    if d.size == 0:
        return d
    tol = np.abs(xa)
    np.maximum(tol, np.abs(ya), out=tol)
    tol *= TIE_ULPS * _EPS  # no overflow: the operands are finite
    mag = np.abs(d)
    zero = mag <= tol
    d[zero] = 0.0  # also turns -0.0 into 0.0
    mag[zero] = 0.0
    del zero
    if not _near_ties(mag, 2.0 * float(tol.max())):
        return d
    order = np.argsort(mag, kind="stable")
    s, t = mag[order], tol[order]
    del tol
    new_group = np.empty(s.size, dtype=bool)
    new_group[0] = True
    gaps = np.diff(s)
    new_group[1:] = gaps > t[:-1] + t[1:]
    del gaps
    new_group[1:] |= s[:-1] == 0.0  # zeros tie only with zeros
    group = np.cumsum(new_group, dtype=np.int32 if s.size < 2**31 else np.int64)
    np.subtract(group, 1, out=group)
    # per group (a run of the sorted magnitudes), the member with the smallest tolerance, the
    # first of them on ties of tolerance: found by one pass over the runs, no second sort
    starts = np.flatnonzero(new_group)
    del new_group
    smallest = np.minimum.reduceat(t, starts)
    candidates = np.flatnonzero(t == smallest[group])
    del t, smallest
    firsts = candidates[np.r_[True, group[candidates][1:] != group[candidates][:-1]]]
    mag[order] = s[firsts][group]
    del order, s, group
    out: NDArray[np.float64] = np.copysign(mag, d, out=mag)
    out[d == 0.0] = 0.0
    return out


def _near_ties(mag: NDArray[np.float64], within: float) -> bool:
    """Whether two non-zero magnitudes differ by more than 0 and at most ``within`` (twice the
    largest tolerance): the cheap check before ties are looked for; with none, nothing is merged
    (continuous data, or differences that are exact already)."""
    s = np.sort(mag)
    gaps = np.diff(s)
    near = (gaps > 0.0) & (gaps <= within)
    near &= s[:-1] > 0.0
    return bool(near.any())


def in_float_range(x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """``x / s``, ``y / s`` and ``s``: a power of two (1 unless a value passes 2¹⁰²⁰) after
    which no difference nor the sum of two differences (a Walsh average's) overflows. Ranks,
    signs and ties (relative to the operands) are the same at every power-of-two scale.
    """
    xa, ya = paired_arrays(x, y)
    top = float(max(np.max(np.abs(xa)), np.max(np.abs(ya)))) if xa.size else 0.0
    if top <= 2.0**1020:
        return xa, ya, 1.0
    s = math.ldexp(1.0, math.frexp(top)[1] - 1)
    return xa / s, ya / s, s


def common_difference(x: ArrayLike, y: ArrayLike) -> float | None:
    """The difference ``y − x`` every pair shares, equal up to the round-off of the values (as
    :func:`tied_differences` ties them; computed at a power-of-two scale, so no difference
    overflows), or ``None`` when two pairs differ. Their variance is then 0 and a t undefined."""
    xs, ys, scale = in_float_range(x, y)
    d = tied_differences(xs, ys)
    return None if d.size == 0 or np.any(d != d[0]) else float(d[0]) * scale
