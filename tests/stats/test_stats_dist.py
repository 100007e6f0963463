"""The scipy-free distribution functions (``stats/_dist.py``, ``_incbeta.py``) against scipy and exact sums.

Tolerances: rtol 1e-12 or tighter where scipy is that accurate. The binomial tails at large ``n``
are compared with ``rtol = 1e-12 + 1e-14·n``: scipy's own ``bdtr``/``bdtrc`` (Boost ``ibeta``) is
off by up to a few 1e-15·n there (5.7e-10 at ``bdtr(499000, 10⁶, ½)``, 1.3e-9 at
``bdtr(4, 422100, 4.87e-4)``, 1.2e-10 at ``bdtr(8, 31671, 4.24e-4)``, where ours is within 1e-13
of 60-digit sums), so that tolerance is scipy's error, not ours. Ours is held to exact integer
and rational sums: 1e-13 for ``n ≤ 300`` (plus 4 ulps per unit of ``|log value|`` in far tails,
the rounding that ``exp`` of a log carries) and 1e-12 at ``n = 1e5``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize as sopt
import scipy.special as sp
import scipy.stats as sst
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ablation.stats import _binom_quantile, _dist
from ablation.stats._incbeta import incbet
from ablation.stats._roots import brentq

SETTINGS = settings(max_examples=150, deadline=None)
probs = st.floats(min_value=1e-12, max_value=1.0 - 1e-12)


def _exact_cdf(k: int, n: int, p: Fraction) -> Fraction:
    """``P(X ≤ k)`` for ``X ~ Bin(n, p)`` in exact rational arithmetic."""
    q = 1 - p
    return sum((math.comb(n, j) * p**j * q ** (n - j) for j in range(k + 1)), Fraction(0))


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b != 0 else abs(a)


@SETTINGS
@given(st.floats(min_value=-37.5, max_value=37.5))
def test_ndtr_matches_scipy(x: float) -> None:
    # scipy.special.ndtr(x)
    assert _dist.ndtr(x) == pytest.approx(sp.ndtr(x), rel=1e-13, abs=0.0)


@SETTINGS
@given(st.floats(min_value=-300.0, max_value=-1e-12))
def test_ndtri_matches_scipy(log10p: float) -> None:
    p = 10.0**log10p
    # scipy.special.ndtri(p), and the isf used for z quantiles: scipy.stats.norm.isf(p) = -ndtri(p)
    assert _dist.ndtri(p) == pytest.approx(sp.ndtri(p), rel=1e-13, abs=1e-15)
    assert -_dist.ndtri(p) == pytest.approx(sst.norm.isf(p), rel=1e-13, abs=1e-15)


def test_normal_edges_and_arrays() -> None:
    x = np.linspace(-10.0, 10.0, 101)
    np.testing.assert_allclose(_dist.ndtr(x), sp.ndtr(x), rtol=1e-14)  # scipy.special.ndtr
    p = np.array([0.0, 1e-300, 0.025, 0.5, 0.975, 1.0])
    np.testing.assert_array_equal(np.isinf(_dist.ndtri(p)), np.isinf(sp.ndtri(p)))
    np.testing.assert_allclose(_dist.ndtri(p)[1:-1], sp.ndtri(p)[1:-1], rtol=1e-14)
    assert math.isnan(_dist.ndtri(1.5))


@SETTINGS
@given(st.floats(min_value=0.0, max_value=1400.0))
def test_chi2_sf_1_matches_scipy(x: float) -> None:
    # scipy.stats.chi2.sf(x, 1)
    assert _dist.chi2_sf_1(x) == pytest.approx(sst.chi2.sf(x, 1), rel=1e-12, abs=1e-300)


def _tol(value: float) -> float:
    """1e-13, widened by 4 ulps per unit of ``|log value|``: a far tail is ``exp`` of a log whose
    rounding (a few ulps of its size) ``exp`` turns into a relative error."""
    return 1e-13 + 4.0 * 2.0**-52 * abs(math.log(value))


def _check_exact(ours: float, exact: float) -> None:
    """Relative check down to 1e-300; below that (subnormal range) only that ours is that small."""
    if exact >= 1e-300:
        assert _rel(ours, exact) < _tol(exact)
    else:
        assert 0.0 <= ours < 1e-299


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.data())
def test_binomial_tails_exact_small_n(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n - 1))
    num = data.draw(st.integers(1, 1023))
    p = Fraction(num, 1024)  # dyadic, so the float p is exactly the rational p
    cdf = _exact_cdf(k, n, p)
    sf = 1 - cdf
    pf = float(p)
    _check_exact(float(_dist.bdtr(k, n, pf)), float(cdf))
    _check_exact(float(_dist.bdtrc(k, n, pf)), float(sf))
    pmf = math.comb(n, k) * p**k * (1 - p) ** (n - k)
    _check_exact(float(_dist.binom_pmf(k, n, pf)), float(pmf))


def test_binomial_tail_exact_large_n() -> None:
    n, k = 100_000, 49_000  # 6 sd below the mean; exact integer sum of C(n, j), j <= k, over 2^n
    term = math.comb(n, k)
    total, j = 0, k
    while j >= 0 and (j > k - 10 or term > total >> 90):
        total += term
        term = term * j // (n - j + 1)  # C(n, j - 1), exact
        j -= 1
    exact = float(Fraction(total, 1 << n))
    assert exact > 1e-12
    assert _rel(float(_dist.bdtr(k, n, 0.5)), exact) < 1e-12
    assert _rel(float(_dist.bdtrc(n - k - 1, n, 0.5)), exact) < 1e-12


@SETTINGS
@given(st.floats(min_value=0.0, max_value=7.0), st.data())
def test_binomial_tails_match_scipy(log10n: float, data: st.DataObject) -> None:
    n = max(1, round(10.0**log10n))
    k = data.draw(st.integers(0, n - 1))
    p = data.draw(probs)
    rtol = 1e-12 + 1e-14 * n  # scipy's own error at large n (module docstring)
    ref_cdf, ref_sf = float(sp.bdtr(k, n, p)), float(sp.bdtrc(k, n, p))  # scipy.special.bdtr/bdtrc
    if ref_cdf > 1e-300:
        assert _rel(float(_dist.bdtr(k, n, p)), ref_cdf) < rtol
    if ref_sf > 1e-300:
        assert _rel(float(_dist.bdtrc(k, n, p)), ref_sf) < rtol
    pmf = float(sst.binom.pmf(k, n, p))  # scipy.stats.binom.pmf
    if pmf > 1e-300:
        assert _rel(float(_dist.binom_pmf(k, n, p)), pmf) < rtol


def test_binomial_far_tails() -> None:
    # Tails down to 1e-300: scipy.special.bdtr / bdtrc at k far from n·p
    for n, k, p in [
        (10**7, 4_950_000, 0.5),
        (10**6, 6_800, 0.01),
        (10**5, 87_000, 0.9),
        (500, 2, 0.5),
    ]:
        for ours, ref in (
            (_dist.bdtr(k, n, p), sp.bdtr(k, n, p)),
            (_dist.bdtrc(n - k, n, 1 - p), sp.bdtrc(n - k, n, 1 - p)),
        ):
            assert ref > 0.0
            assert _rel(float(ours), float(ref)) < 1e-12 + 1e-14 * n
    assert float(_dist.bdtr(2, 500, 0.5)) < 1e-140


def test_binomial_edges_match_scipy() -> None:
    # k > n: scipy.special gives NaN, scipy.stats.binom.cdf/sf give 1/0 as ours (the callers' need)
    assert (_dist.bdtr(7, 5, 0.3), _dist.bdtrc(7, 5, 0.3)) == (
        sst.binom.cdf(7, 5, 0.3),
        sst.binom.sf(7, 5, 0.3),
    )
    for k, n, p in [(-1, 5, 0.5), (5, 5, 0.5), (3, 5, 0.0), (3, 5, 1.0), (0, 5, 0.2)]:
        for ours, ref in (
            (_dist.bdtr(k, n, p), sp.bdtr(k, n, p)),
            (_dist.bdtrc(k, n, p), sp.bdtrc(k, n, p)),
        ):
            if math.isnan(ref):
                assert math.isnan(ours)
            else:
                assert ours == pytest.approx(ref, rel=1e-14, abs=1e-300)
    ns = np.arange(1, 400)
    np.testing.assert_allclose(_dist.bdtr(ns // 3, ns, 0.4), sp.bdtr(ns // 3, ns, 0.4), rtol=1e-12)


@SETTINGS
@given(
    st.floats(min_value=0.0, max_value=7.0),
    st.floats(
        min_value=1e-6, max_value=1.0 - 1e-6
    ),  # p = 1e-12, n = 1000: scipy's isf(1e-15) is 2, the
    # smallest k with P(X > k) <= 1e-15 is 1 (P(X > 1) ~ 5e-19)
    st.sampled_from([1e-15, 1e-6, 0.025, 0.3, 0.5, 0.7, 0.975]),
)
def test_binomial_quantiles_match_scipy(log10n: float, p: float, q: float) -> None:
    n = max(1, round(10.0**log10n))
    if p == q == 0.5 and n % 2 == 1:  # the median of an odd Bin(n, 1/2), where scipy is often off
        assert _binom_quantile.binom_ppf(q, n, p) == _binom_quantile.binom_isf(q, n, p) == (n - 1) // 2
        return
    # scipy.stats.binom.ppf(q, n, p), scipy.stats.binom.isf(q, n, p)
    assert _binom_quantile.binom_ppf(q, n, p) == sst.binom.ppf(q, n, p)
    assert _binom_quantile.binom_isf(q, n, p) == sst.binom.isf(q, n, p)


def test_binomial_quantiles_arrays() -> None:
    ns = np.arange(1, 3000)
    np.testing.assert_array_equal(_binom_quantile.binom_ppf(0.025, ns, 0.5), sst.binom.ppf(0.025, ns, 0.5))
    assert (
        _binom_quantile.binom_ppf(0.5, 5, 0.5) == sst.binom.ppf(0.5, 5, 0.5) == 2.0
    )  # q exactly a cdf value
    assert _binom_quantile.binom_ppf(0.0, 9, 0.3) == sst.binom.ppf(0.0, 9, 0.3)


def test_median_of_an_odd_fair_binomial_is_exact() -> None:
    # P(X <= (n-1)/2) = P(X > (n-1)/2) = 1/2 for X ~ Bin(n, 1/2), n odd (symmetry), so
    # binom.ppf(0.5, n, 0.5) = binom.isf(0.5, n, 0.5) = (n - 1)/2. The general tails were up to
    # ~300 ulps off there and missed it for about half of all odd n (n = 791 gave 396); scipy
    # 1.17's binom.ppf misses it for about half of them too (binom.ppf(0.5, 35, 0.5) = 18), so
    # the reference is the identity, with scipy where it is right (n = 791, 795, 18617)
    ns = np.concatenate([np.arange(1, 4001, 2), [100_001, 999_999], np.arange(200_001, 204_001, 2)])
    half = (ns - 1) // 2
    assert np.all(_dist.bdtr(half, ns, 0.5) == 0.5)  # arrays (the last block by chains)
    assert np.all(_dist.bdtrc(half, ns, 0.5) == 0.5)
    np.testing.assert_array_equal(_binom_quantile.binom_ppf(0.5, ns[:2000], 0.5), half[:2000])
    np.testing.assert_array_equal(_binom_quantile.binom_isf(0.5, ns[:2000], 0.5), half[:2000])
    for n in (1, 9, 35, 791, 795, 18617, 999_999):
        assert _dist.bdtr((n - 1) // 2, n, 0.5) == _dist.bdtrc((n - 1) // 2, n, 0.5) == 0.5
        assert _binom_quantile.binom_ppf(0.5, n, 0.5) == _binom_quantile.binom_isf(0.5, n, 0.5) == (n - 1) // 2
    for n in (791, 795, 18617):
        assert sst.binom.ppf(0.5, n, 0.5) == sst.binom.isf(0.5, n, 0.5) == (n - 1) // 2


# 60 examples (two searches by each path, up to 3e6 trials); the plain-float search is compared
# with scipy's quantiles on 150 more in test_binomial_quantiles_match_scipy
@settings(max_examples=60, deadline=None)
@given(
    st.floats(min_value=0.0, max_value=6.5),
    st.one_of(probs, st.sampled_from([0.0, 0.5, 1.0])),
    st.one_of(st.floats(min_value=1e-16, max_value=1.0), st.sampled_from([0.0, 1.0, 1.0 - 1e-15])),
)
def test_one_quantile_is_searched_as_an_array_entry(log10n: float, p: float, q: float) -> None:
    # one (q, n, p) takes the plain-float search, a one-entry array the array search: the same
    # bracket and bisection; their tails differ by < 1e-13 (relative), so the k could differ only
    # where a tail lands that close to q
    n = float(max(1, round(10.0**log10n)))
    for quantile in (_binom_quantile.binom_ppf, _binom_quantile.binom_isf):
        one, entry = quantile(q, n, p), quantile(np.array([q]), np.array([n]), np.array([p]))[0]
        assert one == entry or (math.isnan(one) and math.isnan(entry)), quantile.__name__


@st.composite
def _beta_point(draw: st.DrawFn) -> tuple[float, float, float]:
    """``(a, b, x)`` with ``x`` anywhere in (0, 1] or within 40 SDs of the Beta(a, b) mean, so
    most draws keep ``I_x(a, b)`` above the double range's floor (uniform ``x`` at large ``a, b``
    underflowed so often that Hypothesis's filter health check failed)."""
    a = draw(st.floats(min_value=0.5, max_value=1e4))
    b = draw(st.floats(min_value=0.5, max_value=1e4))
    mean, sd = a / (a + b), math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    near = draw(st.floats(-40.0, 40.0).map(lambda z: min(1.0, max(1e-300, mean + z * sd))))
    x = draw(st.one_of(st.just(0.0), st.floats(1e-300, 1.0), st.just(near), st.just(near)))
    return a, b, x  # subnormal x: no claim


