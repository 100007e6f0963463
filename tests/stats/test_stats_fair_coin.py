"""Exact McNemar's fair-coin tails are exact: p-values such as 2/128 come out as exactly that.

References: exact rational arithmetic (``fractions.Fraction`` of binomial-coefficient sums over
``2**n``) below the exact range's end, and ``scipy.stats.binom.cdf(k, n, 0.5)`` above it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import mcnemar
from ablation.stats.binary import _EXACT_N, _binom_cdf, _binom_pmf, _binom_sf


def _exact_cdf(k: int, n: int) -> Fraction:
    return Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_tails_equal_exact_fractions_correctly_rounded(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 400))
    k = data.draw(st.integers(-1, n + 1))
    exact = _exact_cdf(k, n) if k >= 0 else Fraction(0)
    exact = min(exact, Fraction(1))
    assert _binom_cdf(k, n) == float(exact)
    assert _binom_sf(k, n) == float(1 - exact)
    assert _binom_pmf(k, n) == (float(Fraction(math.comb(n, k), 2**n)) if 0 <= k <= n else 0.0)


def test_a_sign_test_of_seven_wins_is_exactly_one_in_sixty_four() -> None:
    # 2 * P(X <= 0 | n = 7) = 2 / 128: the examples print it with four significant digits
    assert mcnemar(0, 7).pvalue == 1 / 64
    assert f"{mcnemar(7, 0).pvalue:.4g}" == "0.01562"


@pytest.mark.parametrize("n", [_EXACT_N, _EXACT_N + 1])
def test_the_exact_range_joins_the_incomplete_beta(n: int) -> None:
    for k in (n // 2 - 200, n // 2 - 30, n // 2, n // 2 + 60):
        assert _binom_cdf(k, n) == pytest.approx(float(stats.binom.cdf(k, n, 0.5)), rel=1e-12)
        assert _binom_sf(k, n) == pytest.approx(float(stats.binom.sf(k, n, 0.5)), rel=1e-12)
