"""Student's t tails without scipy: ``½·I_x(df/2, ½)`` by the package's incomplete beta.

Near t = 0 scipy itself rounds (``stdtr(1, -1e-12)`` is 0.5, the exact value 0.5 − atan(10⁻¹²)/π
is 0.49999999999968; at t = 1.1e-5 it is off by 2e-12, as ``df/(df + t²)`` rounds to near 1):
there the closed forms for df = 1 and 2 are the reference instead.

The reference is ``scipy.stats.t`` (``scipy.special.stdtr``/``stdtrit``), itself within 1e-15
of a 40-digit ``mpmath.betainc`` at the points checked. The package's incomplete beta loses
precision as ``df`` grows (``x = df/(df + t²)`` rounds near 1 and its continued fraction
cancels), so the error grows like ``eps·df`` (measured: about 1e-13 at df = 10³, 2e-12 at 10⁵,
4e-11 to 1.4e-10 at 10⁶ to 2·10⁶, 2.3e-10 at 10⁷); the tests allow ``1e-13 + 4·eps·df``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import _t


def _tolerance(df: float) -> float:
    return 1e-13 + 4.0 * 2.0**-52 * df  # 2 eps per degree of freedom: the rounding of x, times a


DFS = [1, 2, 3, 4, 5, 7, 10, 30, 99, 999, 10_000, 100_000, 1_000_000, 10_000_000]


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("t", [-40.0, -4.0, -1.0, 0.0, 0.3, 1.0, 1.96, 2.5, 4.0, 12.0, 40.0])
def test_sf_and_cdf_match_scipy(df: int, t: float) -> None:
    # scipy.stats.t.sf(t, df), scipy.stats.t.cdf(t, df)
    tol = _tolerance(df)
    assert _t.t_sf(t, df) == pytest.approx(float(stats.t.sf(t, df)), rel=tol, abs=1e-15)
    assert _t.t_cdf(t, df) == pytest.approx(float(stats.t.cdf(t, df)), rel=tol, abs=1e-15)


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("q", [1e-12, 1e-6, 0.001, 0.025, 0.05, 0.3, 0.5, 0.7, 0.95, 0.975, 1 - 1e-9])
def test_isf_matches_scipy(df: int, q: float) -> None:
    # scipy.stats.t.isf(q, df)
    assert _t.t_isf(q, df) == pytest.approx(float(stats.t.isf(q, df)), rel=_tolerance(df), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    t=st.floats(-50, 50, allow_nan=False).filter(lambda t: t == 0 or abs(t) > 1e-3),
    df=st.integers(1, 10**7),
    q=st.floats(1e-12, 1 - 1e-12),
)
def test_tails_match_scipy_anywhere(t: float, df: int, q: float) -> None:
    tol = _tolerance(df)
    assert _t.t_sf(t, df) == pytest.approx(float(stats.t.sf(t, df)), rel=tol, abs=1e-15)
    assert _t.t_isf(q, df) == pytest.approx(float(stats.t.isf(q, df)), rel=tol, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(t=st.floats(-50, 50, allow_nan=False), df=st.integers(1, 10**6))
def test_tails_are_symmetric_and_inverse(t: float, df: int) -> None:
    """Invariants: sf(t) = cdf(−t), sf + cdf = 1, and isf undoes sf where sf is not tiny."""
    sf = _t.t_sf(t, df)
    assert 0.0 <= sf <= 1.0
    assert sf == _t.t_cdf(-t, df)
    assert sf + _t.t_cdf(t, df) == pytest.approx(1.0, abs=1e-15)
    if 1e-10 < sf < 1 - 1e-10:
        assert _t.t_isf(sf, df) == pytest.approx(t, rel=1e-8, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(t=st.one_of(st.floats(-1e-2, 1e-2), st.sampled_from([1e-300, 1e-12, 3e-9, -1e-7, 0.5, 7.0])))
def test_closed_forms_near_zero(t: float) -> None:
    # Cauchy (df = 1): sf(t) = 1/2 - atan(t)/pi; df = 2: sf(t) = 1/2 - t / (2 sqrt(2 + t^2))
    assert _t.t_sf(t, 1) == pytest.approx(0.5 - math.atan(t) / math.pi, rel=1e-14)
    assert _t.t_sf(t, 2) == pytest.approx(0.5 - t / (2 * math.sqrt(2 + t * t)), rel=1e-14)


def test_edges() -> None:
    assert _t.t_sf(math.inf, 5) == 0.0 and _t.t_sf(-math.inf, 5) == 1.0
    assert math.isnan(_t.t_sf(math.nan, 5)) and math.isnan(_t.t_sf(1.0, 0))
    assert _t.t_isf(0.5, 7) == 0.0
    assert _t.t_isf(0.0, 7) == math.inf and _t.t_isf(1.0, 7) == -math.inf
    assert math.isnan(_t.t_isf(1.5, 7))
