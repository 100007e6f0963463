"""The median of the Walsh averages ``(d_i + d_j)/2``, ``i ≤ j`` (the Hodges–Lehmann estimate).

Three exact ways to the same number, picked by size:

- up to :data:`BRUTE_MAX` differences: every Walsh average, then their median (``np.median``'s
  bits, :func:`~ablation.stats.quantiles.median`);
- few distinct values (per-task means of verdicts are mostly 0, ±1 or a few fractions): the
  Walsh averages of a discrete distribution are the ``(v_a + v_b)/2`` of its distinct values
  ``v_a ≤ v_b`` with multiplicity ``c_a·c_b`` (``a < b``) or ``c_a(c_a + 1)/2`` (``a = b``), so the
  median is read off the ``O(k²)`` weighted pair averages of the ``k`` distinct values, whatever
  ``n`` is (:func:`walsh_median_counts`);
- otherwise a selection of the k-th Walsh average in the spirit of Monahan (1984) and
  Johnson & Mizoguchi (1978) (:func:`walsh_median_select`): each row ``i`` of the implicit
  sorted matrix ``(d_i + d_j)/2``, ``j ≥ i``, keeps the index range of its entries still in play;
  a seeded random sample of those entries gives two pivots that bracket the wanted rank, two
  ``O(n log n)`` counting passes shrink every row's range, and once a few million entries remain
  they are formed and partitioned. Each round divides the entries in play by about 40, so about
  four rounds reach 1e6 differences (1e11 Walsh averages) whatever the data; ``O(n)`` memory. The
  sample only steers the search: the answer is exact, and the seed makes the work repeatable.
  The older counting bisection on the value (:func:`walsh_median_bisection`, about 130 counting
  passes) stays as a reference and as the fallback should the selection stall.

References: Monahan JF (1984). Algorithm 616: fast computation of the Hodges-Lehmann location
estimator. *ACM TOMS* 10:265-270. Johnson DB, Mizoguchi T (1978). Selecting the K-th element in
X + Y and X1 + X2 + ... + Xm. *SIAM J Comput* 7:147-153.

Each pair average is computed as ``(v_a + v_b) / 2.0`` in every method, so they select from the
same multiset of floats; tests check they agree on random data with many ties.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.stats.quantiles import median

__all__ = [
    "BRUTE_MAX",
    "COUNTS_MAX",
    "walsh_median",
    "walsh_median_bisection",
    "walsh_median_counts",
    "walsh_median_select",
]

#: Largest number of differences whose Walsh averages are all formed.
BRUTE_MAX = 150
#: Largest number of distinct differences for the counting method (about 1.1 million pairs) ...
COUNTS_MAX = 1500
#: ... when their ``k²`` pairs are also at most this many per difference: the counting method's
#: cost grows with the pairs, the selection's with the differences, and this ratio is where
#: they cost the same.
_COUNTS_PER_N = 16


def _count_le(ds: NDArray[np.float64], t: float) -> int:
    """Number of Walsh averages ``(d_i + d_j)/2.0``, ``i ≤ j``, that are ``≤ t`` (``ds`` sorted),
    as computed: row ``i`` holds ``_prefix(ds, t)[i] − i`` of them. (Counting ``ds ≤ 2t − ds``
    alone is off where ``2t − d_i`` rounds across a value: with values repeated in tenths it
    put a median at -0.05 where the averages' own is -0.04999999999999999.)"""
    return int((_prefix(ds, t) - np.arange(ds.size)).sum())


def _kth_bisection(ds: NDArray[np.float64], k: int) -> float:
    """The k-th smallest (1-based) Walsh average, by bisection on the value then snapping."""
    lo, hi = float(ds[0]) - 1.0, float(ds[-1])
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _count_le(ds, mid) >= k:
            hi = mid
        else:
            lo = mid
    # the answer is the smallest Walsh average > lo: in row i, the one at _prefix(ds, lo)[i]
    j = _prefix(ds, lo)
    ok = j < ds.size
    cand = (ds[ok] + ds[j[ok]]) / 2.0
    cand = cand[cand > lo]
    return float(cand.min()) if cand.size else hi


def walsh_median_bisection(ds: NDArray[np.float64]) -> float:
    """Median of the Walsh averages of the sorted differences ``ds`` by counting bisection."""
    m = ds.size * (ds.size + 1) // 2
    if m % 2 == 1:
        return _kth_bisection(ds, (m + 1) // 2)
    return 0.5 * (_kth_bisection(ds, m // 2) + _kth_bisection(ds, m // 2 + 1))


#: Row numbers and row ranges of the selection: ``int32`` below 2³¹ differences (half the memory
#: of ``int64`` for its four arrays of every row), else ``int64``.
Index = NDArray[np.signedinteger[Any]]
#: Differences from which the selection's row arrays are ``int64``.
_INT32_ROWS = int(np.iinfo(np.int32).max)

#: Entries in play below which the selection forms them all and partitions ...
_FORM_MAX = 1 << 21
#: ... when they are also at most this many per row in play (forming costs about the entries,
#: a round about the rows: at 10³ differences one round of a small sample leaves a twentieth of
#: the 5·10⁵ entries, and forming those is ~10x cheaper than forming all).
_FORM_PER_ROW = 64
#: Entries sampled per round of the selection (at most; ``total^(2/3)`` of ``total`` entries in
#: play, as Floyd & Rivest's selection samples), and the bracket half-width in binomial SDs.
_SAMPLE, _Z = 100_000, 4.0
#: Rows placed at a time by :func:`_place` (at 10⁶ differences, one search over every row held
#: ~25 MiB of temporaries at once: the peak of a 10⁶-task report's latency statistics).
_BLOCK = 1 << 16


def _count_at_most(
    ds: NDArray[np.float64], q: NDArray[np.float64], positions: NDArray[np.float64] | None = None
) -> NDArray[np.int64]:
    """Per query, how many of the sorted ``ds`` are ``≤ q``, or one more (the caller corrects).

    The place ``np.searchsorted(ds, q, side="right")`` found by ``np.interp`` of the positions:
    faster for increasing queries, since ``searchsorted`` bisects all of ``ds`` for each query
    and ``np.interp`` first tries the neighbours of the previous query's place. Its value for ``q`` lies in ``[j, j + 1]``,
    ``j`` the last index with ``ds[j] ≤ q`` (the last of equal values; ``-1`` below ``ds[0]``
    by ``left``), so ``floor + 1`` is the count, or one more where the fraction rounded up to 1.
    A gap between neighbours whose reciprocal overflows makes the value non-finite: those
    queries use ``searchsorted``. ``positions``: ``np.arange`` of at least ``ds.size`` floats, made
    once by a caller that counts many blocks of queries.
    """
    if ds.size == 0:
        return np.zeros(q.size, dtype=np.int64)
    if positions is None:
        positions = np.arange(ds.size, dtype=np.float64)
    at = np.interp(q, ds, positions[: ds.size], left=-1.0)
    bad = ~np.isfinite(at)
    at[bad] = -1.0
    count = np.floor(at, out=at).astype(np.int64)
    count += 1
    if bad.any():
        count[bad] = np.searchsorted(ds, q[bad], side="right")
    return count


def _prefix(
    ds: NDArray[np.float64],
    t: float,
    rows: Index | None = None,
    positions: NDArray[np.float64] | None = None,
) -> NDArray[np.int64]:
    """Per row ``i`` (all, or ``rows``), the first ``j ≥ i`` with ``(ds[i] + ds[j]) / 2.0 > t`` (``n`` if none).

    Counting ``ds ≤ 2t − ds[i]`` gives the place up to round-off; the two loops then move it
    until the computed averages themselves straddle ``t`` (floating addition is monotone, so each
    row's averages are sorted), which makes every count exact for the averages as computed. Each
    loop checks every row once and then only the rows it moved. ``positions``: as in
    :func:`_count_at_most`.
    """
    n = ds.size
    i = np.arange(n) if rows is None else rows
    di = ds[i]
    # a row with ds[i] <= t has its place at or after the first ds[j] > t: search only there
    start = int(np.searchsorted(ds, t, side="right")) if i.size and di.max() <= t else 0
    # the queries 2t - ds[i] in increasing order (rows increase), then back to the rows' order
    j = np.maximum(_count_at_most(ds[start:], 2.0 * t - di[::-1], positions)[::-1] + start, i)
    # step down where the entry before j is already above t; every copy of that ds value gives
    # the same average, so a step passes them all (one step per distinct value, not per copy:
    # a value repeated thousands of times, as rounded latencies are, costs one step)
    moving = np.flatnonzero((j > i) & ((di + ds[np.maximum(j - 1, 0)]) / 2.0 > t))
    while moving.size:
        jm = np.maximum(np.searchsorted(ds, ds[j[moving] - 1], side="left"), i[moving])
        j[moving] = jm
        moving = moving[(jm > i[moving]) & ((di[moving] + ds[np.maximum(jm - 1, 0)]) / 2.0 > t)]
    # step up where the entry at j is still <= t, past every copy of its value
    moving = np.flatnonzero((j < n) & ((di + ds[np.minimum(j, n - 1)]) / 2.0 <= t))
    while moving.size:
        jm = np.searchsorted(ds, ds[j[moving]], side="right")
        j[moving] = jm
        moving = moving[(jm < n) & ((di[moving] + ds[np.minimum(jm, n - 1)]) / 2.0 <= t)]
    return j


def _place(
    ds: NDArray[np.float64],
    t: float,
    rows: Index,
    low: Index,
    high: Index,
) -> Index:
    """:func:`_prefix` of the increasing ``rows`` (each with a non-empty ``[low, high)``), clipped to it.

    Only rows whose first average ``(ds[i] + ds[i]) / 2.0 = ds[i]`` is ``≤ t`` are searched: in
    a row from ``searchsorted(ds, t, "right")`` on, ``j = i``, which clips to ``low``. The rows
    are searched :data:`_BLOCK` at a time, so the search's temporaries (about eight arrays of
    the rows searched) stay small; a row's place does not depend on the other rows.
    """
    at = low.copy()
    cut = int(np.searchsorted(rows, np.searchsorted(ds, t, side="right")))
    positions = np.arange(ds.size, dtype=np.float64) if cut else None
    for start in range(0, cut, _BLOCK):
        block = slice(start, min(start + _BLOCK, cut))
        j = _prefix(ds, t, rows[block], positions)
        at[block] = np.clip(j, low[block], high[block], out=j)
    return at


def _pivots(
    ds: NDArray[np.float64],
    rows: Index,
    low: Index,
    sizes: NDArray[np.int64],
    rank: int,
    rng: np.random.Generator,
) -> list[float]:
    """Two entries in play that bracket the ``rank``-th of them (0-based), from a random sample.

    ``sizes`` (the entries in play per row) is overwritten with its running sums.
    """
    ends = np.cumsum(sizes, out=sizes)  # in place: no second array of every row
    total = int(ends[-1])
    size = min(_SAMPLE, max(64, round(total ** (2 / 3))))
    pick = np.sort(rng.integers(0, total, size))  # sorted: a cache-friendly search
    r = np.searchsorted(ends, pick, side="right")
    first = np.where(r > 0, ends[r - 1], 0)  # entries in play before row r's
    sample = (ds[rows[r]] + ds[low[r] + pick - first]) / 2.0
    q = (rank + 1) / total
    spread = _Z * math.sqrt(size * q * (1.0 - q)) + 2.0
    at_rank = np.clip(np.array([-spread, spread]) + size * q, 0, size - 1).astype(int)
    pivots: list[float] = np.partition(sample, at_rank)[at_rank].tolist()
    return pivots


def _formed(
    ds: NDArray[np.float64], rows: Index, low: Index, sizes: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Every entry in play, ``(ds[i] + ds[j]) / 2.0`` for the ``rows`` ``i`` and ``j`` in
    ``[low, low + sizes)``, in row order; at most three arrays of the entries at a time, the
    entry numbers in the rows' own integer type (``int32`` below 2³¹ differences)."""
    index = rows.dtype  # holds every row and column number, and the <= _FORM_MAX entries
    r = np.repeat(np.arange(rows.size, dtype=index), sizes)
    j = np.arange(r.size, dtype=index)
    j -= (np.cumsum(sizes) - sizes - low).astype(index)[r]  # low[r] + place in row r's range
    formed = ds[rows][r]
    del r
    formed += ds[j]  # the same additions and halving as (ds[i] + ds[j]) / 2.0
    formed /= 2.0
    return formed


def _kth_select(ds: NDArray[np.float64], k: int) -> tuple[float, float | None]:
    """The k-th smallest (1-based) Walsh average of the sorted ``ds`` (module docstring).

    Also the (k+1)-th when it is among the entries formed at the end, else ``None``. Only the
    rows with entries still in play are kept (``rows``, with their ranges ``[low, high)``).
    """
    n = ds.size
    index = np.dtype(np.int32 if n < _INT32_ROWS else np.int64)  # rows, places and n itself
    rows: Index = np.arange(n, dtype=index)
    low: Index = rows.copy()
    high: Index = np.full(n, n, dtype=index)  # row i's entries in play: j in [low[i], high[i])
    below = 0  # entries left of every row's range
    rng = np.random.default_rng(0)
    for _ in range(64):
        sizes = np.subtract(high, low, dtype=np.int64)  # their running sums pass 2³¹
        total = int(sizes.sum())
        if total <= _FORM_MAX and total <= _FORM_PER_ROW * rows.size:
            ranks = [i for i in (k - below - 1, k - below) if i < total]
            formed = _formed(ds, rows, low, sizes)
            formed.partition(ranks)
            return float(formed[ranks[0]]), float(formed[ranks[1]]) if len(ranks) == 2 else None
        pivots = _pivots(ds, rows, low, sizes, k - below - 1, rng)  # sizes: their running sums now
        del sizes  # not held while the rows are placed
        for t in pivots:
            at = _place(ds, t, rows, low, high)
            count = below + int((at - low).sum())
            if count >= k:  # the k-th is <= t
                high = at
                break
            low, below = at, count  # the k-th is > t
        if int((high - low).sum()) == total:
            # no progress only when t is the largest entry in play (ties): the k-th is t
            # unless it is below t, and then every copy of t leaves play
            at = _place(ds, math.nextafter(t, -math.inf), rows, low, high)
            if below + int((at - low).sum()) < k:
                return t, None
            high = at
        keep = high > low
        rows = rows[keep]  # one at a time: an old array is freed before the next copy
        low = low[keep]
        high = high[keep]
    return _kth_bisection(ds, k), None


def walsh_median_select(ds: NDArray[np.float64]) -> float:
    """Median of the Walsh averages of the sorted differences ``ds`` by selection (module docstring)."""
    m = ds.size * (ds.size + 1) // 2
    first, second = _kth_select(ds, (m + 1) // 2)
    if m % 2 == 1:
        return first
    if second is None:
        # the next Walsh average: the same value if it is repeated, else the smallest above it;
        # rows from searchsorted(ds, first, "right") on start above first, at ds[i] (the least)
        cut = int(np.searchsorted(ds, first, side="right"))
        rows = np.arange(cut)
        at = _prefix(ds, first, rows)
        if int((at - rows).sum()) > m // 2:
            return first
        ok = at < ds.size
        above = (ds[rows[ok]] + ds[at[ok]]) / 2.0
        second = float(min(above.min(initial=math.inf), ds[cut] if cut < ds.size else math.inf))
    return 0.5 * (first + second)


def walsh_median_counts(values: NDArray[np.float64], counts: NDArray[np.int64]) -> float:
    """Median of the Walsh averages of a sample given as distinct ``values`` with ``counts``.

    Exact: the weighted pair averages of the distinct values are the Walsh averages of the
    sample with their multiplicities (module docstring). Cost ``O(k² log k)`` for ``k`` values.
    """
    i, j = np.triu_indices(values.size)
    averages = (values[i] + values[j]) / 2.0
    c = counts.astype(np.int64)
    weights = np.where(i == j, c[i] * (c[i] + 1) // 2, c[i] * c[j])
    order = np.argsort(averages, kind="stable")
    cumulative = np.cumsum(weights[order])
    m = int(cumulative[-1])
    sorted_avg = averages[order]

    def kth(k: int) -> float:
        return float(sorted_avg[int(np.searchsorted(cumulative, k, side="left"))])

    if m % 2 == 1:
        return kth((m + 1) // 2)
    return 0.5 * (kth(m // 2) + kth(m // 2 + 1))


def walsh_median(d: NDArray[np.float64], *, overwrite: bool = False) -> float:
    """Median of the Walsh averages of ``d`` (non-empty, no NaN), by the cheapest exact method.

    ``overwrite``: ``d`` may be sorted in place (as ``np.median``'s ``overwrite_input``), which
    saves a copy of a large sample. A zero median is ``0.0``, never ``-0.0``, whichever method
    found it: ``np.median`` sums from ``0.0`` (the selection may pick a ``-0.0`` average where
    ``-0.0`` and ``0.0`` differences tie).
    """
    n = d.size
    if n <= BRUTE_MAX:
        i, j = np.triu_indices(n)
        return median((d[i] + d[j]) / 2.0, overwrite=True)
    if overwrite:
        d.sort()
        ds = d
    else:
        ds = np.sort(d)
    new = ds[1:] != ds[:-1]  # the first of each distinct value but the first, as np.unique does
    distinct = 1 + int(np.count_nonzero(new))
    if distinct <= COUNTS_MAX and distinct * distinct <= _COUNTS_PER_N * n:
        starts = np.flatnonzero(np.concatenate(([True], new)))
        counts = np.diff(np.append(starts, n))
        return 0.0 + walsh_median_counts(ds[starts], counts)
    del new
    return 0.0 + walsh_median_select(ds)
