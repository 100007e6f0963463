"""The Wilcoxon signed-rank test and the Student t tails, computed without ``scipy.stats``.

References: ``scipy.stats.wilcoxon(d, zero_method=..., correction=False, alternative=...,
method="asymptotic" | "exact" | PermutationMethod(n_resamples=2**13, rng=0))`` and ``scipy.stats.t.sf/cdf/isf`` (scipy 1.17).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.fresh_imports import modules_imported
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import _signed_rank, continuous
from ablation.stats._signed_rank import (
    signed_rank_asymptotic,
    signed_rank_exact,
    signed_rank_permutation,
)

ALTERNATIVES = ["two-sided", "less", "greater"]


@st.composite
def _differences(draw: st.DrawFn, *, ties: bool, zeros: bool, max_n: int) -> np.ndarray:
    n = draw(st.integers(min_value=2, max_value=max_n))
    if ties:
        # few distinct magnitudes: many ties, signs at random
        values = draw(st.lists(st.integers(-6, 6), min_size=n, max_size=n))
        d = np.array(values, dtype=np.float64) / 4.0
    else:
        d = np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=n, max_size=n, unique=True)))
        d = d[np.abs(d) > 0]
        d = d[np.unique(np.abs(d), return_index=True)[1]]
    if not zeros:
        d = d[d != 0]
    return d


def _used(d: np.ndarray, zero_method: str) -> np.ndarray:
    """The differences a test uses: the non-zero ones under ``"wilcox"``, all under ``"pratt"``."""
    return d[d != 0] if zero_method == "wilcox" else d


# 60 examples; large tied and untied samples with and without zeros are compared with scipy on
# every alternative and zero method in test_untied_and_tied_asymptotic_equal_scipy
@settings(max_examples=60, deadline=None)
@given(
    d=_differences(ties=True, zeros=True, max_n=300),
    zero_method=st.sampled_from(["wilcox", "pratt"]),
    alternative=st.sampled_from(ALTERNATIVES),
)
def test_normal_approximation_equals_scipy(
    d: np.ndarray, zero_method: str, alternative: str
) -> None:
    used = _used(d, zero_method)
    if used.size == 0 or not np.any(d != 0):
        return
    _assert_asymptotic_equals_scipy(used, zero_method, alternative)


def _assert_asymptotic_equals_scipy(used: np.ndarray, zero_method: str, alternative: str) -> None:
    stat, p = signed_rank_asymptotic(used, zero_method, alternative)
    ref = stats.wilcoxon(
        used, zero_method=zero_method, correction=False, alternative=alternative,
        method="asymptotic",
    )  # fmt: skip
    assert stat == pytest.approx(float(ref.statistic), rel=1e-12)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-10, abs=1e-300)


@settings(max_examples=75, deadline=None)  # and fixed samples of 8 to 49 below
@given(d=_differences(ties=False, zeros=False, max_n=50), alternative=st.sampled_from(ALTERNATIVES))
def test_exact_distribution_equals_scipy(d: np.ndarray, alternative: str) -> None:
    if d.size == 0:
        return
    stat, p = signed_rank_exact(d, alternative)
    ref = stats.wilcoxon(d, correction=False, alternative=alternative, method="exact")
    assert stat == pytest.approx(float(ref.statistic), rel=1e-12)
    # scipy sums float pmfs; the exact integer count is correctly rounded
    assert p == pytest.approx(float(ref.pvalue), rel=1e-11)


def test_exact_small_cases_by_enumeration() -> None:
    # n = 4, d = (1, 2, 3, 4) all positive: W+ = 10, the largest of 2^4 equally likely sums.
    d = np.array([1.0, 2.0, 3.0, 4.0])
    assert signed_rank_exact(d, "greater") == (10.0, 1 / 16)
    assert signed_rank_exact(d, "two-sided") == (0.0, 2 / 16)
    assert signed_rank_exact(-d, "less") == (0.0, 1 / 16)


@pytest.mark.parametrize("method", ["auto", "exact", "asymptotic"])
def test_wilcoxon_signed_rank_keeps_scipy_results(method: str) -> None:
    rng = np.random.default_rng(4)
    for n in (8, 30, 49, 51, 400):
        x = rng.lognormal(size=n)
        y = x * rng.lognormal(0.1, 0.3, size=n)
        ours = continuous.wilcoxon_signed_rank(x, y, method=method)
        d = np.round(y - x, 12)
        scipy_method = method if method != "auto" else ("exact" if n <= 50 else "asymptotic")
        ref = stats.wilcoxon(d, correction=False, method=scipy_method)
        assert ours.pvalue == pytest.approx(float(ref.pvalue), rel=1e-10)
        assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12)


def test_latency_statistics_do_not_import_scipy_stats_or_special() -> None:
    code = (
        "import numpy as np\n"
        "from ablation.stats import continuous as c\n"
        "rng = np.random.default_rng(0)\n"
        "x = rng.lognormal(size=500); y = x * rng.lognormal(0.05, 0.2, size=500)\n"
        "c.wilcoxon_signed_rank(x, y); c.wilcoxon_signed_rank(x[:20], y[:20])\n"
        "c.paired_t_test(x, y); c.mean_difference_interval(x, y); c.log_ratio_interval(x, y)\n"
    )
    assert modules_imported(code, ("scipy.stats", "scipy.special")) == []


def _rank_sums_by_argsort(d: np.ndarray) -> tuple[float, float, np.ndarray]:
    """The former per-element path: scipy's average ranks of |d|, summed per sign."""
    ranks = stats.rankdata(np.abs(d), method="average")
    _, counts = np.unique(np.abs(d), return_counts=True)
    return float(ranks[d > 0].sum()), float(ranks[d < 0].sum()), counts