@SETTINGS
@given(_beta_point())
def test_incbet_matches_scipy(point: tuple[float, float, float]) -> None:
    a, b, x = point
    ref = float(sp.betainc(a, b, x))  # scipy.special.betainc(a, b, x)
    assume(ref > 1e-300)
    assert _rel(float(incbet(a, b, x)), ref) < 1e-11


@SETTINGS
@given(st.floats(min_value=1e-3, max_value=1e7), st.floats(min_value=1e-3, max_value=1e7))
def test_log_gamma_family_matches_scipy(a: float, b: float) -> None:
    scale = abs(math.lgamma(a)) + abs(math.lgamma(b)) + abs(math.lgamma(a + b)) + 1.0
    assert _dist.gammaln(a) == pytest.approx(
        sp.gammaln(a), rel=1e-14, abs=1e-14
    )  # scipy.special.gammaln
    assert abs(_dist.betaln(a, b) - sp.betaln(a, b)) < 1e-14 * scale  # scipy.special.betaln
    assert _dist.xlogy(a, b) == pytest.approx(sp.xlogy(a, b), rel=1e-14)  # scipy.special.xlogy
    y = -b / (b + 1.0)
    assert _dist.xlog1py(a, y) == pytest.approx(
        sp.xlog1py(a, y), rel=1e-14
    )  # scipy.special.xlog1py


