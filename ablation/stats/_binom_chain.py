"""Binomial tails for thousands of consecutive ``N`` at ``N ≥ 1e5``, by exact recurrences from anchors.

The exact power of a 1e5+-pair McNemar design (:mod:`ablation.stats.power`) needs ``P(X ≤ k(N))``
for thousands of consecutive ``N`` at one ``p``, with ``k(N)`` moving by 0 or 1 per ``N``. The
continued fraction of the incomplete beta needs dozens of numpy steps per call and about one
step per ``√N`` per entry, so here it runs only on anchors; every other entry is reached from its
anchor by the exact identities of the binomial cdf ``F_N(k)`` and pmf ``f_N(k)``:

- ``F_{N+1}(k) = F_N(k) − p·f_N(k)`` (the extra trial must fail to stay at ``≤ k``);
- ``F_{N+1}(k+1) = F_N(k) + p·f_N(k)·(N − k)/(k + 1)`` (the same with ``f_{N+1}(k+1)`` added);
- ``f_{N+1}(k)/f_N(k) = q·(N+1)/(N+1−k)``, ``f_{N+1}(k+1)/f_N(k) = p·(N+1)/(k+1)``

(Abramowitz & Stegun 26.5.15–26.5.16 for ``I_x(a, b)`` at integer parameters; the upper tail
``1 − F`` takes the increments with the opposite sign, never as ``1 −`` a value).

The path is fixed by the entry alone, so a tail does not depend on the other entries of the call:
entry ``(k, N, p)`` with ``t = N mod BLOCK`` lies on the line from the anchor ``N_a = N − t``,
``k_a = k − ⌊t·p + ½⌋``, whose ``s``-th point is ``(k_a + ⌊s·p + ½⌋, N_a + s)``; entries on one
line share it. Along a line the pmf carries at most ``2·BLOCK`` roundings and an error of the
anchor pmf scales only the net change ``F_t − F_0``. Where increments cancel (``|F_0| +
Σ|increments|`` above :data:`_CANCEL` times the result), where a value lies in ``[1e-305,
1e-280)`` (an underflowed pmf would matter there), or where the anchor is outside the domain,
the entry is computed directly instead.

Assumptions: flat float arrays of one length, ``k`` integral; ``direct(k, n, p, upper=...)``
returns the tails entrywise with the same conventions, ``pmf(k, n, p)`` the binomial pmf; the
anchors are computed by ``direct`` in one call, so ``direct`` must be entrywise itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BLOCK", "chain_tails"]

#: Points per line: its anchor from the direct method, then the recurrence.
BLOCK = 32
_CANCEL = 16.0  # largest (|F_0| + Σ|increments|) / |F| kept (a bound on the rounding growth)
_SMALLEST = 1e-280  # results below this go to the direct method, unless below _ZERO
_ZERO = 1e-305  # a tail whose anchor and increments sum (in absolute value) to at most this

Array = NDArray[np.float64]


def _lines(
    k: Array, n: Array, p: Array
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], Array, Array, Array]:
    """Each inner entry's anchor and place on its line (module docstring), anchors deduplicated.

    Returns the entries served (indices), their anchor (row) and step ``t``, and the anchors'
    ``k``, ``N`` and ``p``. Entries whose anchor falls outside the domain are left out.
    """
    at = np.flatnonzero((k >= 0) & (k < n) & (p > 0) & (p < 1))
    t = n[at] - BLOCK * np.floor(n[at] / BLOCK)
    k_a = k[at] - np.floor(t * p[at] + 0.5)
    n_a = n[at] - t
    ok = (k_a >= 0) & (k_a < n_a)
    at, t, k_a, n_a = at[ok], t[ok], k_a[ok], n_a[ok]
    p_a = p[at]
    order = np.lexsort((k_a, n_a, p_a))
    key = np.stack((k_a[order], n_a[order], p_a[order]))
    new = np.concatenate((at[:1] >= 0, (np.diff(key, axis=1) != 0).any(axis=0)))
    row = np.empty(at.size, dtype=np.int64)
    row[order] = np.cumsum(new) - 1
    first = order[new]
    return at, row, t.astype(np.int64), k_a[first], n_a[first], p_a[first]


def _block_values(
    k: Array, n: Array, p: Array, start: Array, f0: Array, *, upper: bool
) -> tuple[Array, Array]:
    """The tails of whole blocks (rows) from their anchor tails ``start`` and pmf ``f0``.

    Returns the tails and ``|F_0| + Σ|increments|`` per entry (what their rounding scales with).
    """
    q = 1.0 - p
    up = np.diff(k, axis=1) == 1.0  # link s−1 → s raises k
    n0, k0, p0, q0 = n[:, :-1], k[:, :-1], p[:, :-1], q[:, :-1]
    ratio = np.where(up, p0 * (n0 + 1.0) / (k0 + 1.0), q0 * (n0 + 1.0) / (n0 + 1.0 - k0))
    f = np.empty(k.shape)
    f[:, 0] = f0
    with np.errstate(under="ignore"):
        f[:, 1:] = f0[:, None] * np.cumprod(ratio, axis=1)
        inc = p0 * f[:, :-1] * np.where(up, (n0 - k0) / (k0 + 1.0), -1.0)
    value = np.empty(k.shape)
    value[:, 0] = start
    value[:, 1:] = start[:, None] + np.cumsum(-inc if upper else inc, axis=1)
    spread = np.empty(k.shape)
    spread[:, 0] = np.abs(start)
    spread[:, 1:] = np.abs(start)[:, None] + np.cumsum(np.abs(inc), axis=1)
    return value, spread


def chain_tails(
    k: Array,
    n: Array,
    p: Array,
    *,
    upper: bool,
    direct: Callable[..., Any],
    pmf: Callable[..., Any],
) -> Array:
    """``P(X ≤ k)`` (``upper=False``) or ``P(X > k)`` for ``X ~ Bin(n, p)`` along a chain (module docstring).

    Args:
        k, n, p: flat float arrays of one length (``k`` integral).
        upper: which tail.
        direct: the entrywise tails, ``direct(k, n, p, upper=upper)`` (used for anchors and fallbacks).
        pmf: the binomial pmf, ``pmf(k, n, p)``.

    Returns:
        The tails, each either direct or from the recurrence within the bound of :data:`_CANCEL`.
    """
    out = np.empty(k.shape)
    done = np.zeros(k.shape, dtype=bool)
    at, row, t, k_a, n_a, p_a = _lines(k, n, p)
    if at.size:
        steps = np.arange(BLOCK, dtype=np.float64)
        kb = k_a[:, None] + np.floor(steps[None, :] * p_a[:, None] + 0.5)
        nb = n_a[:, None] + steps[None, :]
        pb = np.broadcast_to(p_a[:, None], kb.shape)
        start = np.asarray(direct(k_a, n_a, p_a, upper=upper), dtype=np.float64)
        f0 = np.asarray(pmf(k_a, n_a, p_a), dtype=np.float64)
        value, spread = _block_values(kb, nb, pb, start, f0, upper=upper)
        v, s = value[row, t], spread[row, t]
        # kept: little cancellation, and either a normal value (an underflowed pmf is then
        # negligible) or a value in the last decades above 0 (``spread`` bounds it there)
        good = (s <= _CANCEL * v) & ((v >= _SMALLEST) | (s <= _ZERO))
        out[at[good]] = v[good]
        done[at[good]] = True
    rest = np.flatnonzero(~done)
    if rest.size:
        out[rest] = direct(k[rest], n[rest], p[rest], upper=upper)
    return out
