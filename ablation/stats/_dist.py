"""The distribution functions the report path needs, in numpy, :mod:`math` and :mod:`statistics`.

Importing ``scipy.stats`` costs 1-1.5 s and ``scipy.special`` a third of a second, more than a
whole binary report; these functions replace the calls the report makes (each names the scipy
call it stands for, and ``tests/stats/test_stats_dist.py`` compares them with it):

- normal: :func:`ndtr` (Cephes form ``½·erfc(−x/√2)``) and :func:`ndtri` (Wichura's AS 241 through
  :class:`statistics.NormalDist`), scalar or array;
- binomial: :func:`bdtr` / :func:`bdtrc` (``P(X ≤ k)`` / ``P(X > k)``, each from its own side
  through :func:`ablation.stats._incbeta.incbet`; thousands of tails at ``n ≥ 1e5`` by
  ``scipy.special``, imported then), :func:`binom_pmf` (Loader's saddle point),
  :func:`ablation.stats._binom_quantile.binom_ppf` / ``binom_isf`` (a discrete bisection on
  those tails, in a module of their own);
- :func:`gammaln`, :func:`betaln`, :func:`xlogy`, :func:`xlog1py`.

Assumptions: arguments inside the distributions' domains (the callers check them); a NaN
comes back where scipy would return NaN for an out-of-range argument.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._incbeta import incbet, incbet_scalar, log_beta_kernel, log_beta_kernel_scalar

__all__ = [
    "bdtr",
    "bdtrc",
    "betaln",
    "binom_pmf",
    "chi2_sf_1",
    "gammaln",
    "incbet",
    "ndtr",
    "ndtri",
    "xlog1py",
    "xlogy",
]

_SQRT1_2 = math.sqrt(0.5)
_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_inv_cdf = np.frompyfunc(NormalDist().inv_cdf, 1, 1)
_lgamma = np.frompyfunc(math.lgamma, 1, 1)


def _out(value: NDArray[Any]) -> Any:
    """A 0-d result as a numpy float (as scipy returns), an array as a float64 array."""
    arr = np.asarray(value, dtype=np.float64)
    return arr[()] if arr.ndim == 0 else arr


def ndtr(x: ArrayLike) -> Any:
    """Standard normal cdf (``scipy.special.ndtr``, Cephes: ``½ + ½·erf`` near 0, ``½·erfc`` beyond)."""
    z = np.asarray(x, dtype=np.float64) * _SQRT1_2
    az = np.abs(z)
    with np.errstate(invalid="ignore"):
        near = 0.5 + 0.5 * np.asarray(_erf(z), dtype=np.float64)
        tail = 0.5 * np.asarray(_erfc(az), dtype=np.float64)
        far = np.where(z > 0, 1.0 - tail, tail)
    return _out(np.where(az < _SQRT1_2, near, far))


def ndtri(p: ArrayLike) -> Any:
    """Standard normal quantile (``scipy.special.ndtri``): AS 241, ``±inf`` at 0 and 1, NaN outside."""
    pp = np.asarray(p, dtype=np.float64)
    inner = (pp > 0.0) & (pp < 1.0)
    safe = np.where(inner, pp, 0.5)
    value = np.asarray(_inv_cdf(safe), dtype=np.float64)
    edge = np.where(pp == 0.0, -np.inf, np.where(pp == 1.0, np.inf, np.nan))
    return _out(np.where(inner, value, edge))


def chi2_sf_1(x: ArrayLike) -> Any:
    """``P(χ²₁ > x)`` = ``erfc(√(x/2))`` (``scipy.stats.chi2.sf(x, 1)``)."""
    xx = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return _out(np.where(xx <= 0.0, 1.0, 2.0 * np.asarray(ndtr(-np.sqrt(np.abs(xx))))))


def gammaln(x: ArrayLike) -> Any:
    """``log|Γ(x)|`` elementwise (``scipy.special.gammaln``, by :func:`math.lgamma`)."""
    xx = np.asarray(x, dtype=np.float64)
    bad = (xx <= 0.0) & (xx == np.floor(xx))
    return _out(
        np.where(bad, np.inf, np.asarray(_lgamma(np.where(bad, 1.0, xx)), dtype=np.float64))
    )


def betaln(a: ArrayLike, b: ArrayLike) -> Any:
    """``log B(a, b)`` for ``a, b > 0`` (``scipy.special.betaln``).

    As Cephes ``lbeta`` for large arguments: ``lgamma(a) + lgamma(b) − lgamma(a + b)``, so the
    absolute error is a few ulps of the largest ``lgamma`` term.
    """
    aa, bb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return _out(np.asarray(gammaln(aa)) + np.asarray(gammaln(bb)) - np.asarray(gammaln(aa + bb)))


def xlogy(x: ArrayLike, y: ArrayLike) -> Any:
    """``x·log(y)``, 0 where ``x == 0`` (``scipy.special.xlogy``)."""
    xx, yy = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _out(np.where((xx == 0.0) & ~np.isnan(yy), 0.0, xx * np.log(yy)))


def xlog1py(x: ArrayLike, y: ArrayLike) -> Any:
    """``x·log1p(y)``, 0 where ``x == 0`` (``scipy.special.xlog1py``)."""
    xx, yy = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _out(np.where((xx == 0.0) & ~np.isnan(yy), 0.0, xx * np.log1p(yy)))


def binom_pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``P(X = k)`` for ``X ~ Bin(n, p)`` (``scipy.stats.binom.pmf``), by Loader's saddle point.

    ``C(n, k)·p^k·q^(n−k) = exp(kernel(k, n − k, p, q))·n/(k·(n − k))`` for ``0 < k < n``, with
    the kernel of :func:`ablation.stats._incbeta.log_beta_kernel`; ``q^n`` and ``p^n`` at the ends.
    """
    if all(isinstance(v, int | float | np.integer | np.floating) for v in (k, n, p)):
        return np.float64(_pmf_scalar(float(k), float(n), float(p)))  # type: ignore[arg-type]
    kk, nn, pp = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k, n, p)))
    inner = (kk > 0) & (kk < nn) & (pp > 0) & (pp < 1) & (kk == np.floor(kk))
    ki, ni = np.where(inner, kk, 1.0), np.where(inner, nn, 2.0)
    pi = np.where(inner, pp, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = np.exp(log_beta_kernel(ki, ni - ki, pi, 1.0 - pi)) * ni / (ki * (ni - ki))
        low = np.exp(np.asarray(xlog1py(nn, -pp)))
        high = np.exp(np.asarray(xlogy(nn, pp)))
    ends = np.where(kk == 0, low, np.where(kk == nn, high, 0.0))
    out = np.where(inner, mid, ends)
    return _out(np.where((pp < 0) | (pp > 1) | np.isnan(pp), np.nan, out))


_SUM_TERMS = 64  # a tail of at most this many terms is summed (see _binomial_tails)


def _steps(below: NDArray[np.float64], above: NDArray[np.float64]) -> int:
    """The ``stop`` of :func:`_pmf_sum`'s steps: ``_SUM_TERMS``, or less with the same sums.

    ``below``/``above``: per entry, how far its range reaches below and above its top term;
    terms further away are masked to zero. numpy adds a row of eight or more numbers in eight
    interleaved accumulators, so a row cut to a multiple of eight columns (at least eight) that
    keeps every unmasked term adds the same numbers in the same order as the full row, whose
    other entries are zeros: the same bits, at half the work or less for ranges of up to 32
    terms (every tail of a 30-pair design). A test compares the two on numpy's own summation.
    """
    reach = max(float(np.max(below, initial=0.0)), float(np.max(above, initial=0.0)))
    if not reach < _SUM_TERMS - 1:  # also a NaN
        return _SUM_TERMS
    cut = 8 * max(1, math.ceil(reach / 8.0))
    return min(cut + 1, _SUM_TERMS)


def _pmf_sum(
    lo: NDArray[np.float64], hi: NDArray[np.float64], n: NDArray[np.float64], p: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``Σ_{lo ≤ j ≤ hi} P(X = j)`` elementwise, for ``hi − lo < _SUM_TERMS`` (0 where ``hi < lo``).

    The largest term (at the mode clipped to ``[lo, hi]``; the pmf is unimodal) is computed by
    :func:`binom_pmf`, the others from it by the ratio ``P(j+1)/P(j) = (n−j)/(j+1)·p/q`` going
    up and down, so a term underflows only where it is negligible; at most 63 roundings each.
    """
    q = 1.0 - p
    top = np.clip(np.floor((n + 1.0) * p), lo, np.maximum(hi, lo))
    first = np.asarray(binom_pmf(top, n, p), dtype=np.float64)
    steps = np.arange(1.0, float(_steps(top - lo, hi - top)))[None, :]
    j_up, j_down = top[:, None] + steps, top[:, None] - steps
    odds = (p / q)[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        up = np.cumprod((n[:, None] - j_up + 1.0) / j_up * odds, axis=1)
        down = np.cumprod((j_down + 1.0) / (n[:, None] - j_down) / odds, axis=1)
        inside = np.where(j_up <= hi[:, None], up, 0.0) + np.where(j_down >= lo[:, None], down, 0.0)
    total: NDArray[np.float64] = np.where(hi >= lo, first * (1.0 + inside.sum(axis=1)), 0.0)
    return total


_BULK_SIZE = 2_000  # array calls at least this long, with some n at least _BULK_N: scipy.special
_BULK_N = 100_000


def _binomial_tails(k: ArrayLike, n: ArrayLike, p: ArrayLike, *, upper: bool) -> Any:
    """``P(X ≤ k)`` (``upper=False``) or ``P(X > k)`` for ``X ~ Bin(n, p)``, elementwise.

    Each entry as :func:`_direct_tails`, whose relative error stays within ~1e-12; thousands of
    tails at ``n ≥ 1e5`` (the exact power of a 1e5+-pair report, where the continued fraction
    needs dozens of numpy steps per call) go through ``scipy.special.bdtr`` / ``bdtrc``, imported
    on that first call: fast in bulk, with a relative error that grows to ~``1e-14·n`` (~1e-8 at
    1e6, far below what a report prints). Both tails at the median of an odd ``Bin(n, ½)`` are ½
    exactly (symmetry; the methods above are up to ~300 ulps off).
    """
    if all(isinstance(v, int | float | np.integer | np.floating) for v in (k, n, p)):
        return np.float64(_tail_scalar(math.floor(float(k)), float(n), float(p), upper=upper))  # type: ignore[arg-type]
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k, n, p)))
    shape = arrays[0].shape
    kk, nn, pp = np.floor(arrays[0]).ravel(), arrays[1].ravel(), arrays[2].ravel()
    if kk.size >= _BULK_SIZE and float(np.max(nn, initial=0.0)) >= _BULK_N:
        from scipy import special  # only for bulk tails (see the docstring)

        whole = nn.astype(np.int64)  # integral n
        out = np.array(special.bdtrc(kk, whole, pp) if upper else special.bdtr(kk, whole, pp))
    else:
        out = _direct_tails(kk, nn, pp, upper=upper)
    out[(pp == 0.5) & (2.0 * kk + 1.0 == nn)] = 0.5  # the median of an odd Bin(n, ½): exact
    return _out(out.reshape(shape))


def _direct_tails(
    kk: NDArray[np.float64], nn: NDArray[np.float64], pp: NDArray[np.float64], *, upper: bool
) -> NDArray[np.float64]:
    """The tails of :func:`_binomial_tails` entry by entry, for flat arrays with ``k`` integral.

    Each tail is ``I_{1−p}(n − k, k + 1)`` / ``I_p(k + 1, n − k)`` with the exact complement, so
    neither is ``1 − `` the other. Where the incomplete beta's continued fraction would run with
    one parameter small and the other large near the mean (a lower tail of at most 64 terms, or an
    upper one), its factors sit within an ulp of 1 long before it converges; that tail is summed
    term by term instead, and its complement is ``1 −`` the sum only where the complement is not
    small (past the mean). Boundary values: ``bdtr`` NaN and ``bdtrc`` 1 for ``k < 0``.
    """
    inner = (kk >= 0) & (kk < nn) & (pp > 0) & (pp < 1)
    ki, ni, pi = np.where(inner, kk, 0.0), np.where(inner, nn, 1.0), np.where(inner, pp, 0.5)
    own = inner & ((ni - ki - 1.0 < _SUM_TERMS) if upper else (ki < _SUM_TERMS))
    other = inner & ((ki < _SUM_TERMS) if upper else (ni - ki - 1.0 < _SUM_TERMS))
    # where the incomplete beta itself would return 1 − (the other tail): the other tail is large
    past_mean = (
        (pi >= (ki + 2.0) / (ni + 3.0)) if upper else (1.0 - pi >= (ni - ki + 1.0) / (ni + 3.0))
    )
    flip = other & ~own & past_mean
    value = np.empty(ki.shape)
    own_lo, own_hi = (ki + 1.0, ni) if upper else (np.zeros(ki.shape), ki)
    for mask, lo, hi, sign in (
        (own, own_lo, own_hi, 1.0),
        (flip, own_lo * 0.0 if upper else ki + 1.0, ki if upper else ni, -1.0),
    ):
        at = np.flatnonzero(mask)
        if at.size:
            total = _pmf_sum(lo[at], hi[at], ni[at], pi[at])
            value[at] = total if sign > 0 else 1.0 - total
    rest = np.flatnonzero(inner & ~(own | flip))
    if rest.size:
        kr, nr, pr = ki[rest], ni[rest], pi[rest]
        a, b = (kr + 1.0, nr - kr) if upper else (nr - kr, kr + 1.0)
        value[rest] = incbet(a, b, pr if upper else 1.0 - pr, 1.0 - pr if upper else pr)
    below, beyond = (1.0, 0.0) if upper else (np.nan, 1.0)
    edge = np.where(
        kk < 0,
        below,
        np.where(kk >= nn, beyond, np.where(pp == 0, float(upper is False), float(upper))),
    )
    out = np.where(inner, value, edge)
    result: NDArray[np.float64] = np.where((pp < 0) | (pp > 1) | np.isnan(pp), np.nan, out)
    return result


def _pmf_scalar(k: float, n: float, p: float) -> float:
    if not 0.0 <= p <= 1.0 or k < 0 or k > n or k != math.floor(k):
        return math.nan if not 0.0 <= p <= 1.0 else 0.0
    if k == 0 or k == n:
        m = (
            n * (math.log1p(-p) if k == 0 else math.log(p))
            if (p < 1.0 if k == 0 else p > 0.0)
            else -math.inf
        )
        return 1.0 if n == 0 else math.exp(m)
    if p in (0.0, 1.0):
        return 0.0
    return math.exp(log_beta_kernel_scalar(k, n - k, p, 1.0 - p)) * n / (k * (n - k))


def _tail_scalar(k: int, n: float, p: float, *, upper: bool) -> float:
    """:func:`_binomial_tails` for one ``(k, n, p)``, in plain floats (same rules)."""
    if not 0.0 <= p <= 1.0:
        return math.nan
    if k < 0:
        return 1.0 if upper else math.nan
    if k >= n:
        return 0.0 if upper else 1.0
    if p in (0.0, 1.0):
        return float(upper) if p == 1.0 else float(not upper)
    if p == 0.5 and 2.0 * k + 1.0 == n:  # P(X ≤ (n − 1)/2) = P(X > (n − 1)/2) = ½ by symmetry
        return 0.5
    terms = [int(k) + 1, int(n)] if upper else [0, int(k)]
    others = [0, int(k)] if upper else [int(k) + 1, int(n)]
    if terms[1] - terms[0] < _SUM_TERMS:
        return math.fsum(_pmf_scalar(j, n, p) for j in range(terms[0], terms[1] + 1))
    past_mean = (p >= (k + 2.0) / (n + 3.0)) if upper else (1.0 - p >= (n - k + 1.0) / (n + 3.0))
    if others[1] - others[0] < _SUM_TERMS and past_mean:
        return 1.0 - math.fsum(_pmf_scalar(j, n, p) for j in range(others[0], others[1] + 1))
    if upper:
        return incbet_scalar(k + 1.0, n - k, p, 1.0 - p)
    return incbet_scalar(n - k, k + 1.0, 1.0 - p, p)


def bdtr(k: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``P(X ≤ k)`` for ``X ~ Bin(n, p)`` (``scipy.special.bdtr`` / ``scipy.stats.binom.cdf``).

    NaN for ``k < 0`` as ``bdtr`` (``binom.cdf`` gives 0 there: callers handle it), 1 for
    ``k ≥ n``; see :func:`_binomial_tails`.
    """
    return _binomial_tails(k, n, p, upper=False)


def bdtrc(k: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``P(X > k)`` for ``X ~ Bin(n, p)`` (``scipy.special.bdtrc`` / ``scipy.stats.binom.sf``).

    Never ``1 − cdf`` in the tail; 1 for ``k < 0``, 0 for ``k ≥ n``; see :func:`_binomial_tails`.
    """
    return _binomial_tails(k, n, p, upper=True)
