"""Repeated runs per task (epochs) and clustered tasks.

The task (or the task family) is the unit of analysis: runs inside a task are not independent and
epoch j of the baseline is not paired with epoch j of the candidate (Miller 2024). Tools here:
one-way variance components and ICC, the Kish (1965) design effect, a cluster bootstrap over
top-level units (Davison & Hinkley 1997 §3.8; Field & Welsh 2007) with an exact multinomial fast path
for binary runs, and Fisher's exact test as per-task evidence that a task is flaky.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._common import as_count, check_level, paired_arrays
from ablation.stats._lazy import LazyModule
from ablation.stats._results import (
    BootstrapResult,
    ConfidenceInterval,
    TestResult,
    VarianceComponents,
)
from ablation.stats.bootstrap import (
    RngLike,
    check_boot_method,
    check_resamples,
    interval_from_distribution,
    resolve_rng,
)

_st: Any = LazyModule("scipy.stats")

__all__ = [
    "cluster_bootstrap",
    "design_effect",
    "fisher_exact_test",
    "repeated_binary_bootstrap",
    "variance_components",
]

_CHUNK_ELEMENTS = 4_000_000
_NAMES = {"percentile": "percentile", "basic": "basic", "bca": "BCa"}


def variance_components(values: ArrayLike, groups: ArrayLike) -> VarianceComponents:
    """One-way random-effects ANOVA (method of moments) for one arm.

    ``σ²_w = MSW``, ``σ²_b = max(0, (MSB − MSW)/n0)`` with ``n0 = (N − Σn_i²/N)/(G − 1)`` (equal to
    the group size k when groups are balanced), ``ICC = σ²_b/(σ²_b + σ²_w)``. With balanced data and a
    positive estimate this equals REML; use it to project the SE for other numbers of runs:
    ``Var(mean) = (σ²_b + σ²_w/K)/T``.

    Args:
        values: One value per run (e.g. 0/1 pass).
        groups: Group label per run (e.g. task id), same length.

    Returns:
        A :class:`VarianceComponents`. ICC is 0.0 when both components are 0.

    Raises:
        ValueError: On length mismatch, fewer than 2 groups, or no group with 2 or more values
            (the within variance is then not estimable).
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    g = np.asarray(groups).reshape(-1)
    if v.shape != g.shape:
        raise ValueError(f"values and groups must have the same length, got {v.size} and {g.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    _, inv = np.unique(g, return_inverse=True)
    counts = np.bincount(inv).astype(np.float64)
    n_groups = counts.size
    total = float(v.size)
    if n_groups < 2:
        raise ValueError("variance_components needs at least 2 groups")
    if total - n_groups < 1:
        raise ValueError("variance_components needs at least one group with 2 or more values")
    sums = np.bincount(inv, weights=v)
    means = sums / counts
    grand = float(v.mean())
    ssb = float(np.sum(counts * (means - grand) ** 2))
    ssw = float(np.sum((v - means[inv]) ** 2))
    msb = ssb / (n_groups - 1)
    msw = ssw / (total - n_groups)
    n0 = (total - float(np.sum(counts**2)) / total) / (n_groups - 1)
    between = max(0.0, (msb - msw) / n0)
    within = msw
    tot = between + within
    icc = between / tot if tot > 0 else 0.0
    return VarianceComponents(float(between), float(within), float(icc), total / n_groups)


def design_effect(m: float, icc: float) -> float:
    """Kish (1965) design effect ``1 + (m − 1)·ρ`` for clusters of (mean) size ``m``.

    A clustered sample of N runs carries the information of about ``N / deff`` independent runs.

    Args:
        m: Cluster size (runs per task), ``m ≥ 1``.
        icc: Intra-class correlation ρ, in ``[max(−1, −1/(m − 1)), 1]``: clusters of ``m`` admit
            no ICC below ``−1/(m − 1)`` (the variance of a cluster sum, ``m·σ²·deff``, would be
            negative); there the design effect is 0. The float nearest ``−1/(m − 1)`` is
            accepted even where it rounds a few ulps below.

    Returns:
        The design effect, ``≥ 0``.

    Raises:
        ValueError: When ``m < 1`` or the ICC is outside that range.
    """
    mm = float(m)
    rho = float(icc)
    if not (math.isfinite(mm) and mm >= 1.0):
        raise ValueError(f"m must be >= 1, got {m!r}")
    lowest = max(-1.0, -1.0 / (mm - 1.0)) if mm > 1.0 else -1.0
    if not (math.isfinite(rho) and lowest * (1.0 + 4.0 * sys.float_info.epsilon) <= rho <= 1.0):
        raise ValueError(
            f"icc must be in [{lowest:.17g}, 1] for clusters of size {mm:g} (at least "
            f"max(-1, -1/(m - 1))), got {icc!r}"
        )
    return max(0.0, 1.0 + (mm - 1.0) * rho)


def cluster_bootstrap(
    x: ArrayLike,
    y: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    method: str = "percentile",
    rng: RngLike = 0,
) -> BootstrapResult:
    """Cluster bootstrap of the weighted mean difference ``Σw(y − x)/Σw``.

    ``x`` and ``y`` are per-unit values (e.g. per-task mean pass rates of the two arms). Without
    ``clusters`` each unit is resampled on its own (a paired bootstrap of the weighted mean). With
    ``clusters`` (one label per unit, e.g. the task family), whole clusters are resampled with
    replacement, everything inside a cluster kept intact, and each resample uses the ratio statistic
    ``Σ_g S_g / Σ_g W_g`` where ``S_g = Σ_{i∈g} w_i(y_i − x_i)`` and ``W_g = Σ_{i∈g} w_i``; this handles
    unbalanced clusters. Only the top level is resampled (resampling lower levels too inflates the
    variance). With few clusters (G ≲ 30) the interval is anti-conservative (Cameron, Gelbach &
    Miller 2008). When the clusters take few distinct ``(S_g, W_g)`` pairs (at most one per
    eight clusters, as per-task means of a few runs do), each resample is drawn as multinomial
    counts over those pairs: the same distribution at a cost that does not grow with the number
    of clusters; ``method`` then says so.

    Args:
        x: Baseline per-unit values.
        y: Candidate per-unit values.
        clusters: Optional cluster label per unit.
        weights: Optional non-negative weight per unit (e.g. runs per task); default 1.
        n_resamples: Number of resamples.
        confidence_level: Two-sided level.
        method: ``"percentile"`` (default), ``"basic"`` or ``"bca"`` (leave-one-cluster-out
            jackknife).
        rng: Int seed, Generator or None.

    Returns:
        A :class:`BootstrapResult`.

    Raises:
        ValueError: ``"no pairs"`` when empty; on bad weights or labels.
    """
    xa, ya = paired_arrays(x, y)
    n = xa.size
    if n == 0:
        raise ValueError("no pairs")
    level = check_level(confidence_level)
    check_boot_method(method)
    B = check_resamples(n_resamples)
    gen, seed = resolve_rng(rng)
    s, wt, unit = _cluster_sums(xa, ya, clusters, weights)
    g = s.size
    estimate = float(s.sum() / wt.sum())
    theta, distinct = _ratio_resamples(gen, s, wt, B, estimate)
    jack = None
    if method == "bca" and g >= 2:
        den_j = wt.sum() - wt
        ok = den_j > 0
        jack = ((s.sum() - s)[ok] / den_j[ok]).astype(np.float64)
    low, high, se, note = interval_from_distribution(
        theta, estimate, method=method, confidence_level=level, jackknife=jack
    )
    return BootstrapResult(
        estimate,
        ConfidenceInterval(low, high),
        se,
        f"{unit} bootstrap, {_NAMES[method]} interval (weighted mean difference, {g} {unit}s"
        + (f", drawn as a multinomial over {distinct} distinct {unit} totals" if distinct else "")
        + f"){note}",
        B,
        level,
        seed,
    )


def _cluster_sums(
    xa: NDArray[np.float64],
    ya: NDArray[np.float64],
    clusters: ArrayLike | None,
    weights: ArrayLike | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], str]:
    """``(S_g, W_g, unit name)`` of :func:`cluster_bootstrap`: per cluster (or per unit without
    ``clusters``) the weighted sum of ``y − x`` and the sum of weights, after checking both."""
    n = xa.size
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape != xa.shape:
        raise ValueError(f"weights must have one value per unit ({n}), got {w.size}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError("weights must be finite, non-negative and not all zero")
    contrib = w * (ya - xa)
    if clusters is None:
        return contrib, w, "unit"
    lab = np.asarray(clusters).reshape(-1)
    if lab.shape != xa.shape:
        raise ValueError(f"clusters must have one label per unit ({n}), got {lab.size}")
    _, inv = np.unique(lab, return_inverse=True)
    s = np.bincount(inv, weights=contrib).astype(np.float64)
    return s, np.bincount(inv, weights=w).astype(np.float64), "cluster"


#: A resample is drawn as counts over the clusters' distinct ``(total, weight)`` pairs when there
#: are at most ``1/_DISTINCT_SHARE`` as many distinct pairs as clusters (see _ratio_resamples).
_DISTINCT_SHARE = 8


def _ratio_resamples(
    gen: np.random.Generator,
    s: NDArray[np.float64],
    wt: NDArray[np.float64],
    B: int,
    estimate: float,
) -> tuple[NDArray[np.float64], int | None]:
    """``B`` bootstrap ratios ``Σ S / Σ W`` of ``g`` clusters drawn with replacement.

    A resample's ratio depends only on how many times each distinct ``(S, W)`` pair is drawn,
    and those counts are ``Multinomial(g, counts / g)``. When the clusters take at most ``g / 8``
    distinct pairs (tasks with a few runs each take a few dozen whatever ``g`` is), that draw
    replaces the ``g`` indices: the same distribution of ratios at ``O(B·m)`` instead of
    ``O(B·g)`` (10⁵ tasks, 10⁴ resamples: 9 s before). Returns the ratios and ``m`` (``None``
    when the clusters were drawn one by one).
    """
    g = s.size
    # the pairs as complex numbers: sorted as (S, W) pairs are, without unique(axis=0)'s row views
    pairs, counts = np.unique(s + 1j * wt, return_counts=True)
    if pairs.size * _DISTINCT_SHARE <= g:
        return _multinomial_ratios(gen, pairs.real, pairs.imag, counts, B, estimate), pairs.size
    theta = np.empty(B, dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // g)
    for start in range(0, B, chunk):
        stop = min(B, start + chunk)
        idx = gen.integers(0, g, size=(stop - start, g))
        theta[start:stop] = _ratios(s[idx].sum(axis=1), wt[idx].sum(axis=1), estimate)
    return theta, None


def _multinomial_ratios(
    gen: np.random.Generator,
    totals: NDArray[np.float64],
    weights: NDArray[np.float64],
    counts: NDArray[np.int64],
    B: int,
    estimate: float,
) -> NDArray[np.float64]:
    """``B`` ratios ``Σ c·totals / Σ c·weights``, ``c ~ Multinomial(Σ counts, counts / Σ counts)``:
    resampling units that take a few distinct ``(total, weight)`` values, with the counts of each."""
    n = int(counts.sum())
    theta = np.empty(B, dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // totals.size)
    for start in range(0, B, chunk):
        stop = min(B, start + chunk)
        draws = gen.multinomial(n, counts / n, size=stop - start)
        theta[start:stop] = _ratios(draws @ totals, draws @ weights, estimate)
    return theta


def _ratios(
    num: NDArray[np.float64], den: NDArray[np.float64], estimate: float
) -> NDArray[np.float64]:
    """``num / den``, and ``estimate`` where ``den`` is 0 (a resample of zero-weight units only)."""
    safe = den > 0
    out: NDArray[np.float64] = np.where(safe, num / np.where(safe, den, 1.0), estimate)
    return out


def repeated_binary_bootstrap(
    base_passes: ArrayLike,
    cand_passes: ArrayLike,
    runs: int,
    *,
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    method: str = "percentile",
    rng: RngLike = 0,
) -> BootstrapResult:
    """Exact fast path of the task-level bootstrap for binary runs with ``k`` runs per task per arm.

    Each task contributes ``(base_passes, cand_passes)`` ∈ {0..k}², so resampling T tasks with
    replacement is one multinomial draw of T over the observed cells; the statistic is
    ``mean((cand − base)/k)``, the mean per-task pass-rate difference. Same distribution as
    :func:`cluster_bootstrap` on per-task means (no clusters, equal weights) at O(B·cells) cost.

    Args:
        base_passes: Baseline passes per task (0..k).
        cand_passes: Candidate passes per task (0..k).
        runs: Runs per task per arm ``k`` (≥ 1).
        n_resamples: Number of resamples.
        confidence_level: Two-sided level.
        method: ``"percentile"`` (default) or ``"basic"``.
        rng: Int seed, Generator or None.

    Returns:
        A :class:`BootstrapResult`.

    Raises:
        ValueError: ``"no pairs"`` when there are no tasks; on counts outside ``0..k``.
    """
    k = as_count(runs, "runs")
    if k < 1:
        raise ValueError("runs must be at least 1")
    base = np.asarray(base_passes).reshape(-1)
    cand = np.asarray(cand_passes).reshape(-1)
    if base.shape != cand.shape:
        raise ValueError(
            f"base_passes and cand_passes must have the same length, got {base.size} and {cand.size}"
        )
    if base.size == 0:
        raise ValueError("no pairs")
    for name, arr in (("base_passes", base), ("cand_passes", cand)):
        if not np.all(np.equal(np.mod(arr, 1), 0)) or np.any(arr < 0) or np.any(arr > k):
            raise ValueError(f"{name} must be integers in 0..{k}")
    level = check_level(confidence_level)
    check_boot_method(method, ("percentile", "basic"))
    B = check_resamples(n_resamples)
    gen, seed = resolve_rng(rng)
    t = base.size
    code = base.astype(np.int64) * (k + 1) + cand.astype(np.int64)
    cells, counts = np.unique(code, return_counts=True)
    values = ((cells % (k + 1)) - (cells // (k + 1))) / k
    estimate = float(np.dot(counts, values) / t)
    theta = _multinomial_ratios(gen, values, np.ones(values.size), counts, B, estimate)
    low, high, se, note = interval_from_distribution(
        theta, estimate, method=method, confidence_level=level
    )
    return BootstrapResult(
        estimate,
        ConfidenceInterval(low, high),
        se,
        f"task bootstrap, {_NAMES[method]} interval (multinomial over per-task pass counts, "
        f"{k} runs per arm){note}",
        B,
        level,
        seed,
    )


def fisher_exact_test(k1: int, n1: int, k2: int, n2: int) -> TestResult:
    """Two-sided Fisher exact test of ``k1/n1`` vs ``k2/n2`` (``scipy.stats.fisher_exact``).

    Used as per-task evidence that the two arms' run outcomes differ on one task (e.g. flaky vs
    stable regression). ``statistic`` is the difference in pass fractions ``k2/n2 − k1/n1`` (always
    defined; the odds ratio is not when a cell is empty); ``n = n1 + n2``. An empty arm gives p = 1.

    Args:
        k1: Passes in the first arm (baseline).
        n1: Runs in the first arm.
        k2: Passes in the second arm (candidate).
        n2: Runs in the second arm.

    Returns:
        A :class:`TestResult`.
    """
    k1 = as_count(k1, "k1")
    n1 = as_count(n1, "n1")
    k2 = as_count(k2, "k2")
    n2 = as_count(n2, "n2")
    if k1 > n1 or k2 > n2:
        raise ValueError("passes cannot exceed runs")
    name = "Fisher exact test (two-sided); statistic = difference in pass fractions"
    if n1 == 0 or n2 == 0:
        return TestResult(0.0, 1.0, f"{name}; an arm has no runs", n1 + n2)
    res = _st.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")
    p = float(res.pvalue)
    return TestResult(k2 / n2 - k1 / n1, min(1.0, max(0.0, p)), name, n1 + n2)
