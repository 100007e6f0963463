"""Paired bootstrap intervals, including an exact fast path for paired binary outcomes.

All resampling uses an explicit ``numpy.random.Generator`` (``rng`` = int seed or Generator), so the
same seed gives bit-identical intervals for the same numpy version. Resamples are drawn in chunks of
bounded size (about ``_CHUNK_ELEMENTS`` indices at a time), so memory does not grow with
``n_resamples × n``.

References: Efron (1987) and DiCiccio & Efron (1996) for BCa; Efron & Tibshirani (1993);
Davison & Hinkley (1997).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats import _dist
from ablation.stats._common import as_count, as_table, check_level, paired_arrays
from ablation.stats._results import BootstrapResult, ConfidenceInterval
from ablation.stats.continuous import _scaled_differences
from ablation.stats.quantiles import linear_quantiles

__all__ = ["binary_uplift_bootstrap", "paired_bootstrap"]

_CHUNK_ELEMENTS = 4_000_000
_BOOT_METHODS = ("percentile", "basic", "bca")

Statistic = Callable[..., Any]
RngLike = int | np.random.Generator | None


def resolve_rng(rng: RngLike) -> tuple[np.random.Generator, int | None]:
    """Return ``(generator, recorded_seed)``: an int seeds ``default_rng``; a Generator is used as is."""
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None:
        return np.random.default_rng(), None
    if isinstance(rng, bool) or not isinstance(rng, int | np.integer):
        raise TypeError(f"rng must be an int seed or a numpy.random.Generator, got {type(rng)!r}")
    seed = int(rng)
    return np.random.default_rng(seed), seed


def check_resamples(n_resamples: int) -> int:
    """Validate the number of resamples (a positive integer)."""
    b = as_count(n_resamples, "n_resamples")
    if b < 1:
        raise ValueError("n_resamples must be at least 1")
    return b


def check_boot_method(method: str, allowed: tuple[str, ...] = _BOOT_METHODS) -> str:
    """Validate a bootstrap interval method name."""
    if method not in allowed:
        raise ValueError(f"method must be one of {allowed}, got {method!r}")
    return method


def interval_from_distribution(
    theta: NDArray[np.float64],
    estimate: float,
    *,
    method: str,
    confidence_level: float,
    jackknife: NDArray[np.float64] | None = None,
    jackknife_weights: NDArray[np.float64] | None = None,
) -> tuple[float, float, float, str]:
    """Turn a bootstrap distribution into ``(low, high, standard_error, method_note)``.

    Percentile: the ``α/2`` and ``1 − α/2`` quantiles (numpy "linear", as scipy). Basic:
    ``2θ̂ − q``. BCa (Efron 1987): bias ``z0 = Φ⁻¹((#{θ* < θ̂} + #{θ* ≤ θ̂}) / 2B)`` and
    acceleration from the (optionally weighted) jackknife values; falls back to percentile when
    ``z0`` is infinite or the jackknife is constant. A distribution with a single value gives the
    zero-width interval at ``estimate``.
    """
    alpha = 1.0 - confidence_level
    se = float(np.std(theta, ddof=1)) if theta.size > 1 else 0.0
    tmin, tmax = float(np.min(theta)), float(np.max(theta))
    if tmin == tmax:
        note = " (degenerate: every resample gave the same value)"
        if method == "bca":
            note = " (BCa degenerate: percentile fallback; every resample gave the same value)"
        low = high = estimate if tmin == estimate else tmin
        if method == "basic":
            low = high = 2.0 * estimate - tmin
        return float(low), float(high), 0.0, note
    probs = np.array([alpha / 2.0, 1.0 - alpha / 2.0])
    note = ""
    if method == "bca":
        bca = _bca_levels(theta, estimate, alpha, jackknife, jackknife_weights)
        if bca is None:
            note = " (BCa degenerate: percentile fallback)"
        else:
            probs = bca
    q = linear_quantiles(theta, probs)
    low, high = float(q[0]), float(q[1])
    if method == "basic":
        low, high = 2.0 * estimate - high, 2.0 * estimate - low
    return low, high, se, note


def _bca_levels(
    theta: NDArray[np.float64],
    estimate: float,
    alpha: float,
    jack: NDArray[np.float64] | None,
    weights: NDArray[np.float64] | None,
) -> NDArray[np.float64] | None:
    if jack is None or jack.size < 2:
        return None
    frac = (np.count_nonzero(theta < estimate) + np.count_nonzero(theta <= estimate)) / (
        2.0 * theta.size
    )
    z0 = float(_dist.ndtri(frac))
    if not np.isfinite(z0):
        return None
    w = np.ones_like(jack) if weights is None else weights
    mean = float(np.sum(w * jack) / np.sum(w))
    dev = mean - jack
    den = float(np.sum(w * dev**2)) ** 1.5
    if den <= 0.0 or not np.isfinite(den):
        return None
    accel = float(np.sum(w * dev**3)) / (6.0 * den)
    z = _dist.ndtri(np.array([alpha / 2.0, 1.0 - alpha / 2.0]))
    adj = z0 + (z0 + z) / (1.0 - accel * (z0 + z))
    levels = _dist.ndtr(adj)
    if not np.all(np.isfinite(levels)):
        return None
    return np.clip(levels, 0.0, 1.0)


def _mean_diff(x: NDArray[np.float64], y: NDArray[np.float64], axis: int = -1) -> Any:
    return np.mean(y - x, axis=axis)


def paired_bootstrap(
    x: ArrayLike,
    y: ArrayLike,
    *,
    statistic: str | Statistic = "mean_diff",
    method: str = "percentile",
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    rng: RngLike = 0,
) -> BootstrapResult:
    """Paired (case-resampling) bootstrap interval for a statistic of ``(x, y)``.

    Pairs ``(x_i, y_i)`` are resampled together (as ``scipy.stats.bootstrap(..., paired=True)``).
    ``statistic="mean_diff"`` is ``mean(y − x)`` (candidate − baseline). A callable must follow
    scipy's vectorised convention ``statistic(x, y, axis=-1)``: it receives arrays of shape
    ``(chunk, n)`` and returns shape ``(chunk,)`` (and a scalar for 1-D input).

    Assumptions: pairs are independent (the task is the unit); with fewer than ~20 pairs bootstrap
    intervals are too narrow (Hesterberg 2015), so prefer the t interval there. BCa uses a jackknife
    (n extra evaluations) and falls back to percentile, saying so in ``method``, when degenerate.
    All-identical differences give a zero-width interval at the estimate.

    Args:
        x: Baseline values, one per task.
        y: Candidate values, paired with ``x``.
        statistic: ``"mean_diff"`` or a vectorised callable.
        method: ``"percentile"`` (default), ``"basic"`` or ``"bca"``.
        n_resamples: Number of resamples ``B``.
        confidence_level: Two-sided level.
        rng: Int seed (recorded in ``seed``), a ``numpy.random.Generator`` or ``None``.

    Returns:
        A :class:`BootstrapResult`.

    Raises:
        ValueError: ``"no pairs"`` when ``x`` is empty; on unequal lengths or non-finite values.
    """
    xa, ya = paired_arrays(x, y)
    n = xa.size
    if n == 0:
        raise ValueError("no pairs")
    level = check_level(confidence_level)
    check_boot_method(method)
    B = check_resamples(n_resamples)
    gen, seed = resolve_rng(rng)
    stat_fn, stat_name = _statistic(statistic)
    scale = 1.0
    if stat_fn is _mean_diff:  # a statistic of the differences alone: work on (0, d), y − x = d·scale
        d, scale = _scaled_differences(xa, ya)
        xa, ya = np.zeros_like(d), d
    estimate = float(stat_fn(xa, ya, axis=-1))
    theta = np.empty(B, dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // n)
    d = ya - xa
    for start in range(0, B, chunk):
        stop = min(B, start + chunk)
        idx = gen.integers(0, n, size=(stop - start, n))
        if stat_fn is _mean_diff:
            theta[start:stop] = d[idx].mean(axis=1)
        else:
            theta[start:stop] = np.asarray(stat_fn(xa[idx], ya[idx], axis=-1), dtype=np.float64)
    jack = None
    if method == "bca" and n >= 2:
        jack = _jackknife(xa, ya, stat_fn)
    low, high, se, note = interval_from_distribution(
        theta, estimate, method=method, confidence_level=level, jackknife=jack
    )
    name = {"percentile": "percentile", "basic": "basic", "bca": "BCa"}[method]
    return BootstrapResult(
        estimate * scale,  # a power of two: exact, or ±inf past the float range
        ConfidenceInterval(low * scale, high * scale),
        se * scale,
        f"paired bootstrap, {name} interval ({stat_name}){note}",
        B,
        level,
        seed,
    )


def _statistic(statistic: str | Statistic) -> tuple[Statistic, str]:
    """The vectorised statistic :func:`paired_bootstrap` resamples and the name its method states."""
    if not isinstance(statistic, str):
        return statistic, getattr(statistic, "__name__", "statistic")
    if statistic != "mean_diff":
        raise ValueError(f"statistic must be 'mean_diff' or a callable, got {statistic!r}")
    return _mean_diff, "mean difference"


def _jackknife(
    x: NDArray[np.float64], y: NDArray[np.float64], stat_fn: Statistic
) -> NDArray[np.float64]:
    n = x.size
    if stat_fn is _mean_diff:
        d = y - x
        return np.asarray((d.sum() - d) / (n - 1), dtype=np.float64)
    out = np.empty(n, dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // n)
    base = np.arange(n - 1)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        i = np.arange(start, stop)[:, None]
        idx = base[None, :] + (base[None, :] >= i)  # leave index i out
        out[start:stop] = np.asarray(stat_fn(x[idx], y[idx], axis=-1), dtype=np.float64)
    return out


def binary_uplift_bootstrap(
    n11: int,
    n12: int,
    n21: int,
    n22: int,
    *,
    method: str = "percentile",
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    rng: RngLike = 0,
) -> BootstrapResult:
    """Exact fast path of the paired bootstrap for the pass-rate uplift ``(c − b)/n``.

    Resampling ``n`` pairs with replacement from a paired binary table is the same as one
    multinomial draw of ``n`` over the four cell proportions ``(n11, b, c, n22)/n``; the uplift of a
    resample is ``(c* − b*)/n``. This gives the same bootstrap distribution as
    :func:`paired_bootstrap` on the 0/1 vectors at O(B) instead of O(B·n) cost. BCa is supported
    with the closed-form jackknife (leaving out one pair of each cell type).

    Args:
        n11: Both pass.
        n12: Regressions ``b``.
        n21: Improvements ``c``.
        n22: Both fail.
        method: ``"percentile"`` (default), ``"basic"`` or ``"bca"``.
        n_resamples: Number of resamples.
        confidence_level: Two-sided level.
        rng: Int seed, Generator or None.

    Returns:
        A :class:`BootstrapResult`.

    Raises:
        ValueError: ``"no pairs"`` when ``n == 0``.
    """
    n11, b, c, n22 = as_table(n11, n12, n21, n22)
    n = n11 + b + c + n22
    if n == 0:
        raise ValueError("no pairs")
    level = check_level(confidence_level)
    check_boot_method(method)
    B = check_resamples(n_resamples)
    gen, seed = resolve_rng(rng)
    estimate = (c - b) / n
    # three categories suffice: regression, improvement, concordant
    pvals = np.array([b, c, n11 + n22], dtype=np.float64) / n
    theta = np.empty(B, dtype=np.float64)
    chunk = 1_000_000
    for start in range(0, B, chunk):
        stop = min(B, start + chunk)
        draws = gen.multinomial(n, pvals, size=stop - start)
        theta[start:stop] = (draws[:, 1] - draws[:, 0]) / n
    jack = weights = None
    if method == "bca" and n >= 2:
        cells = [
            (b, (c - (b - 1)) / (n - 1)),
            (c, ((c - 1) - b) / (n - 1)),
            (n11 + n22, (c - b) / (n - 1)),
        ]
        present = [(w, v) for w, v in cells if w > 0]
        weights = np.array([w for w, _ in present], dtype=np.float64)
        jack = np.array([v for _, v in present], dtype=np.float64)
    low, high, se, note = interval_from_distribution(
        theta,
        estimate,
        method=method,
        confidence_level=level,
        jackknife=jack,
        jackknife_weights=weights,
    )
    name = {"percentile": "percentile", "basic": "basic", "bca": "BCa"}[method]
    return BootstrapResult(
        float(estimate),
        ConfidenceInterval(low, high),
        se,
        f"paired bootstrap, {name} interval (multinomial over the 2x2 cells){note}",
        B,
        level,
        seed,
    )
