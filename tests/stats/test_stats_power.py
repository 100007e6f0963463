"""Exact power, sample size and MDE of the exact McNemar test, against brute-force enumeration."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from helpers.op_counts import count_binomial_tails
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import (
    exact_mcnemar_power,
    exact_minimum_detectable_effect,
    exact_sample_size_paired,
    mcnemar,
    minimum_detectable_effect,
    sample_size_paired,
)
from ablation.stats.power import _design


def _critical_k_exact(nd: int, level: Fraction) -> int:
    """Largest k with P(X <= k) <= level for X ~ Bin(nd, 1/2), in exact integer arithmetic."""
    total, k = 0, -1
    while k + 1 < nd:
        total += math.comb(nd, k + 1)
        if Fraction(total, 2**nd) > level:
            break
        k += 1
    return k


def _brute_force_power(n: int, psi: float, delta: float, alternative: str) -> float:
    """Double loop over (N, b) with math.comb weights and exact-fraction critical values."""
    p_b = (psi - delta) / 2.0  # regression probability
    p_c = (psi + delta) / 2.0
    rest = 1.0 - psi
    alpha = Fraction(1, 20)
    total = 0.0
    for nd in range(n + 1):
        w_nd = math.comb(n, nd) * psi**nd * rest ** (n - nd)
        if w_nd < 1e-300:
            continue
        k = _critical_k_exact(nd, alpha / 2 if alternative == "two-sided" else alpha)
        for b in range(nd + 1):
            c = nd - b
            if alternative == "two-sided":
                reject = b <= k or c <= k
            elif alternative == "greater":
                reject = b <= k
            else:
                reject = c <= k
            if reject:
                total += w_nd * math.comb(nd, b) * (p_b / psi) ** b * (p_c / psi) ** c
    return total


def test_exact_power_at_connor_870_matches_brute_force() -> None:
    # ablation plan --discordance 0.10 --uplift 0.03 prints Connor's 870
    assert sample_size_paired(0.10, 0.03).n == 870
    ours = exact_mcnemar_power(870, 0.10, 0.03)
    assert ours == pytest.approx(_brute_force_power(870, 0.10, 0.03, "two-sided"), rel=1e-9)
    # the exact test is conservative: below the 80% Connor aims at
    assert 0.7 < ours < 0.8


@pytest.mark.parametrize(
    ("n", "psi", "delta", "alternative"),
    [
        (40, 0.5, 0.4, "two-sided"),
        (60, 0.3, 0.15, "greater"),
        (60, 0.3, -0.15, "less"),
        (60, 0.3, 0.15, "less"),
        (25, 1.0, 0.2, "two-sided"),
        (30, 0.2, 0.0, "two-sided"),
    ],
)
def test_exact_power_matches_brute_force(
    n: int, psi: float, delta: float, alternative: str
) -> None:
    ours = exact_mcnemar_power(n, psi, delta, alternative=alternative)
    assert ours == pytest.approx(
        _brute_force_power(n, psi, delta, alternative), rel=1e-9, abs=1e-15
    )


def test_rejection_region_is_the_one_mcnemar_uses() -> None:
    # psi = 1: every pair is discordant, so the power is the conditional one at N = n, which can be
    # summed over the public mcnemar(b, n - b).pvalue <= alpha directly (scipy.stats.binom.pmf weights)
    n, psi, delta = 30, 1.0, 0.3
    pi_b = (psi - delta) / (2 * psi)
    for alternative in ("two-sided", "greater", "less"):
        ref = sum(
            stats.binom.pmf(b, n, pi_b)
            for b in range(n + 1)
            if mcnemar(b, n - b, alternative=alternative).pvalue <= 0.05
        )
        assert exact_mcnemar_power(n, psi, delta, alternative=alternative) == pytest.approx(
            ref, rel=1e-12
        )


def test_size_at_delta_zero_is_below_alpha() -> None:
    for n in (20, 100, 500):
        for psi in (0.02, 0.1, 0.3):
            assert exact_mcnemar_power(n, psi, 0.0) <= 0.05
            assert exact_mcnemar_power(n, psi, 0.0, alternative="greater") <= 0.05


@pytest.mark.parametrize("psi", [0.02, 0.1, 0.3, 1.0])
def test_power_costs_sqrt_n_by_design(psi: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # O(sqrt(n)) work after truncating N to the central 1 - 2e-15 of Bin(n, psi): 10 times the
    # pairs cost ~3.2 times the binomial tails (not 10 times), fewer tails than pairs
    tails = count_binomial_tails(monkeypatch)
    counts = []
    for n in (5_000, 50_000):
        _design.cache_clear()  # the truncated N and their critical values are cached per design
        tails.clear()
        exact_mcnemar_power(n, psi, psi / 2)
        counts.append(sum(tails))
    assert 0 < counts[1] <= 4 * counts[0]
    assert counts[1] < 50_000


def test_exact_sample_size_is_the_first_n_reaching_the_target() -> None:
    n = exact_sample_size_paired(0.10, 0.03)
    assert exact_mcnemar_power(n, 0.10, 0.03) >= 0.8
    # first crossing: no smaller n reaches it (checked over every n from Connor's 870)
    assert all(exact_mcnemar_power(m, 0.10, 0.03) < 0.8 for m in range(870, n))
    res = sample_size_paired(0.10, 0.03)
    assert res.n_exact_test == n
    assert res.exact_power == pytest.approx(exact_mcnemar_power(870, 0.10, 0.03), rel=1e-15)
    small = exact_sample_size_paired(0.5, 0.4)
    assert all(exact_mcnemar_power(m, 0.5, 0.4) < 0.8 for m in range(1, small))
    assert exact_mcnemar_power(small, 0.5, 0.4) >= 0.8


def test_exact_sample_size_one_sided_and_errors() -> None:
    n = exact_sample_size_paired(0.10, 0.03, alternative="greater")
    assert exact_mcnemar_power(n, 0.10, 0.03, alternative="greater") >= 0.8
    assert exact_mcnemar_power(n - 1, 0.10, 0.03, alternative="greater") < 0.8
    with pytest.raises(ValueError):
        exact_sample_size_paired(0.10, 0.03, alternative="less", max_n=3000)
    with pytest.raises(ValueError):
        exact_sample_size_paired(0.10, 0.0)
    with pytest.raises(ValueError):
        exact_sample_size_paired(0.10, 0.2)
    with pytest.raises(ValueError):
        exact_mcnemar_power(0, 0.1, 0.05)


def test_exact_mde_inverts_the_exact_power() -> None:
    mde = exact_minimum_detectable_effect(870, 0.10)
    assert exact_mcnemar_power(870, 0.10, mde) == pytest.approx(0.8, abs=1e-9)
    # the exact test needs a larger effect than Connor's normal approximation promises
    assert mde > minimum_detectable_effect(870, psi=0.10)
    assert exact_minimum_detectable_effect(5, 0.01) == math.inf
    less = exact_minimum_detectable_effect(300, 0.2, alternative="less")
    assert exact_mcnemar_power(300, 0.2, -less, alternative="less") == pytest.approx(0.8, abs=1e-9)


def test_power_increases_with_effect_size() -> None:
    # the monotonicity exact_minimum_detectable_effect relies on
    for n, psi in ((30, 0.5), (200, 0.1), (1000, 0.02)):
        grid = np.linspace(0.0, psi, 41)
        pw = [exact_mcnemar_power(n, psi, d) for d in grid]
        assert np.all(np.diff(pw) >= -1e-12)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=3000),
    psi=st.floats(min_value=0.001, max_value=1.0),
    frac=st.floats(min_value=-1.0, max_value=1.0),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
def test_power_is_a_probability_and_symmetric(
    n: int, psi: float, frac: float, alternative: str
) -> None:
    delta = frac * psi
    pw = exact_mcnemar_power(n, psi, delta, alternative=alternative)
    assert 0.0 <= pw <= 1.0
    if alternative == "two-sided":
        assert exact_mcnemar_power(n, psi, -delta) == pytest.approx(pw, rel=1e-9, abs=1e-15)
    else:
        flipped = "less" if alternative == "greater" else "greater"
        mirror = exact_mcnemar_power(n, psi, -delta, alternative=flipped)
        assert mirror == pytest.approx(pw, rel=1e-9, abs=1e-15)


# 80 designs, each a grid and a set of tails built anew (~0.03 s); the case Hypothesis once found
# here (δ next to ψ) has its own test below
@settings(max_examples=80, deadline=None)
@given(
    st.integers(min_value=1, max_value=2000),
    st.floats(min_value=0.005, max_value=1.0),
    st.floats(min_value=-1.0, max_value=1.0),
    st.sampled_from(["two-sided", "greater", "less"]),
    st.sampled_from([0.05, 0.01, 0.2]),
)
def test_grid_sum_equals_the_sum_of_tails(
    n: int, psi: float, share: float, alternative: str, alpha: float
) -> None:
    """Designs up to 2 000 pairs sum the power over one (N, j) grid; the tails it replaces
    (``_rejection``: the incomplete beta per N, checked against scipy.special.bdtr in
    test_stats_dist.py) give the same power to 1e-12."""
    from ablation.stats import power

    delta = share * psi
    pi_b = min(1.0, max(0.0, (psi - delta) / (2.0 * psi)))
    ns, weights, k = power._design(n, psi, alpha, alternative)
    tails = min(1.0, max(0.0, float(np.dot(weights, power._rejection(k, ns, pi_b, alternative)))))
    assert power._power(n, psi, delta, alpha, alternative) == pytest.approx(
        tails, rel=1e-12, abs=1e-15
    )


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(("n", "psi"), [(6, 1.0), (6, 0.5), (40, 0.25)])
def test_power_next_to_the_largest_difference_is_defined(
    n: int, psi: float, alternative: str
) -> None:
    """δ one ulp below ψ (a power of two) makes P(regression | discordant) 2⁻⁵⁴, so 1 − π rounds
    to 1.0; the (N, j) grid took log(1 − (1 − π)) = log(0) there and raised "math domain error"
    (found by Hypothesis in test_grid_sum_equals_the_sum_of_tails). The power is the sum of the
    tails (the reference of that test) and, within 1e-12, the power at δ = ψ itself."""
    from ablation.stats import power

    delta = math.nextafter(psi, 0.0)
    pi_b = (psi - delta) / (2.0 * psi)
    assert pi_b > 0.0 and 1.0 - pi_b == 1.0  # the case: π is positive, 1 − π is not below 1
    ns, weights, k = power._design(n, psi, 0.05, alternative)
    tails = min(1.0, max(0.0, float(np.dot(weights, power._rejection(k, ns, pi_b, alternative)))))
    got = exact_mcnemar_power(n, psi, delta, alternative=alternative)
    assert got == pytest.approx(tails, rel=1e-12, abs=1e-15)
    at_psi = exact_mcnemar_power(n, psi, psi, alternative=alternative)
    assert got == pytest.approx(at_psi, abs=1e-12)


def _whole_range_mde(n: int, psi: float, alternative: str) -> float:
    """The MDE by brentq on the whole of ``(0, ψ]``, with the library's exact power."""
    sign = -1.0 if alternative == "less" else 1.0

    def gap(d: float) -> float:
        return exact_mcnemar_power(n, psi, sign * d, alternative=alternative) - 0.8

    if gap(psi) < 0.0:
        return math.inf
    if gap(0.0) >= 0.0:
        return 0.0
    # scipy.optimize.brentq(gap, 0.0, psi, xtol=1e-12, rtol=1e-12), the library's own port
    from ablation.stats._roots import brentq

    return float(brentq(gap, 0.0, psi, xtol=1e-12, rtol=1e-12, maxiter=200))


