"""Wilcoxon signed-rank statistic and p-values in numpy, without importing ``scipy.stats``.

``scipy.stats`` takes 1-1.5 s to import, which every report with a latency, cost or quality
comparison paid for one Wilcoxon test. This module computes what ``scipy.stats.wilcoxon``
(scipy 1.17, ``_wilcoxon.py``) computes for the two methods a report uses at any size:

- the normal approximation without continuity correction: average ranks of ``|d|``, ``z = (W+ − μ)
  / σ`` with ``μ = n(n+1)/4`` and ``σ² = (n(n+1)(2n+1) − Σ(t³ − t)/2) / 24`` over the tie groups
  ``t``; with ``zero_method="pratt"`` the zeros are ranked, their ``n₀(n₀+1)/4`` and
  ``n₀(n₀+1)(2n₀+1)`` are subtracted (Cureton 1967) and their tie group is left out of the
  correction;
- the exact null distribution of ``W+`` for untied, zero-free differences: the number of subsets
  of ``{1, …, n}`` with each sum, counted exactly in integers (scipy sums float pmfs; the two
  agree to rounding). The two-sided p-value is ``2·min(P(W+ ≥ ⌊w⌋), P(W+ ≤ ⌈w⌉))`` clipped to 1.

- the exhaustive permutation test scipy runs for tied or zero differences at ``n ≤ 13``
  (``PermutationMethod``, every one of the ``2ⁿ`` sign flips): here the ``2ⁿ`` values of ``W+``
  are counted by their doubled (integer) average ranks, so no flip is formed. scipy's counts
  compare the flips' ``W+`` with the observed one within a relative ``100·eps``; the values are
  half-integers, apart by at least ½, so the exact integer comparison counts the same flips, and
  the p-value is the same ``count / 2ⁿ``. scipy's own way took 0.14 s at n = 9 and 2.3 s at
  n = 13 per test, and a report makes one for latency, cost and each quality score.

Other permutation tests (more than 13 differences with ``method="permutation"``) are left to
``scipy.stats``. :func:`signed_rank_test` picks the method as scipy does and returns the test.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.stats._dist import ndtr
from ablation.stats._lazy import LazyModule
from ablation.stats._results import TestResult

__all__ = [
    "PERMUTATION_MAX",
    "signed_rank_asymptotic",
    "signed_rank_exact",
    "signed_rank_permutation",
    "signed_rank_sums",
    "signed_rank_test",
]

_st: Any = LazyModule("scipy.stats")


def _rank_sums(
    d: NDArray[np.float64], *, every_group: bool = True
) -> tuple[int, int, NDArray[np.int64] | None]:
    """``(2·W+, 2·W−, tie-group sizes or None)`` of :func:`signed_rank_sums`; ``None`` when no two
    ``|d|`` are equal (every group has one member, no tie correction).

    ``every_group=False``: the sizes of the groups of two or more only (in order), which is all
    the tie correction needs; with fewer tied keys than groups (a few ties among many
    differences) no array of every group is made (:func:`_tied_rank_sums`), and with many ties
    the arrays are of the few groups.

    One working array of ``n`` keys (made in place) and a byte per element besides; when no two
    ``|d|`` tie (continuous data) no per-group array is made: ``2·W+`` is the sum of ``2i + 2``
    over the positions ``i`` of the positive keys. ``W−`` follows from the total: the average
    ranks of all ``n`` differences sum to ``n(n+1)/2``, those of the ``z`` zeros (the first
    group, neither sign) to ``z(z+1)/2``.
    """
    n = d.size
    key = np.abs(np.asarray(d, dtype=np.float64)).view(np.uint64)
    key <<= np.uint64(1)  # the sign bit of |d| is 0
    key |= d > 0
    key.sort()
    sign = key.astype(np.uint8)  # the low byte, holding the sign bit
    sign &= 1
    step = np.bitwise_xor(key[1:], key[:-1])
    new = step > 1  # neighbours differ above the sign bit: a new magnitude
    del step
    zeros = int(np.searchsorted(key, 0, side="right"))  # the keys of d == ±0 are 0
    counts: NDArray[np.int64] | None = None
    groups = 1 + int(np.count_nonzero(new))
    if groups == n:
        twice_plus = 2 * (int(np.flatnonzero(sign).sum()) + int(np.count_nonzero(sign)))
    elif not every_group and n - groups < groups:  # fewer tied keys than groups
        twice_plus, counts = _tied_rank_sums(sign, new)
    else:
        starts = np.flatnonzero(np.concatenate(([True], new)))
        counts = np.diff(np.append(starts, n))
        positives = np.add.reduceat(sign, starts, dtype=np.int64)
        twice_plus = int(np.dot(2 * starts + 1 + counts, positives))
        if not every_group:
            counts = counts[counts > 1]
    return twice_plus, n * (n + 1) - twice_plus - zeros * (zeros + 1), counts


def _tied_rank_sums(
    sign: NDArray[np.uint8], new: NDArray[np.bool_]
) -> tuple[int, NDArray[np.int64]]:
    """``(2·W+, sizes of the groups of two or more)`` from the sorted keys' ``sign`` bits and
    ``new`` (``new[i]``: key ``i + 1`` starts a group), with arrays of the tied keys only.

    Every key is first taken as a group of its own (``2·W+`` adds ``2i + 2`` per positive key
    ``i``, as without ties); each tied group then replaces its positive keys' ``2i + 2`` with
    its average rank doubled, ``2s + 1 + t``, per positive key (start ``s``, ``t`` members).
    The same integers as the every-group sum, so the same ``W+``.
    """
    twice_plus = 2 * (int(np.flatnonzero(sign).sum()) + int(np.count_nonzero(sign)))
    same = np.flatnonzero(~new)  # key i + 1 has key i's magnitude: i and i + 1 share a group
    gap = np.diff(same) > 1
    starts = same[np.concatenate(([True], gap))]
    counts = same[np.concatenate((gap, [True]))] + 2 - starts  # a run i = s .. e - 1: keys s .. e
    offsets = np.cumsum(counts) - counts  # each group's first member among the tied keys
    members = np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))
    positive = sign[members].astype(np.int64)
    per_group = np.add.reduceat(positive, offsets)
    as_singles = int(np.dot(2 * members + 2, positive))
    twice_plus += int(np.dot(2 * starts + 1 + counts, per_group)) - as_singles
    return twice_plus, counts


def signed_rank_sums(d: NDArray[np.float64]) -> tuple[float, float, NDArray[np.int64]]:
    """``(W+, W−, tie-group sizes)`` of the differences ``d`` ranked by ``|d|`` (zeros included).

    Average ranks as ``scipy.stats.rankdata(|d|, 'average')``, tie groups in increasing order of
    ``|d|``, from one integer sort: the bits of a non-negative double order as the double does,
    so ``bits(|d|)·2 + [d > 0]`` (unsigned 64-bit) sorts by ``|d|`` and carries the sign. A group
    starting at 0-based position ``s`` with ``t`` members has average rank ``s + (t + 1)/2``;
    twice the rank sums are summed in integers, so ``W±`` are exact (half-integers) for any
    ``n < 2⁵²``. Assumes finite ``d`` (the callers check it): NaN payloads would not form groups
    as ``rankdata`` does.
    """
    if d.size == 0:
        return 0.0, 0.0, np.zeros(0, dtype=np.int64)
    twice_plus, twice_minus, counts = _rank_sums(d)
    if counts is None:
        counts = np.ones(d.size, dtype=np.int64)
    return twice_plus / 2.0, twice_minus / 2.0, counts


def signed_rank_asymptotic(
    d: NDArray[np.float64], zero_method: str, alternative: str
) -> tuple[float, float]:
    """``(statistic, p)`` by the normal approximation, no continuity correction (module docstring).

    Args:
        d: The differences used: non-zero ones for ``"wilcox"``; all of them for ``"pratt"``.
        zero_method: ``"wilcox"`` or ``"pratt"``.
        alternative: ``"two-sided"``, ``"less"`` or ``"greater"``.

    Returns:
        ``min(W+, W−)`` two-sided or ``W+`` one-sided, and the p-value.
    """
    twice_plus, twice_minus, ties = _rank_sums(d, every_group=False) if d.size else (0, 0, None)
    r_plus, r_minus = twice_plus / 2.0, twice_minus / 2.0
    n = float(d.size)
    mean = n * (n + 1.0) * 0.25
    var = n * (n + 1.0) * (2.0 * n + 1.0)
    zeros = int(np.count_nonzero(d == 0))
    if zero_method == "pratt" and zeros:
        mean -= zeros * (zeros + 1.0) * 0.25
        var -= zeros * (zeros + 1.0) * (2.0 * zeros + 1.0)
        if ties is not None and zeros > 1:  # the zeros are the smallest |d|: the first tied group
            ties = ties[1:]
    correction = 0.0  # untied: every group's t³ − t is 0
    if ties is not None:
        t = ties.astype(np.float64)
        correction = float(np.sum(t**3 - t))
    se = math.sqrt((var - correction / 2.0) / 24.0)
    z = (r_plus - mean) / se
    if alternative == "two-sided":
        p = 2.0 * float(ndtr(-abs(z)))
    else:
        p = float(ndtr(-z if alternative == "greater" else z))
    return (min(r_plus, r_minus) if alternative == "two-sided" else r_plus), p


@lru_cache(maxsize=64)
def _subset_sum_counts(n: int) -> tuple[int, ...]:
    """How many subsets of ``{1, …, n}`` have each sum ``0 … n(n+1)/2`` (exact integers)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    top = 0
    for k in range(1, n + 1):
        top += k
        for s in range(top, k - 1, -1):
            counts[s] += counts[s - k]
    return tuple(counts)


