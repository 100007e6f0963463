"""The Hodges–Lehmann estimate from distinct values and counts equals the per-pair methods exactly.

References: every Walsh average formed (``np.median`` of ``(d_i + d_j)/2``, ``i <= j``) and the
counting bisection the large-n path used before the counting method existed.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.stats import hodges_lehmann
from ablation.stats._ties import tied_differences
from ablation.stats._walsh import (
    BRUTE_MAX,
    walsh_median,
    walsh_median_bisection,
    walsh_median_counts,
)


@functools.lru_cache(maxsize=4)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(n)`` as read-only ``int32`` arrays, kept for the next sample of this size
    (a fifth of :func:`_brute`'s time at 2 600 differences, which many tests here use)."""
    i, j = (a.astype(np.int32) for a in np.triu_indices(n))
    i.flags.writeable = j.flags.writeable = False
    return i, j


def _brute(d: np.ndarray) -> float:
    i, j = _pairs(d.size)
    return float(np.median((d[i] + d[j]) / 2.0))


def _tied_sample(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "verdicts":  # per-task differences of pass/fail with one run
        return rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.1, 0.75, 0.15])
    if kind == "fractions":  # differences of per-task pass fractions over 3 runs
        return np.round((rng.integers(0, 4, n) - rng.integers(0, 4, n)) / 3.0, 12)
    if kind == "skewed":
        return np.round(rng.choice([-0.5, 0.0, 0.25, 2.0, 7.125], size=n, p=[0.2, 0.5, 0.1, 0.1, 0.1]), 12)
    return np.round(rng.normal(size=n).round(1), 12)  # a few dozen distinct values


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-6, 6), min_size=1, max_size=8, unique=True),
    counts=st.lists(st.integers(1, 40), min_size=8, max_size=8),
    scale=st.sampled_from([1.0, 0.5, 1 / 3, 0.1]),
)
def test_counts_equal_every_walsh_average(values: list[int], counts: list[int], scale: float) -> None:
    v = np.round(np.array(sorted(values), dtype=float) * scale, 12)
    c = np.array(counts[: len(values)], dtype=np.int64)
    assert walsh_median_counts(v, c) == _brute(v.repeat(c))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind", ["verdicts", "fractions", "skewed", "normal"])