@pytest.mark.parametrize(
    ("n", "psi", "alternative"),
    [
        (13, 1.0, "greater"),  # Connor's MDE is above the exact one: the search goes below it
        (67, 1.0, "two-sided"),
        (4, 1.0, "two-sided"),  # nothing up to psi is detectable: past the bracket's top
        (31, 0.2, "less"),
        (1, 0.5, "two-sided"),  # no effect is detectable
        (500, 0.1, "two-sided"),
        (3000, 0.3, "less"),
        (200_000, 0.3, "two-sided"),
    ],
)
def test_bracketed_mde_is_the_root_on_the_whole_range(n: int, psi: float, alternative: str) -> None:
    got = exact_minimum_detectable_effect(n, psi, alternative=alternative)
    reference = _whole_range_mde(n, psi, alternative)
    if math.isinf(reference):
        assert got == reference
        return
    # two brentq roots of one function, each within xtol + rtol·|x| = 1e-12·(1 + x) of it
    assert abs(got - reference) <= 2e-12 * (1.0 + reference)
    sign = -1.0 if alternative == "less" else 1.0
    assert exact_mcnemar_power(n, psi, sign * got, alternative=alternative) >= 0.8 - 1e-9


@settings(max_examples=25, deadline=None)  # and the designs of the bracket's edge cases above
@given(
    n=st.integers(min_value=1, max_value=2000),
    psi=st.floats(min_value=0.001, max_value=1.0),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
def test_bracketed_mde_equals_the_whole_range_search(n: int, psi: float, alternative: str) -> None:
    got = exact_minimum_detectable_effect(n, psi, alternative=alternative)
    reference = _whole_range_mde(n, psi, alternative)
    assert got == reference or abs(got - reference) <= 2e-12 * (1.0 + reference)
