"""Vectorised replay of the sequential gates over many campaigns, and planning by simulation.

:func:`sequential_decisions` runs the gates of :class:`SequentialMonitor` over a matrix of campaigns
(rows) and pairs (columns) without a Python loop per campaign: the regression gate becomes a
boundary on b for each number of discordant pairs, computed once, and the non-inferiority gate needs
the betting capital at only the two grid points next to −margin. :func:`simulate_sequential` draws
i.i.d. campaigns from ψ and δ and summarises the stopping times (expected pairs, 90th percentile)
and the decision rates, for ``ablation plan --sequential``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._betting import (
    DEFAULT_GRID_SIZE,
    feasible_range,
    grid_means,
    log_factors,
    margin_indices,
    next_sums,
)
from ablation.stats._common import as_count
from ablation.stats.bootstrap import RngLike, resolve_rng
from ablation.stats.sequential import CRITICAL_REGRESSION, log_e_values
from ablation.stats.sequential_monitor import GATES, SequentialMonitor

__all__ = [
    "SequentialDecisions",
    "SequentialSimulation",
    "sequential_decisions",
    "simulate_sequential",
]

_CHUNK_ELEMENTS = 2_000_000


@dataclass(frozen=True, slots=True, eq=False)
class SequentialDecisions:
    """Result of :func:`sequential_decisions`: where and why each campaign stopped.

    Attributes:
        stop: Pairs run when the campaign stopped (the number of pairs given if nothing decided).
        gate: The deciding gate per campaign (one of :data:`GATES`, or ``"undecided"``).
    """

    stop: NDArray[np.int64]
    gate: NDArray[np.str_]


def _first(hit: NDArray[np.bool_]) -> NDArray[np.float64]:
    """1-based index of the first True along the last axis, ``inf`` when there is none."""
    return np.where(hit.any(axis=-1), np.argmax(hit, axis=-1) + 1.0, np.inf)


def _regression_boundary(k_max: int, prior: tuple[float, float], alpha: float) -> NDArray[Any]:
    """For k discordant pairs, the fewest regressions b with ``E(b, k − b) ≥ 1/alpha``.

    E grows with b at fixed k, so a vectorised bisection over all k at once finds it; ``k + 1``
    means no b suffices.
    """
    k = np.arange(k_max + 1)
    lo, hi = np.zeros_like(k), k + 1
    thr = -math.log(alpha)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        ok = np.where(
            mid <= k, log_e_values(np.minimum(mid, k), k - np.minimum(mid, k), prior) >= thr, True
        )
        hi = np.where(lo < hi, np.where(ok, mid, hi), hi)
        lo = np.where(lo < hi, np.where(ok, lo, mid + 1), lo)
    return lo


def _ni_times(
    d: NDArray[np.float64], margin: float, alpha_cs: float, n_pop: int | None, grid: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """First pair at which the monitor's sequence says inferior / non-inferior (``inf``: never).

    Tracks the capital only at the two grid points next to −margin, which decide exactly as the
    full grid of :class:`UpliftConfidenceSequence` does (its rejected sets are rays).
    """
    runs, steps = d.shape
    k_lo, k_hi = margin_indices(margin, grid)
    means = grid_means(grid)[[k_lo + 1, k_hi - 1]]
    up, down = np.zeros((runs, 2)), np.zeros((runs, 2))
    sums: tuple[Any, Any] = (np.zeros(runs), np.zeros(runs))
    sum_d, abs_sum, integral = np.zeros(runs), np.zeros(runs), np.ones(runs, dtype=bool)
    ni, inf_ = np.zeros((runs, steps), dtype=bool), np.zeros((runs, steps), dtype=bool)
    thr = math.log(2.0 / alpha_cs)
    for i in range(steps):
        t, col = i + 1, d[:, i]
        x = (col + 1.0) / 2.0
        f_up, f_down = log_factors(means, x, t, sums, alpha_cs, n_pop)
        up, down, sums = up + f_up, down + f_down, next_sums(sums, x, t)
        sum_d, abs_sum = sum_d + col, abs_sum + np.abs(col)
        integral &= col == np.round(col)
        lo, hi = feasible_range(sum_d, abs_sum, integral, t, n_pop)
        ni[:, i] = (up[:, 0] >= thr) | (lo > -margin)
        inf_[:, i] = (down[:, 1] >= thr) | (hi < -margin)
    return _first(inf_), _first(ni)


def sequential_decisions(
    diffs: ArrayLike,
    *,
    alpha: float = 0.05,
    margin: float | None = None,
    n_candidates: int = 1,
    population_size: int | None = None,
    futility_after: int | None = None,
    critical: ArrayLike | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
    grid_size: int = DEFAULT_GRID_SIZE,
    critical_total: int = 0,
    suite_size: int | None = None,
) -> SequentialDecisions:
    """Run the gates of :class:`SequentialMonitor` over many campaigns at once (vectorised).

    Gives the same stopping pair and gate as replaying each row through the monitor with the same
    settings, at a fraction of the cost: the regression gate is a precomputed boundary on b for
    each number of discordant pairs, and the non-inferiority gate tracks two grid points.

    Args:
        diffs: ``(campaigns, pairs)`` per-task differences in ``[-1, 1]`` in run order.
        alpha: Family-wise error rate; see :class:`SequentialMonitor` for the other settings.
        margin: Non-inferiority margin or ``None``.
        n_candidates: Number of candidates (Bonferroni split).
        population_size: Suite size for sampling without replacement (and the end of suite).
        futility_after: Futility stop, or ``None``.
        critical: Boolean mask, same shape as ``diffs``, of tasks marked critical (an outcome of
            -1 there decides: ``CRITICAL_REGRESSION``).
        prior: Beta prior of the regression e-process.
        grid_size: Grid of the confidence sequence.
        critical_total: Critical tasks in the suite: a non-inferior stop waits until that many
            critical pairs are in (``critical`` counts them; never, when it is ``None``).
        suite_size: End of suite for i.i.d. intervals (``None``: ``population_size``).

    Returns:
        A :class:`SequentialDecisions`.
    """
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    if d.ndim != 2 or not np.all(np.isfinite(d) & (np.abs(d) <= 1.0)):
        raise ValueError("diffs must be a 2-D array of differences in [-1, 1]")
    steps = d.shape[1]
    proto = SequentialMonitor(
        alpha, margin, n_candidates, population_size, futility_after, prior, grid_size
    )
    if population_size is not None and steps > population_size:
        raise ValueError(f"{steps} pairs exceed the population size {population_size}")
    a = proto.alpha_per_candidate
    b, k = np.cumsum(d < 0, axis=1), np.cumsum(d != 0, axis=1)
    times = np.full((6, d.shape[0]), np.inf)
    if critical is not None:
        times[0] = _first(np.asarray(critical, dtype=bool) & (d <= CRITICAL_REGRESSION))
    times[1] = _first(b >= _regression_boundary(steps, proto.prior, a)[k])
    if margin is not None:
        times[2], times[3] = _ni_times(d, float(margin), 2.0 * a, population_size, grid_size)
        if critical_total > 0:  # the lower bound only rises, so the pass comes at the later time
            crit = np.zeros_like(d, dtype=bool) if critical is None else np.asarray(critical, bool)
            times[3] = np.maximum(times[3], _first(np.cumsum(crit, axis=1) >= critical_total))
    if futility_after is not None and futility_after <= steps:
        times[4] = futility_after
    end = suite_size if suite_size is not None else population_size
    if end is not None and end == steps:
        times[5] = steps
    first = np.min(times, axis=0)
    names = np.array((*GATES, "undecided"))
    gate = np.where(np.isfinite(first), np.argmin(times, axis=0), len(GATES))
    stop = np.where(np.isfinite(first), first, steps).astype(np.int64)
    return SequentialDecisions(stop, names[gate])


@dataclass(frozen=True, slots=True)
class SequentialSimulation:
    """Result of :func:`simulate_sequential`: what a sequential campaign costs and decides.

    Attributes:
        expected_pairs: Mean number of pairs run before the campaign stopped.
        pairs_p90: 90th percentile of the pairs run.
        expected_agent_calls: ``2 × expected_pairs`` (one baseline and one candidate call a pair).
        agent_calls_p90: ``2 × pairs_p90``.
        mcse_expected_pairs: Monte Carlo standard error of ``expected_pairs``.
        rates: ``(gate, share of campaigns)`` for every gate of :data:`GATES` except
            ``critical_regression`` (not simulated); campaigns that reach ``n_max`` count as
            ``end_of_suite``.
        psi: Discordant probability ψ.
        delta: True uplift δ = P(improvement) − P(regression).
        n_max: Suite size (most pairs a campaign can run).
        alpha: Family-wise error rate.
        margin: Non-inferiority margin or ``None``.
        n_sim: Simulated campaigns.
        seed: The integer seed when ``rng`` was an int, else ``None``.
    """

    expected_pairs: float
    pairs_p90: int
    expected_agent_calls: float
    agent_calls_p90: int
    mcse_expected_pairs: float
    rates: tuple[tuple[str, float], ...]
    psi: float
    delta: float
    n_max: int
    alpha: float
    margin: float | None
    n_sim: int
    seed: int | None

    def rate(self, gate: str) -> float:
        """Share of campaigns decided by ``gate``."""
        return dict(self.rates)[gate]


def simulate_sequential(
    psi: float,
    delta: float,
    *,
    n_max: int,
    alpha: float = 0.05,
    margin: float | None = None,
    n_sim: int = 2000,
    rng: RngLike = 0,
    n_candidates: int = 1,
    futility_after: int | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
    without_replacement: bool = False,
) -> SequentialSimulation:
    """Expected pairs and decision rates of a sequential campaign, for planning.

    Pairs are i.i.d.: a regression with probability ``(ψ − δ)/2``, an improvement with
    ``(ψ + δ)/2``, concordant otherwise. Each campaign runs the gates of :class:`SequentialMonitor`
    (via :func:`sequential_decisions`) over at most ``n_max`` pairs, many campaigns at once. By
    default the interval treats the pairs as i.i.d. draws (the population claim a campaign
    makes, ending at ``n_max``); ``without_replacement=True`` simulates the suite-only opt-in
    (``SequentialPolicy(suite_claim=True)``: ``population_size = n_max``).

    Args:
        psi: Discordant probability ψ in ``(0, 1]``.
        delta: Uplift δ with ``|δ| ≤ ψ`` (negative: candidate worse).
        n_max: Suite size.
        alpha: Family-wise error rate.
        margin: Non-inferiority margin, or ``None``.
        n_sim: Number of simulated campaigns.
        rng: Seed or ``numpy.random.Generator``.
        n_candidates: Number of candidates (Bonferroni split of alpha).
        futility_after: Futility stop, or ``None``.
        prior: Beta prior of the regression e-process.
        without_replacement: Interval for the suite's own uplift (True, the opt-in) or for
            i.i.d. pairs (False, the default).

    Returns:
        A :class:`SequentialSimulation`.
    """
    ps, dl = float(psi), float(delta)
    if not (math.isfinite(ps) and 0.0 < ps <= 1.0 and math.isfinite(dl) and abs(dl) <= ps):
        raise ValueError(f"need 0 < psi <= 1 and |delta| <= psi, got psi={psi!r}, delta={delta!r}")
    n, sims = as_count(n_max, "n_max"), as_count(n_sim, "n_sim")
    if n < 1 or sims < 1:
        raise ValueError("n_max and n_sim must be at least 1")
    gen, seed = resolve_rng(rng)
    p_reg, p_imp = (ps - dl) / 2.0, (ps + dl) / 2.0
    pop = n if without_replacement else None
    chunk = max(1, _CHUNK_ELEMENTS // n)
    stops, gates = [], []
    for start in range(0, sims, chunk):
        u = gen.random((min(chunk, sims - start), n))
        d = np.where(u < p_reg, -1.0, np.where(u < p_reg + p_imp, 1.0, 0.0))
        res = sequential_decisions(
            d,
            alpha=alpha,
            margin=margin,
            n_candidates=n_candidates,
            population_size=pop,
            futility_after=futility_after,
            prior=prior,
            suite_size=n,
        )
        stops.append(res.stop)
        gates.append(np.where(res.gate == "undecided", GATES[5], res.gate))
    stop, gate = np.concatenate(stops), np.concatenate(gates)
    mean = float(stop.mean())
    p90 = int(np.quantile(stop, 0.9, method="inverted_cdf"))
    mcse = float(stop.std(ddof=1) / math.sqrt(sims)) if sims > 1 else math.nan
    rates = tuple((g, float(np.mean(gate == g))) for g in GATES[1:])
    m = None if margin is None else float(margin)
    return SequentialSimulation(
        mean, p90, 2.0 * mean, 2 * p90, mcse, rates, ps, dl, n, float(alpha), m, sims, seed
    )