def test_large_n_counts_path_equals_bisection_and_brute_force(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    for n in (BRUTE_MAX + 1, BRUTE_MAX + 2, 2600):
        d = _tied_sample(rng, n, kind)
        expected = _brute(d)
        assert walsh_median_bisection(np.sort(d)) == expected
        assert walsh_median(d) == expected
        assert hodges_lehmann(np.zeros(n), d) == expected


@pytest.mark.parametrize("seed", [1, 10])
def test_bisection_counts_the_averages_as_computed(seed: int) -> None:
    """Values repeated in tenths: ``2t − d_i`` rounds across a value, so counting ``d ≤ 2t − d_i``
    put the bisection's median at -0.05 where the averages' own is -0.04999999999999999.

    Reference: every Walsh average formed and ``np.median`` taken (``_brute``).
    """
    d = np.round(np.random.default_rng(seed).normal(size=600).round(1), 12)
    assert walsh_median_bisection(np.sort(d)) == _brute(d)


def test_repeated_values_cost_one_step_per_distinct_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """Latencies rounded to hundredths repeat each difference many times. Correcting a row's
    place stepped one copy at a time (10⁶ such differences: 3.4 s); it now passes every copy
    of a value in one step (0.18 s).

    Counts the correction loop's steps through the ``np.maximum``/``np.minimum`` calls each
    step makes (three per ``_prefix`` call before any step): 800 at this n before, 24 now.
    Reference for the value: the counting method on the 3 030 distinct values (exact, and equal
    to every Walsh average formed above; the bisection's ~260 passes take seconds here).
    """
    import ablation.stats._walsh as walsh

    rng = np.random.default_rng(100_000)
    d = np.sort(np.round(rng.lognormal(size=100_000) - rng.lognormal(size=100_000), 2))
    calls = prefixes = 0
    maximum, minimum, prefix = np.maximum, np.minimum, walsh._prefix

    def counted(f: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            return f(*args, **kwargs)

        return call

    def counted_prefix(*args: Any, **kwargs: Any) -> Any:
        nonlocal prefixes
        prefixes += 1
        return prefix(*args, **kwargs)

    monkeypatch.setattr(np, "maximum", counted(maximum))
    monkeypatch.setattr(np, "minimum", counted(minimum))
    monkeypatch.setattr(walsh, "_prefix", counted_prefix)
    got = walsh.walsh_median_select(d)
    monkeypatch.undo()
    values, counts = np.unique(d, return_counts=True)
    assert values.size == 3030
    assert got == walsh_median_counts(values, counts)
    assert calls <= 6 * prefixes


def test_many_distinct_values_fall_back_to_bisection() -> None:
    d = np.round(np.random.default_rng(5).normal(size=BRUTE_MAX + 501), 12)
    assert walsh_median(d) == walsh_median_bisection(np.sort(d)) == _brute(d)


def test_million_verdict_differences_are_exact() -> None:
    """At 1e6 pairs (the old bisection took ~15 s) the median is the one the counts imply.

    By hand: Walsh averages -1, -0.5, 0, 0.5, 1 have probabilities about .04, .12, .29, .30, .25
    (cumulative .04, .16, .45, .75), so the median is 0.5.
    """
    rng = np.random.default_rng(11)
    d = rng.choice([-1.0, 0.0, 1.0], size=1_000_000, p=[0.2, 0.3, 0.5])
    values, counts = np.unique(d, return_counts=True)
    assert hodges_lehmann(np.zeros(d.size), d) == walsh_median_counts(values, counts) == 0.5


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["verdicts", "fractions", "skewed", "normal", "continuous"])
def test_selection_equals_brute_force_over_several_rounds(
    seed: int, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The selection with tiny rounds (many pivots, ties at the pivots) picks the exact median.

    Reference: every Walsh average formed and ``np.median`` taken (``_brute``).
    """
    import ablation.stats._walsh as walsh

    monkeypatch.setattr(walsh, "_FORM_MAX", 64)
    monkeypatch.setattr(walsh, "_SAMPLE", 40)
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 17, 90, 301, 600):
        if kind == "continuous":
            d = np.round(rng.lognormal(size=n) - rng.lognormal(size=n), 12)
        else:
            d = _tied_sample(rng, n, kind)
        assert walsh.walsh_median_select(np.sort(d)) == _brute(d)


@pytest.mark.parametrize("rows", ["int32", "int64"])
@pytest.mark.parametrize("kind", ["verdicts", "skewed", "continuous"])
def test_selection_placing_rows_in_blocks_equals_brute_force(
    rows: str, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows placed a few at a time (``_place`` in blocks, as at 10⁶ differences), with ``int32``
    row arrays (below 2³¹ differences) and with ``int64`` (above), pick the exact median.

    Reference: every Walsh average formed and ``np.median`` taken (``_brute``).
    """
    import ablation.stats._walsh as walsh

    monkeypatch.setattr(walsh, "_FORM_MAX", 64)
    monkeypatch.setattr(walsh, "_SAMPLE", 40)
    monkeypatch.setattr(walsh, "_BLOCK", 5)
    if rows == "int64":
        monkeypatch.setattr(walsh, "_INT32_ROWS", 0)
    rng = np.random.default_rng(7)
    for n in (2, 17, 90, 301, 604):
        if kind == "continuous":
            d = np.round(rng.lognormal(size=n) - rng.lognormal(size=n), 12)
        else:
            d = _tied_sample(rng, n, kind)
        assert walsh.walsh_median_select(np.sort(d)) == _brute(d)


def test_selection_with_one_value_nearly_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds whose sample holds one value only, though smaller entries are still in play."""
    import ablation.stats._walsh as walsh

    monkeypatch.setattr(walsh, "_FORM_MAX", 16)
    monkeypatch.setattr(walsh, "_SAMPLE", 8)
    for low in (1, 5, 200):
        d = np.concatenate([np.full(low, -3.0), np.full(400, 2.0), [7.5]])
        for k in (1, low * (low + 1) // 2, low * (low + 1) // 2 + 1, 1000):
            i, j = np.triu_indices(d.size)
            expected = float(np.sort((d[i] + d[j]) / 2.0)[k - 1])
            assert walsh._kth_select(np.sort(d), k)[0] == expected
        assert walsh.walsh_median_select(np.sort(d)) == _brute(d)


def test_many_continuous_differences_match_the_bisection() -> None:
    """At 1e5 continuous differences (several rounds) the selection and the bisection agree."""
    rng = np.random.default_rng(13)
    d = np.sort(np.round(rng.lognormal(size=100_000) - rng.lognormal(size=100_000), 12))
    assert walsh_median(d) == walsh_median_bisection(d)


def test_continuous_median_takes_a_few_counting_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13: the large-n estimate must not cost ~130 O(n log n) passes (the old bisection).

    Counts the ``np.searchsorted`` and ``np.interp`` calls (both count sorted values below
    queries) over at least a quarter of the ``n`` differences (each is one counting pass over
    the rows still in play, about half of them for a median); the selection needs two per
    round and about three rounds at this n, whatever the data.
    """
    rng = np.random.default_rng(17)
    n = 60_000
    d = np.round(rng.lognormal(size=n) - rng.lognormal(size=n), 12)
    passes = 0

    def counting(search: Any) -> Any:
        def counted(a: np.ndarray, v: object, *args: object, **kwargs: object) -> object:
            nonlocal passes
            passes += np.size(a if search is np.interp else v) >= n // 4
            return search(a, v, *args, **kwargs)

        return counted

    monkeypatch.setattr(np, "searchsorted", counting(np.searchsorted))
    monkeypatch.setattr(np, "interp", counting(np.interp))
    estimate = hodges_lehmann(np.zeros(n), d)
    monkeypatch.undo()
    assert estimate == walsh_median_bisection(np.sort(d))
    assert 4 <= passes <= 12


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("kind", ["verdicts", "skewed", "normal", "continuous"])
def test_selection_with_an_even_number_of_walsh_averages(
    seed: int, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """n ≡ 0 or 3 (mod 4): the median is the mean of two Walsh averages, the second found after
    the selection (among rows that start at or below the first, or the least row start above it).

    Reference: every Walsh average formed and ``np.median`` taken (``_brute``).
    """
    import ablation.stats._walsh as walsh

    monkeypatch.setattr(walsh, "_FORM_MAX", 32)
    monkeypatch.setattr(walsh, "_SAMPLE", 24)
    rng = np.random.default_rng(100 + seed)
    for n in (3, 4, 7, 8, 59, 60, 299, 300, 603, 604):
        if kind == "continuous":
            d = np.round(rng.lognormal(size=n) - rng.lognormal(size=n), 12)
        else:
            d = _tied_sample(rng, n, kind)
        assert (n * (n + 1) // 2) % 2 == 0
        assert walsh.walsh_median_select(np.sort(d)) == _brute(d)


@pytest.mark.parametrize("extra", [0, 1])
def test_distinct_values_are_counted_from_the_one_sorted_array(extra: int) -> None:
    """The counting path gets the values and counts ``np.unique`` gives (signed zeros included);
    one distinct value more than :data:`COUNTS_MAX` goes to the selection."""
    from ablation.stats._walsh import COUNTS_MAX

    rng = np.random.default_rng(21 + extra)
    values = np.round(np.linspace(-3.0, 3.0, COUNTS_MAX + extra), 12)
    d = np.concatenate([values, rng.choice(values, BRUTE_MAX), [-0.0, 0.0, -0.0]])
    d = d[rng.permutation(d.size)]
    got = walsh_median(d)
    if extra == 0:
        v, c = np.unique(d, return_counts=True)  # the former path
        expected = walsh_median_counts(v, c)
        assert got == expected and np.signbit(got) == np.signbit(expected)
    else:
        assert got == walsh_median_bisection(np.sort(d))
    assert got == _brute(d)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind", ["verdicts", "normal", "continuous"])
def test_overwrite_sorts_in_place_and_hodges_lehmann_leaves_its_inputs(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    n = 2600
    d = rng.normal(size=n) if kind == "continuous" else _tied_sample(rng, n, kind)
    expected = _brute(d)
    scratch = d.copy()
    assert walsh_median(scratch, overwrite=True) == walsh_median(d) == expected
    np.testing.assert_array_equal(scratch, np.sort(d))  # sorted in place, nothing else changed
    x = rng.normal(size=n)
    y = x + d
    x0, y0 = x.copy(), y.copy()
    assert hodges_lehmann(x, y) == _brute(tied_differences(x, y))
    assert hodges_lehmann(x, y) == pytest.approx(expected, rel=1e-12, abs=1e-14)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("seed", range(6))
def test_count_at_most_is_searchsorted_or_one_more(seed: int) -> None:
    """The ``np.interp`` count of ``ds <= q`` (sorted or unsorted queries) is exact or one more;
    the callers step it to the exact place. Ties, signed zeros, subnormal gaps (whose
    reciprocal overflows), huge values and infinite queries included.

    Reference: ``np.searchsorted(ds, q, side="right")``.
    """
    from ablation.stats._walsh import _count_at_most

    rng = np.random.default_rng(seed)
    pools = [
        rng.normal(size=400),
        rng.integers(-3, 4, 400) / 4.0,
        np.array([-0.0, 0.0, 5e-324, 1e-323, -5e-324, 1e308, -1e308, 1.0, 2.0]),
        1.0 + rng.integers(0, 4, 400) * 2.0**-52,
    ]
    for pool in pools:
        for n in (0, 1, 2, 5, 300):
            ds = np.sort(rng.choice(pool, n))
            base = ds if n else np.zeros(1)
            near = rng.choice(base, 60)
            q = np.concatenate([
                ds, np.nextafter(ds, np.inf), np.nextafter(ds, -np.inf),
                near + rng.normal(size=60) * 1e-3, [np.inf, -np.inf, base[0] - 1, base[-1] + 1],
            ])  # fmt: skip
            for queries in (np.sort(q), q):
                extra = _count_at_most(ds, queries) - np.searchsorted(ds, queries, side="right")
                assert extra.min(initial=0) >= 0 and extra.max(initial=0) <= 1
    # 1 / 1e-323 overflows: interpolating between these gives inf, searchsorted must answer
    ds = np.array([-1e-323, 0.0, 1e-323, 1.0])
    q = np.array([-1e-323, -5e-324, 0.0, 5e-324, 1e-323, 0.5])
    np.testing.assert_array_equal(_count_at_most(ds, q), [1, 1, 2, 2, 3, 3])


@pytest.mark.parametrize("n", [1000, 2000])
def test_a_thousand_differences_form_a_small_share_of_their_averages(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forming every one of the ~n²/2 Walsh averages took 18 ms at 10³ differences and 45 ms at
    2·10³ (a twelfth of a 10³-task campaign's whole report); one round of a small sample leaves
    a twentieth of them to form (1 ms and 2 ms).

    Counts the averages formed, by ``np.triu_indices`` (every average) or by ``_formed`` (the
    ones left in play). Reference for the value: ``_brute``.
    """
    import ablation.stats._walsh as walsh

    formed = 0
    triu, form = np.triu_indices, walsh._formed

    def every(size: int, *args: Any, **kwargs: Any) -> Any:
        nonlocal formed
        out = triu(size, *args, **kwargs)
        formed += out[0].size
        return out

    def left(*args: Any, **kwargs: Any) -> Any:
        nonlocal formed
        out = form(*args, **kwargs)
        formed += out.size
        return out

    d = np.random.default_rng(n).normal(size=n)
    monkeypatch.setattr(np, "triu_indices", every)
    monkeypatch.setattr(walsh, "_formed", left)
    got = walsh_median(d)
    monkeypatch.undo()
    assert got == _brute(d)
    assert formed <= n * (n + 1) // 2 // 10


@pytest.mark.parametrize(("n", "kind"), [(191, "zeros"), (2600, "zeros"), (401, "mixed"), (3001, "mixed")])
def test_a_zero_median_is_positive_zero_as_numpy_gives(n: int, kind: str) -> None:
    """``-0.0`` and ``0.0`` differences tie; the counting method and the selection could return
    the ``-0.0`` average where ``np.median`` of every average (it sums from ``0.0``) gives ``0.0``.
    The report then printed a ``-0`` estimate. Reference: ``_brute``, to the sign bit."""
    if kind == "zeros":  # the counting method (four distinct values)
        rng = np.random.default_rng(n)
        d = rng.choice([-0.0, 0.0, 1.0, -1.0], size=n, p=[0.4, 0.3, 0.15, 0.15])
    else:  # the selection (hundreds of distinct values)
        rng = np.random.default_rng(0)
        d = np.where(rng.random(n) < 0.7, rng.choice([-0.0, 0.0], size=n), rng.normal(size=n))
    got, expected = walsh_median(d), _brute(d)
    assert got == expected and np.signbit(got) == np.signbit(expected)
