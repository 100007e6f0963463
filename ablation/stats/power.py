"""Exact power, sample size and minimum detectable effect of the exact McNemar test.

The exact conditional McNemar test (:func:`ablation.stats.mcnemar` with ``method="exact"``)
conditions on the ``N = b + c`` discordant pairs; its power at ``n`` pairs is found here by
summing over the whole trinomial distribution of ``(b, c)``, with no normal approximation:
``N ~ Bin(n, ψ)`` and ``b | N ~ Bin(N, p10/ψ)`` with ``p10 = (ψ − δ)/2`` the regression probability
and ``δ = p01 − p10`` (candidate − baseline, positive when the candidate is better). For each ``N``
the rejection region of the two-sided test (``min(1, 2·P(X ≤ min(b, c))) ≤ α``) is
``b ≤ k(N)`` or ``b ≥ N − k(N)``, with ``k(N)`` the largest ``k`` such that
``2·P(X ≤ k) ≤ α`` for ``X ~ Bin(N, 1/2)``; a one-sided test uses one tail at level α.
Connor's (1987) normal formula (:func:`ablation.stats.sample_size_paired`) approximates this and,
because the exact test is conservative, usually undershoots the n it needs.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.stats import _binom_quantile, _dist
from ablation.stats._common import as_count, check_alternative, check_level
from ablation.stats._connor import connor_mde, normal_z
from ablation.stats._incbeta import log_beta_kernel
from ablation.stats._lazy import LazyModule
from ablation.stats._mcnemar_region import critical_k as _critical_k
from ablation.stats._roots import brentq

_st: Any = LazyModule("scipy.stats")

__all__ = [
    "EXACT_POWER_MAX_N",
    "exact_mcnemar_power",
    "exact_minimum_detectable_effect",
    "exact_sample_size_paired",
]

_TAIL = 1e-15  # binomial mass of N left out on each side (added to nothing: power is a lower sum)
EXACT_POWER_MAX_N = 10_000_000
"""Most pairs at which the exact power (and so the exact MDE) is computed: above it the log-gamma
weights of ``N`` lose accuracy and the sum costs seconds; use Connor's formula there."""
_GRID_N = 2_000  # designs up to this many pairs sum the power over one (N, j) grid (_grid)
_GRID_CELLS = 1 << 18  # and at most this many cells (2 MiB)


def _check_design(psi: float, delta: float) -> tuple[float, float]:
    ps = float(psi)
    dl = float(delta)
    if not (math.isfinite(ps) and 0.0 < ps <= 1.0):
        raise ValueError(f"psi (discordant probability) must be in (0, 1], got {psi!r}")
    if not math.isfinite(dl) or abs(dl) > ps:
        raise ValueError(f"|delta| must be at most psi ({ps:g}), got {delta!r}")
    return ps, dl


def _check_n(n: object, caller: str) -> int:
    """``n`` as a count in ``[1, EXACT_POWER_MAX_N]``, else a ``ValueError`` naming the limit."""
    nn = as_count(n, "n")
    if nn < 1:
        raise ValueError(f"{caller} needs at least 1 pair, got n = {nn}")
    if nn > EXACT_POWER_MAX_N:
        raise ValueError(
            f"{caller} computes the exact power for at most {EXACT_POWER_MAX_N} pairs "
            f"(EXACT_POWER_MAX_N), got n = {nn}; above it use Connor's normal approximation "
            "(sample_size_paired, minimum_detectable_effect), which the exact figures approach "
            "there"
        )
    return nn


def _lower_tail(k: NDArray[np.int64], ns: NDArray[np.int64], p: float) -> NDArray[np.float64]:
    """``P(X ≤ k)`` for ``X ~ Bin(N, p)``, 0 when ``k < 0`` (``bdtr`` gives NaN there)."""
    out: NDArray[np.float64] = np.where(k >= 0, _dist.bdtr(np.maximum(k, 0), ns, p), 0.0)
    return out


def _rejection(
    k: NDArray[np.int64], ns: NDArray[np.int64], pi_b: float, alternative: str
) -> NDArray[np.float64]:
    """``P(reject | N)`` per ``N`` when a discordant pair is a regression with probability ``pi_b``.

    Two-sided: ``P(b ≤ k) + P(c ≤ k)``; ``"greater"`` (candidate better, p = ``P(X ≤ b)``): the
    first; ``"less"`` (c small): the second. Both tails of a two-sided test come from one
    :func:`_dist.bdtr` call over a ``(2, len(ns))`` grid, each row a chain of consecutive ``N``.
    """
    if alternative != "two-sided":
        return _lower_tail(k, ns, pi_b if alternative == "greater" else 1.0 - pi_b)
    both = np.where(k >= 0, _dist.bdtr(np.maximum(k, 0), ns, np.array([[pi_b], [1.0 - pi_b]])), 0.0)
    out: NDArray[np.float64] = both[0] + both[1]
    return out