def test_log_family_zero_conventions() -> None:
    assert _dist.xlogy(0.0, 0.0) == sp.xlogy(0.0, 0.0) == 0.0
    assert _dist.xlog1py(0.0, -1.0) == sp.xlog1py(0.0, -1.0) == 0.0
    assert _dist.gammaln(0.0) == sp.gammaln(0.0) == math.inf
    np.testing.assert_allclose(
        _dist.gammaln(np.arange(1.0, 50.0)), sp.gammaln(np.arange(1.0, 50.0)), rtol=1e-15
    )


FUNCTIONS = [
    (lambda x: math.cos(x) - x, 0.0, 1.0),
    (lambda x: x**3 - 2.0 * x - 5.0, 2.0, 3.0),
    (lambda x: math.exp(x) - 1e-8, -30.0, 1.0),
    (lambda x: math.atan(1e4 * (x - 0.123)), -5.0, 5.0),
]


@pytest.mark.parametrize(("f", "a", "b"), FUNCTIONS)
@pytest.mark.parametrize(
    ("xtol", "rtol"), [(2e-12, 4 * 2.0**-52), (1e-14, 1e-14), (1e-15, 1e-14), (1e-3, 1e-10)]
)
def test_brentq_iterates_as_scipy(f, a: float, b: float, xtol: float, rtol: float) -> None:  # type: ignore[no-untyped-def]
    # scipy.optimize.brentq(f, a, b, xtol=xtol, rtol=rtol): the same iterates, so the same root
    assert brentq(f, a, b, xtol=xtol, rtol=rtol) == sopt.brentq(f, a, b, xtol=xtol, rtol=rtol)