def signed_rank_exact(d: NDArray[np.float64], alternative: str) -> tuple[float, float]:
    """``(statistic, p)`` from the exact null distribution of ``W+`` (untied, zero-free ``d``)."""
    r_plus, r_minus, _ = signed_rank_sums(d)
    n = d.size
    counts = _subset_sum_counts(n)
    total = 1 << n
    lower = sum(counts[: math.ceil(r_plus) + 1])  # P(W+ <= ceil(w)) * 2^n
    upper = sum(counts[math.floor(r_plus) :])  # P(W+ >= floor(w)) * 2^n
    if alternative == "less":
        p = lower / total
    elif alternative == "greater":
        p = upper / total
    else:
        p = min(1.0, 2 * min(lower, upper) / total)
    return (min(r_plus, r_minus) if alternative == "two-sided" else r_plus), p


#: Most differences whose ``2ⁿ`` sign flips :func:`signed_rank_permutation` counts (scipy's
#: exhaustive limit for its automatic choice: ``2¹³`` is below its default 9999 resamples).
PERMUTATION_MAX = 13


def _twice_ranks(d: NDArray[np.float64]) -> list[int]:
    """Twice each ``|d|``'s average rank (``rankdata(|d|, "average")``), in integers.

    A tie group at 0-based sorted positions ``s … e − 1`` has average rank ``(s + e + 1) / 2``.
    """
    magnitude = np.abs(d)
    order = np.argsort(magnitude, kind="stable")
    ordered = magnitude[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], d.size)
    twice = np.empty(d.size, dtype=np.int64)
    twice[order] = np.repeat(starts + ends + 1, ends - starts)
    return twice.tolist()