@functools.lru_cache(maxsize=32)
def _design(
    n: int, psi: float, alpha: float, alternative: str
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """What the power at ``n`` pairs needs that does not depend on ``δ``: ``N``, its weights, ``k(N)``.

    Cached, so a search over ``δ`` (:func:`exact_minimum_detectable_effect`) computes the
    binomial weights of ``N`` and the critical values once.
    """
    lo = int(_binom_quantile.binom_ppf(_TAIL, n, psi))
    hi = int(_binom_quantile.binom_isf(_TAIL, n, psi))
    ns = np.arange(max(lo - 1, 0), min(hi + 1, n) + 1, dtype=np.int64)
    log_w = (
        _dist.gammaln(n + 1.0)
        - _dist.gammaln(ns + 1.0)
        - _dist.gammaln(n - ns + 1.0)
        + _dist.xlogy(ns, psi)
        + _dist.xlog1py(n - ns, -psi)
    )
    k = _critical_k(ns, alpha / 2.0 if alternative == "two-sided" else alpha)
    for array in (ns, log_w, k):
        array.flags.writeable = False
    return ns, np.exp(log_w), k


@functools.lru_cache(maxsize=32)
def _grid(
    n: int, psi: float, alpha: float, alternative: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None:
    """``(N, j, L)`` with ``L[N, j] = log(w_N · f_N(j; ½))`` for ``j ≤ k(N)`` (−∞ elsewhere).

    ``w_N`` is the weight of ``N`` discordant pairs and ``f_N(j; ½)`` the ``Bin(N, ½)`` pmf, in
    log form by Loader's saddle point (:func:`ablation.stats._incbeta.log_beta_kernel`, as
    :func:`ablation.stats._dist.binom_pmf`). ``None`` above :data:`_GRID_N` pairs or
    :data:`_GRID_CELLS` cells, where :func:`_rejection`'s tails are used instead.
    """
    ns, weights, k = _design(n, psi, alpha, alternative)
    keep = k >= 0
    if n > _GRID_N or not keep.any() or keep.sum() * (int(k.max()) + 1) > _GRID_CELLS:
        return None
    big_n, j = ns[keep].astype(np.float64), np.arange(int(k.max()) + 1, dtype=np.float64)
    nn, jj = np.broadcast_arrays(big_n[:, None], j[None, :])
    inner = (jj > 0) & (jj < nn)
    ji, ni = np.where(inner, jj, 1.0), np.where(inner, nn, 2.0)
    log_f = np.where(
        inner,
        log_beta_kernel(ji, ni - ji, 0.5, 0.5) + np.log(ni / (ji * (ni - ji))),
        nn * -math.log(2.0),  # j = 0 or j = N: 2^-N
    )
    with np.errstate(divide="ignore"):  # a weight that underflowed to 0 leaves its row out
        log_w = np.log(weights[keep])[:, None]
    grid = np.where(jj <= k[keep][:, None], log_w + log_f, -np.inf)
    for array in (big_n, j, grid):
        array.flags.writeable = False
    return big_n, j, grid


def _grid_power(
    design: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]],
    pi_b: float,
    alternative: str,
) -> float:
    """``Σ_N w_N·P(reject | N)`` as one sum over :func:`_grid`, for ``0 < π_b < 1``.

    ``f_N(j; π) = f_N(j; ½)·(2π)^j·(2(1 − π))^(N−j)``, so each tail term is
    ``exp(L[N, j] + N·log(2(1 − π)) + j·log(π/(1 − π)))``: one ``exp`` over the grid per tail,
    where the tails cost dozens of numpy steps of the continued fraction. The rounding of the
    exponent's terms (up to a few hundred in size at ``N ≤ 2000``) bounds the relative error by
    ~1e-13 (tested against the tails at 1e-12).
    """
    big_n, j, grid = design
    total = 0.0
    ps = (pi_b, 1.0 - pi_b) if alternative == "two-sided" else (
        pi_b if alternative == "greater" else 1.0 - pi_b,
    )  # fmt: skip
    for p in ps:
        exponent = grid + (big_n * math.log(2.0 * (1.0 - p)))[:, None]
        exponent += (j * math.log(p / (1.0 - p)))[None, :]
        total += float(np.exp(exponent, out=exponent).sum())
    return total