def test_brentq_checks_as_scipy() -> None:
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="rtol too small"):
        brentq(lambda x: x, -1.0, 1.0, rtol=1e-17)
    with pytest.raises(ValueError, match="xtol too small"):
        brentq(lambda x: x, -1.0, 1.0, xtol=0.0)
    with pytest.raises(RuntimeError, match="converge"):
        brentq(lambda x: math.atan(1e4 * (x - 0.123)), -5.0, 5.0, maxiter=3)
    assert brentq(lambda x, c: x - c, 0.0, 1.0, args=(0.25,)) == sopt.brentq(
        lambda x, c: x - c, 0.0, 1.0, args=(0.25,)
    )
    assert brentq(lambda x: x, 0.0, 1.0) == 0.0


def test_scalar_and_array_forms_agree() -> None:
    # the report's one-number calls take the plain-float path; arrays the numpy path
    rng = np.random.default_rng(7)
    n = np.exp(rng.uniform(0.0, math.log(1e7), 200)).astype(np.int64) + 1
    k = np.minimum((rng.uniform(0.0, 1.0, 200) * n).astype(np.int64), n - 1)
    k[:40] = np.minimum(rng.integers(0, 70, 40), n[:40] - 1)  # short lower tails (summed)
    k[40:80] = np.maximum(n[40:80] - rng.integers(1, 70, 40), 0)  # short upper tails
    p = rng.uniform(0.0, 1.0, 200)
    for func in (_dist.bdtr, _dist.bdtrc, _dist.binom_pmf):
        arr = np.asarray(func(k, n, p))
        one = np.array([func(int(a), int(b), float(c)) for a, b, c in zip(k, n, p, strict=True)])
        np.testing.assert_allclose(one, arr, rtol=1e-13, atol=1e-300)