@pytest.mark.parametrize("seed", range(2))  # an even and an odd seed: both signs of the one zero
@pytest.mark.parametrize("n", [1, 7, 1000, 100_000])
def test_signed_rank_sums_equal_the_per_element_ranks(seed: int, n: int) -> None:
    """The one-sort group sums give exactly the rank sums and tie groups of rankdata."""
    rng = np.random.default_rng(seed)
    few = rng.integers(-5, 6, n) / 4.0  # many ties and zeros
    many = np.round(rng.normal(size=n), 3)  # some ties
    signed_zeros = np.where(rng.random(n) < 0.1, -0.0, rng.normal(size=n))
    untied = rng.normal(size=n)  # no two |d| equal: the path without per-group arrays
    one_zero = np.concatenate((untied[1:], [-0.0 if seed % 2 else 0.0]))
    one_tie = untied.copy()  # one tie group of three among untied differences, mixed signs
    one_tie[1:3] = (-untied[0], untied[0])[: max(n - 1, 0)]
    for d in (few, many, signed_zeros, np.zeros(n), untied, one_zero, one_tie):
        plus, minus, counts = _signed_rank.signed_rank_sums(d)
        ref_plus, ref_minus, ref_counts = _rank_sums_by_argsort(d)
        assert (plus, minus) == (ref_plus, ref_minus)
        np.testing.assert_array_equal(counts, ref_counts)
        # the normal approximation's path: the same sums, the sizes of the tied groups only
        twice_plus, twice_minus, tied = _signed_rank._rank_sums(d, every_group=False)
        assert (twice_plus / 2.0, twice_minus / 2.0) == (ref_plus, ref_minus)
        np.testing.assert_array_equal(
            np.zeros(0, np.int64) if tied is None else tied, ref_counts[ref_counts > 1]
        )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_untied_and_tied_asymptotic_equal_scipy(seed: int, zero_method: str) -> None:
    # continuous differences (no ties: no tie correction) with and without one zero, and the
    # same differences rounded so that most tie, against scipy's normal approximation
    rng = np.random.default_rng(seed)
    d = rng.normal(0.05, 1.0, 3000)
    with_zero = np.concatenate((d, [0.0]))
    for sample in (d, with_zero, np.round(d, 1), np.round(with_zero, 1)):
        used = sample[sample != 0] if zero_method == "wilcox" else sample
        for alternative in ALTERNATIVES:
            _assert_asymptotic_equals_scipy(used, zero_method, alternative)


def _flips_reference(used: np.ndarray, alternative: str) -> tuple[float, float]:
    """Every one of the 2^n sign flips formed, W+ of each from scipy's average ranks."""
    ranks = stats.rankdata(np.abs(used), method="average")
    flips = np.array(np.meshgrid(*[[False, True]] * used.size, indexing="ij")).reshape(
        used.size, -1
    )
    nonzero = used != 0
    null = (ranks[:, None] * (flips & nonzero[:, None])).sum(axis=0)
    w_plus = float(ranks[used > 0].sum())
    w_minus = float(ranks[used < 0].sum())
    lower, upper = np.mean(null <= w_plus), np.mean(null >= w_plus)
    p = {"less": lower, "greater": upper}.get(alternative, 2 * min(lower, upper))
    return (min(w_plus, w_minus) if alternative == "two-sided" else w_plus), min(float(p), 1.0)


@settings(max_examples=150, deadline=None)
@given(
    d=_differences(ties=True, zeros=True, max_n=13),
    zero_method=st.sampled_from(["wilcox", "pratt"]),
    alternative=st.sampled_from(ALTERNATIVES),
)
def test_exhaustive_permutation_equals_every_flip(
    d: np.ndarray, zero_method: str, alternative: str
) -> None:
    used = _used(d, zero_method)
    if not np.any(used != 0):
        return
    assert signed_rank_permutation(used, alternative) == _flips_reference(used, alternative)


@pytest.mark.parametrize(
    "d",
    [
        [0.0, 0.5, 1.0, -1.0, -0.75, 0.75, 1.0],
        [-0.5, -0.25, 0.25, 0.0, -1.0, -1.0, 0.75, 0.5, 0.75],
        [1.0, 1.0, 1.0, 2.0, -2.0, 3.0],
        [0.0, 0.0, 0.1, -0.1, 0.2, 0.2, 0.3, -0.4],
    ],
)
def test_exhaustive_permutation_equals_scipy(d: list[float]) -> None:
    arr = np.array(d)
    for zero_method in ("wilcox", "pratt"):
        used = _used(arr, zero_method)
        for alternative in ALTERNATIVES:
            ours = continuous.wilcoxon_signed_rank(
                np.zeros(used.size), used, zero_method=zero_method, alternative=alternative
            )
            ref = stats.wilcoxon(
                used, zero_method=zero_method, correction=False, alternative=alternative,
                method=stats.PermutationMethod(n_resamples=2**13, rng=0),
            )  # fmt: skip
            assert "exhaustive permutation" in ours.method
            assert (ours.statistic, ours.pvalue) == (float(ref.statistic), float(ref.pvalue))


def test_tied_small_samples_run_no_scipy_permutation(monkeypatch: pytest.MonkeyPatch) -> None:
    # 13 tied differences: scipy enumerated 8,192 flips through permutation_test (2.3 s a test)
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("scipy.stats.permutation_test called")

    monkeypatch.setattr(stats, "permutation_test", refuse)
    d = np.array([1, 1, 2, -1, 3, 2, 2, -2, 1, 1, 3, 0.5, 0.5])
    res = continuous.wilcoxon_signed_rank(np.zeros(13), d)
    assert (res.statistic, res.pvalue) == _flips_reference(d, "two-sided")
    assert res.method.startswith("Wilcoxon signed-rank (exact by exhaustive permutation")