def _power(n: int, psi: float, delta: float, alpha: float, alternative: str) -> float:
    pi_b = min(1.0, max(0.0, (psi - delta) / (2.0 * psi)))  # P(regression | discordant)
    # the grid takes logs of π and 1 − π for both tails, so both must be inside (0, 1) as floats:
    # 1 − π_b < 1 also excludes a π_b of 2⁻⁵⁴ or less, whose 1 − π_b rounds to 1.0
    grid = _grid(n, psi, alpha, alternative) if 0.0 < 1.0 - pi_b < 1.0 else None
    if grid is not None:
        return float(min(1.0, max(0.0, _grid_power(grid, pi_b, alternative))))
    ns, weights, k = _design(n, psi, alpha, alternative)
    reject = _rejection(k, ns, pi_b, alternative)
    return float(min(1.0, max(0.0, float(np.dot(weights, reject)))))


def exact_mcnemar_power(
    n: int,
    psi: float,
    delta: float,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> float:
    """Exact power of the exact conditional McNemar test at ``n`` pairs.

    Sums ``P(reject)`` over the trinomial distribution of ``(b, c)`` (module docstring), with the
    rejection rule ``p ≤ alpha`` of :func:`ablation.stats.mcnemar` (``method="exact"``). Binomial
    weights of ``N`` are computed in log space; the ``N`` outside the central ``1 − 2·10⁻¹⁵`` of
    ``Bin(n, ψ)`` are left out (low by at most ``2·10⁻¹⁵``, plus the rounding of the log-gamma
    weights, which grows with ``n``: they sum to ``1 − 6·10⁻¹⁰`` at n = 10⁶). Cost ``O(√n)`` after the
    truncation. Up to :data:`_GRID_N` pairs the
    sum runs over one grid of ``(N, j)`` (:func:`_grid_power`, within ~1e-13 of the tails). At
    ``δ = 0`` it is the exact size.

    Args:
        n: Number of pairs (tasks), ≥ 1.
        psi: Discordant probability ``ψ = p10 + p01`` in ``(0, 1]``.
        delta: Difference ``δ = p01 − p10`` (candidate − baseline), ``|δ| ≤ ψ``.
        alpha: Significance level of the test.
        alternative: ``"two-sided"``, ``"greater"`` (H1: candidate better, p = ``P(X ≤ b)``) or
            ``"less"`` (H1: candidate worse, p = ``P(X ≥ b)``), as in :func:`mcnemar`.

    Returns:
        The probability that the test rejects, in ``[0, 1]``.

    Raises:
        ValueError: On invalid input, or above :data:`EXACT_POWER_MAX_N` pairs (10⁷), where the
            message names that limit.
    """
    nn = _check_n(n, "exact_mcnemar_power")
    ps, dl = _check_design(psi, delta)
    a = check_level(alpha, "alpha")
    check_alternative(alternative)
    return _power(nn, ps, dl, a, alternative)


def _conditional_power(
    ns: NDArray[np.int64], psi: float, delta: float, alpha: float, alternative: str
) -> NDArray[np.float64]:
    """``P(reject | N)`` for each discordant total ``N``."""
    pi_b = min(1.0, max(0.0, (psi - delta) / (2.0 * psi)))
    k = _critical_k(ns, alpha / 2.0 if alternative == "two-sided" else alpha)
    return _rejection(k, ns, pi_b, alternative)


def exact_sample_size_paired(
    psi: float,
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    max_n: int = 1_000_000,
) -> int:
    """Smallest number of pairs at which the exact McNemar test reaches the target power.

    Exact power is not monotone in n for exact tests (the saw-tooth of Chernick & Liu 2002): the
    result is the **first** n with power ≥ target, and larger n are *not* required to keep it. For
    ψ < 1 the random number of discordant pairs smooths the saw-tooth (at ψ = 0.1, δ = 0.03 the
    power increases at every n from 600 to 1300); at ψ near 1 small dips right after the returned
    n remain possible, so add a few pairs when planning a suite at ψ ≈ 1.

    The search is exhaustive: the distribution of ``N`` at ``n + 1`` pairs is that at ``n`` mixed
    with one more Bernoulli(ψ) pair, so the power at every ``n = 1, 2, …`` comes from one update of a
    vector (trimmed to its non-negligible ``O(√n)`` entries) and one dot product; no ``n`` is skipped.

    Args:
        psi: Discordant probability ``ψ`` in ``(0, 1]``.
        delta: Target difference ``δ`` (non-zero, ``|δ| ≤ ψ``); sign as in
            :func:`exact_mcnemar_power` (only its size matters for two-sided tests).
        alpha: Significance level.
        power: Target power.
        alternative: ``"two-sided"`` (default), ``"greater"`` or ``"less"``.
        max_n: Give up above this n.

    Returns:
        The smallest n with exact power ≥ ``power``.

    Raises:
        ValueError: On invalid input, or when no ``n ≤ max_n`` reaches the target (for a one-sided
            test in the wrong direction no n does).
    """
    ps, dl = _check_design(psi, delta)
    if dl == 0.0:
        raise ValueError("delta must be a non-zero difference in pass rates")
    a = check_level(alpha, "alpha")
    target = check_level(power, "power")
    check_alternative(alternative)
    limit = as_count(max_n, "max_n")
    cap = 1024
    g = _conditional_power(np.arange(cap + 1, dtype=np.int64), ps, dl, a, alternative)
    dist = np.array([1.0 - ps, ps])  # Bin(N; 1, ψ) over N = start .. start + len − 1
    start = 0
    for n in range(1, limit + 1):
        end = start + dist.size - 1
        if end > cap:
            cap *= 2
            g = _conditional_power(np.arange(cap + 1, dtype=np.int64), ps, dl, a, alternative)
        if float(np.dot(dist, g[start : end + 1])) >= target:
            return n
        nxt = np.empty(dist.size + 1)
        nxt[:-1] = (1.0 - ps) * dist
        nxt[-1] = 0.0
        nxt[1:] += ps * dist
        keep = np.nonzero(nxt > 1e-18)[0]
        dist = nxt[keep[0] : keep[-1] + 1]
        start += int(keep[0])
    raise ValueError(f"no n <= {limit} reaches power {target:g} with the exact McNemar test")


def exact_minimum_detectable_effect(
    n: int,
    psi: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
) -> float:
    """Smallest ``|δ|`` at which the exact McNemar test with ``n`` pairs has the target power.

    The exact counterpart of :func:`ablation.stats.minimum_detectable_effect` (Connor's normal
    approximation). The exact power increases with ``|δ|`` at fixed n and ψ (each conditional
    rejection region is a pair of binomial tails, whose probability grows as ``P(regression |
    discordant)`` moves away from 1/2; checked numerically in the tests), so the root of
    ``power(δ) = target`` on ``(0, ψ]`` is found by ``brentq``. The root is first bracketed
    next to Connor's MDE ``δ_C``, by ``[δ_C, δ_C·(1 + 1/√(nψ))]``: the exact test is
    conservative, so its MDE lies a little above (by ~3% at ``nψ = 50``, ~0.05% at
    ``nψ = 5·10⁵``), and the search takes 8 powers in all at a million pairs instead of 20
    on ``(0, ψ]``. Where one end does not bracket the root, the
    search goes on between it and ``0`` or ``ψ``, so the result is the same root either way
    (within brentq's tolerance, ``1e-12`` absolute plus relative). For ``"less"`` the detectable
    regression is ``−δ``; the magnitude is returned in every case.

    Args:
        n: Number of pairs, ≥ 1.
        psi: Discordant probability ``ψ`` in ``(0, 1]`` (from a pilot, history or ``(b + c)/n``).
        alpha: Significance level.
        power: Target power.
        alternative: ``"two-sided"`` (default), ``"greater"`` or ``"less"``.

    Returns:
        The MDE in pass-rate units, or ``inf`` if even ``|δ| = ψ`` is not detectable.

    Raises:
        ValueError: On invalid input, or above :data:`EXACT_POWER_MAX_N` pairs (10⁷), where the
            message names that limit (use Connor's MDE,
            :func:`ablation.stats.minimum_detectable_effect`, there: the gap shrinks like
            ``1/√(nψ)``, ~0.05% at ``nψ = 5·10⁵``).
    """
    nn = _check_n(n, "exact_minimum_detectable_effect")
    ps, _ = _check_design(psi, 0.0)
    a = check_level(alpha, "alpha")
    target = check_level(power, "power")
    check_alternative(alternative)
    sign = -1.0 if alternative == "less" else 1.0

    @functools.lru_cache(maxsize=4)  # brentq starts at two ends checked before it
    def gap(d: float) -> float:
        return _power(nn, ps, sign * d, a, alternative) - target

    def root(lo: float, hi: float) -> float:
        return float(brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12, maxiter=200))

    lo, hi = 0.0, ps
    guess = connor_mde(nn, ps, normal_z(a, alternative), float(_dist.ndtri(target)))
    if 0.0 < guess < ps:  # next to Connor's MDE; an end that does not bracket goes to 0 or ψ
        lo, hi = guess, min(ps, guess * (1.0 + 1.0 / math.sqrt(nn * ps)))
        if gap(lo) >= 0.0:
            lo, hi = 0.0, lo
        elif gap(hi) < 0.0:
            lo, hi = hi, ps
    if gap(hi) < 0.0:  # hi is ψ here: nothing up to ψ is detectable
        return math.inf
    if gap(lo) >= 0.0:  # lo is 0 here: the size itself reaches the power
        return 0.0
    return root(lo, hi)