def test_bulk_array_calls_agree_with_the_numpy_path() -> None:
    # thousands of tails at n >= 1e5 go through scipy.special (the exact power of a large
    # report); below the bulk size every tail is computed entrywise; scipy's error at large n
    # is ~1e-14·n relative
    ns = np.arange(200_000, 202_000, dtype=np.float64)
    ks = np.floor(ns * 0.49)
    bulk_cdf, bulk_sf = np.asarray(_dist.bdtr(ks, ns, 0.5)), np.asarray(_dist.bdtrc(ks, ns, 0.5))
    part_cdf = np.asarray(_dist.bdtr(ks[:1000], ns[:1000], 0.5))  # below the bulk size: numpy path
    part_sf = np.asarray(_dist.bdtrc(ks[:1000], ns[:1000], 0.5))
    rtol = 1e-12 + 1e-14 * float(ns[-1])
    np.testing.assert_allclose(part_cdf, bulk_cdf[:1000], rtol=rtol)
    np.testing.assert_allclose(part_sf, bulk_sf[:1000], rtol=rtol)


@pytest.mark.parametrize("rows", [1, 5, 200])
def test_pmf_sums_on_fewer_steps_have_the_bits_of_all_63(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sums of ranges of every width (0 to 63 terms, and empty ones) on the steps they need
    equal, bit for bit, the sums formed on all 63 steps (``_steps`` held at its full width, the
    form before the cut)."""

    def full_width(*_: np.ndarray) -> int:
        return _dist._SUM_TERMS

    def pmf_sum_full_width(*args: np.ndarray) -> np.ndarray:
        with monkeypatch.context() as patch:
            patch.setattr(_dist, "_steps", full_width)
            return _dist._pmf_sum(*args)

    rng = np.random.default_rng(rows)
    for width in range(-1, 64):
        n = rng.integers(1, 5000, rows).astype(np.float64)
        p = rng.uniform(0.001, 0.999, rows)
        spread = rng.integers(0, width + 1, rows) if width >= 0 else np.full(rows, -1)
        lo = np.floor(rng.uniform(0.0, 1.0, rows) * (n - np.maximum(spread, 0) + 1.0))
        hi = lo + spread
        got, want = _dist._pmf_sum(lo, hi, n, p), pmf_sum_full_width(lo, hi, n, p)
        assert np.array_equal(got, want), (rows, width)


_EXTREME_QUANTILES = """
import numpy as np
from ablation.stats._binom_quantile import binom_ppf, binom_isf
q = np.array([1.0, 0.0])
print(binom_ppf(1.0, 136.0, 1e-5), binom_isf(0.0, 136.0, 1e-5),
      *binom_ppf(q, 136.0, 1e-5), *binom_isf(q, 136.0, 1e-5))
"""


def test_the_quantiles_at_q_0_and_1_end_where_scipys_do_and_end_at_all() -> None:
    """``binom_ppf(1, 136, 1e-5)`` never returned: the bracket's upper end was ``72.4`` (a margin of
    ``5 + z²``), and a bisection between 71 and 72.4 cuts at 71 forever. Run in a process of its
    own with a time limit, so a regression fails instead of hanging the suite. With the end an
    integer it returned 72, where the upper tail underflows, instead of scipy's ``n``: at
    ``q = 1`` (``ppf``) and ``q = 0`` (``isf``) the answer is ``n``, as the tail is positive to
    ``n``."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _EXTREME_QUANTILES], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    got = [float(v) for v in done.stdout.split()]
    want = [sst.binom.ppf(1.0, 136, 1e-5), sst.binom.isf(0.0, 136, 1e-5),
            *sst.binom.ppf([1.0, 0.0], 136, 1e-5), *sst.binom.isf([1.0, 0.0], 136, 1e-5)]  # fmt: skip
    assert got == want == [136.0, 136.0, 136.0, -1.0, -1.0, 136.0]


@SETTINGS
@given(st.floats(min_value=0.0, max_value=6.5), probs,
       st.one_of(st.floats(min_value=0.0, max_value=1.0), st.sampled_from([0.0, 1.0, 1e-300])))  # fmt: skip
def test_the_search_bracket_has_integer_ends(log10n: float, p: float, q: float) -> None:
    """Both ends of the bisection's bracket are integers, so every halving narrows it."""
    n = float(max(1, round(10.0**log10n)))
    for tail, upper in ((_dist.bdtr, False), (_dist.bdtrc, True)):
        lo, hi = _binom_quantile._normal_bracket(tail, np.float64(q), np.float64(n), np.float64(p), upper=upper)
        assert float(lo) == math.floor(float(lo)) and float(hi) == math.floor(float(hi)), (lo, hi)