def signed_rank_permutation(d: NDArray[np.float64], alternative: str) -> tuple[float, float]:
    """``(statistic, p)`` of scipy's exhaustive sign-flip test, for ``n ≤`` :data:`PERMUTATION_MAX`.

    ``d`` are the differences used (zeros included for ``"pratt"``: they are ranked, and either
    sign leaves them out of ``W+``). Each of the ``2ⁿ`` flips is equally likely; the number of
    flips giving each ``2·W+`` is counted exactly, and the p-values are scipy's
    ``count(W+ ≤ w) / 2ⁿ``, ``count(W+ ≥ w) / 2ⁿ`` and twice the smaller one (clipped to 1).
    """
    if d.size > PERMUTATION_MAX:
        raise ValueError(f"at most {PERMUTATION_MAX} differences, got {d.size}")
    values = d.tolist()
    # a zero (ranked under "pratt") adds nothing to W+ whichever its sign
    ranks = [r if v != 0 else 0 for r, v in zip(_twice_ranks(d), values, strict=True)]
    counts = [1] + [0] * sum(ranks)  # the number of flips with each 2·W+
    for r in ranks:
        counts = [c + (counts[s - r] if s >= r else 0) for s, c in enumerate(counts)]
    observed = sum(r for r, v in zip(ranks, values, strict=True) if v > 0)
    total = float(1 << d.size)
    lower = float(sum(counts[: observed + 1])) / total
    upper = float(sum(counts[observed:])) / total
    p = {"less": lower, "greater": upper}.get(alternative, min(lower, upper) * 2)
    r_plus, r_minus = observed / 2.0, (sum(ranks) - observed) / 2.0
    return (min(r_plus, r_minus) if alternative == "two-sided" else r_plus), min(max(p, 0.0), 1.0)


def signed_rank_test(d: NDArray[np.float64], zero_method: str, method: str, alternative: str) -> TestResult:
    """:func:`ablation.stats.wilcoxon_signed_rank` of the differences ``d`` (arguments checked
    there; ``d`` is read, never written), the method resolved by scipy 1.17's rule (that
    function's docstring)."""
    zero = d == 0.0
    nonzero = d[~zero] if zero.any() else d  # no copy of differences that are all non-zero
    del zero
    used = nonzero if zero_method == "wilcox" else d
    if nonzero.size == 0:
        return TestResult(
            0.0,
            1.0,
            f"Wilcoxon signed-rank ({zero_method}; no non-zero differences)",
            int(used.size),
        )
    resolved, stat, p = _signed_rank_test(used, nonzero, zero_method, method, alternative, d.size)
    label = {
        "exact": "exact",
        "permutation": "exact by exhaustive permutation" if used.size <= 13 else "permutation",
        "asymptotic": "normal approximation",
    }[resolved]
    return TestResult(
        stat if math.isfinite(stat) else 0.0,
        min(1.0, max(0.0, p)) if math.isfinite(p) else 1.0,
        f"Wilcoxon signed-rank ({label}, zero_method={zero_method}, {alternative})",
        int(used.size),
    )


def _signed_rank_test(
    used: NDArray[np.float64],
    nonzero: NDArray[np.float64],
    zero_method: str,
    method: str,
    alternative: str,
    total: int,
) -> tuple[str, float, float]:
    """``(resolved method, statistic, p)`` of :func:`signed_rank_test`."""

    def untied() -> bool:  # a sort: only asked where the exact method is in question
        if used.size != nonzero.size:
            return False
        magnitudes = np.sort(np.abs(nonzero))  # finite; a sort, not np.unique (imports numpy.ma)
        return not bool((magnitudes[1:] == magnitudes[:-1]).any())

    resolved = method
    if method == "auto":  # scipy's rule: the sizes count every difference, zeros included
        if total <= 50 and nonzero.size == total and untied():
            resolved = "exact"
        else:
            resolved = "permutation" if total <= 13 else "asymptotic"
    if resolved == "asymptotic":
        return resolved, *signed_rank_asymptotic(used, zero_method, alternative)
    if resolved == "exact" and untied():
        return resolved, *signed_rank_exact(used, alternative)
    if resolved == "permutation" and used.size <= PERMUTATION_MAX:
        return resolved, *signed_rank_permutation(used, alternative)
    # a sampled permutation test, or "exact" asked for tied data: scipy's own handling
    scipy_method: str | Any = resolved
    if resolved == "permutation":
        scipy_method = _st.PermutationMethod(n_resamples=2**13, rng=0)
    res = _st.wilcoxon(
        used, zero_method=zero_method, correction=False, alternative=alternative,
        method=scipy_method,
    )  # fmt: skip
    return resolved, float(res.statistic), float(res.pvalue)
