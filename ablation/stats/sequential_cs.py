"""Confidence sequence for the uplift Δ, valid uniformly over the number of pairs run.

Each pair gives a per-task difference ``d`` in ``[-1, 1]`` (candidate − baseline), mapped to
``x = (d + 1)/2`` in ``[0, 1]``; the mean of x is ``m = (Δ + 1)/2``. For every candidate mean m on a
grid, two betting capital processes (Waudby-Smith & Ramdas 2024, "hedged capital")

    ``K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i(m)·(x_i − μ_i(m)))``,  ``K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i(m)·(x_i − μ_i(m)))``

are nonnegative martingales when m is the true mean. ``μ_i(m) = m`` for an infinite population
(i.i.d. pairs); for sampling without replacement from a suite of N tasks in random order,
``μ_i(m) = (N·m − Σ_{j<i} x_j)/(N − i + 1)`` is the mean of the tasks not yet run (Waudby-Smith &
Ramdas 2020), so the sequence closes on the suite's own uplift at n = N. The bets are the
predictable plug-in ``λ̇_i = √(2 log(2/α) / (σ̂²_{i−1}·i·log(1 + i)))`` with
``σ̂²_i = (1/4 + Σ_{j≤i}(x_j − μ̂_j)²)/(i + 1)``, ``μ̂_j = (1/2 + Σ_{k≤j} x_k)/(j + 1)``, truncated to
``λ⁺ = min(λ̇, ½/μ)`` and ``λ⁻ = min(λ̇, ½/(1 − μ))``, so no factor is below 1/2.

Every factor of ``K⁺`` falls as m grows and every factor of ``K⁻`` rises, so ``{m: K⁺ ≥ 2/α}`` is a
lower ray and ``{m: K⁻ ≥ 2/α}`` an upper ray. By Ville's inequality each ray contains the truth at
some n with probability ≤ α/2; what is left is an interval, and the running intersection of these
intervals covers Δ at every n at once with probability ≥ 1 − α. On the grid, the lower bound is the
largest grid point ``K⁺`` has rejected (with every point below it), which is conservative by less
than one grid step; likewise the upper bound. Without replacement, the bounds are also cut to the
range the remaining tasks allow: ``[(Σd − (N − n))/N, (Σd + (N − n))/N]``, certain knowledge.

If the two rays ever meet (the running intersection is empty: the data contradict the random
order, probability ≤ α), the interval falls back to that certain range and ``is_empty`` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._betting import (
    DEFAULT_GRID_SIZE,
    _check_grid_size,
    _check_population,
    combine_bounds,
    feasible_range,
    grid_means,
    log_factors,
    margin_indices,
    next_sums,
    rejected_above,
    rejected_below,
)
from ablation.stats._common import check_level
from ablation.stats._results import ConfidenceInterval
from ablation.stats.sequential import as_difference, check_diffs

__all__ = [
    "ConfidenceSequenceResult",
    "UpliftConfidenceSequence",
    "uplift_confidence_sequence",
]

_CHUNK_ELEMENTS = 2_000_000
Decision = Literal["non-inferior", "inferior", "inconclusive"]


@dataclass(frozen=True, slots=True, eq=False)
class ConfidenceSequenceResult:
    """Result of :func:`uplift_confidence_sequence`: the bounds after every pair.

    Attributes:
        lower: Lower bound for Δ after pair 1, 2, ... (read-only; same shape as the input).
        upper: Upper bound for Δ after every pair.
        estimate: Running mean of the differences.
        alpha: The bounds hold at every n at once with probability ≥ ``1 − alpha``.
        population_size: Suite size N for sampling without replacement, else ``None``.
        method: Name of the procedure.
    """

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    estimate: NDArray[np.float64]
    alpha: float
    population_size: int | None
    method: str


@dataclass(frozen=True, slots=True, eq=False)
class UpliftConfidenceSequence:
    """Incremental anytime-valid confidence sequence for Δ (see the module docstring).

    Immutable: ``update(d)`` returns the state after one more pair in O(grid_size) vectorised work,
    so the state is a pure function of the ordered differences and :meth:`from_outcomes` rebuilds it
    on resume. The interval shown after a data-dependent stop is valid: coverage holds at every n at
    once. Assumes the pairs are i.i.d. (``population_size=None``) or that the N tasks of the suite
    are run in a uniformly random order (``population_size=N``); then the target is the suite's
    own uplift and the interval is a single point at n = N.

    Attributes:
        alpha: Miscoverage over all n at once; each side is tested at ``alpha/2``, so a bound
            decides a one-sided claim (non-inferiority) at level ``alpha/2``.
        population_size: Suite size N for sampling without replacement, else ``None``.
        grid_size: Number of candidate uplifts, evenly spaced on ``[-1, 1]``.
        pairs: Pairs seen.
        sum_diff: Sum of the differences.
        lower_index: Grid index of the running lower bound (−1: none rejected yet).
        upper_index: Grid index of the running upper bound (``grid_size``: none rejected yet).
    """

    alpha: float = 0.05
    population_size: int | None = None
    grid_size: int = DEFAULT_GRID_SIZE
    pairs: int = 0
    sum_diff: float = 0.0
    abs_sum_diff: float = 0.0
    integral: bool = True
    feasible_low: float = -1.0
    feasible_high: float = 1.0
    sum_x: float = 0.0
    sum_sq: float = 0.0
    lower_index: int = -1
    upper_index: int | None = None
    log_capital_up: NDArray[np.float64] | None = None
    log_capital_down: NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        check_level(self.alpha, "alpha")
        object.__setattr__(self, "population_size", _check_population(self.population_size))
        g = _check_grid_size(self.grid_size)
        if self.upper_index is None:
            object.__setattr__(self, "upper_index", g)
        for name in ("log_capital_up", "log_capital_down"):
            arr = getattr(self, name)
            arr = np.zeros(g) if arr is None else np.array(arr, dtype=np.float64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def from_outcomes(
        cls,
        outcomes: ArrayLike,
        *,
        alpha: float = 0.05,
        population_size: int | None = None,
        grid_size: int = DEFAULT_GRID_SIZE,
    ) -> UpliftConfidenceSequence:
        """Replay a stored sequence of per-pair differences in run order."""
        state = cls(alpha=alpha, population_size=population_size, grid_size=grid_size)
        return state.update_many(outcomes)

    def update(self, outcome: float) -> UpliftConfidenceSequence:
        """The state after one more pair with difference ``outcome`` in ``[-1, 1]``."""
        d = as_difference(outcome)
        if self.population_size is not None and self.pairs >= self.population_size:
            raise ValueError(f"all {self.population_size} tasks of the suite were already seen")
        assert self.log_capital_up is not None and self.log_capital_down is not None
        assert self.upper_index is not None
        x, t, sums = (d + 1.0) / 2.0, self.pairs + 1.0, (self.sum_x, self.sum_sq)
        f_up, f_down = log_factors(
            grid_means(self.grid_size), x, t, sums, self.alpha, self.population_size
        )
        up, down = self.log_capital_up + f_up, self.log_capital_down + f_down
        sum_x, sum_sq = next_sums(sums, x, t)
        thr = math.log(2.0 / self.alpha)
        sum_d, abs_sum, integral = self.sum_diff + d, self.abs_sum_diff + abs(d), self.integral
        integral = integral and d.is_integer()
        feas = feasible_range(sum_d, abs_sum, integral, t, self.population_size)
        return UpliftConfidenceSequence(
            self.alpha,
            self.population_size,
            self.grid_size,
            self.pairs + 1,
            sum_d,
            abs_sum,
            integral,
            max(self.feasible_low, float(feas[0])),
            min(self.feasible_high, float(feas[1])),
            float(sum_x),
            float(sum_sq),
            max(self.lower_index, int(rejected_below(up, thr))),
            min(self.upper_index, int(rejected_above(down, thr))),
            up,
            down,
        )

    def update_many(self, outcomes: ArrayLike) -> UpliftConfidenceSequence:
        """The state after the given pairs, bit-identical to calling :meth:`update` on each."""
        return trajectory(self, outcomes)[0]

    def _raw(self) -> tuple[float, float, bool, tuple[float, float]]:
        feas = (self.feasible_low, self.feasible_high)
        low, high, empty = combine_bounds(self.lower_index, self.upper_index, feas, self.grid_size)
        return float(low), float(high), bool(empty), (float(feas[0]), float(feas[1]))

    @property
    def estimate(self) -> float:
        """Running mean of the differences (0.0 before the first pair)."""
        return self.sum_diff / self.pairs if self.pairs else 0.0

    @property
    def is_empty(self) -> bool:
        """Whether the running intersection became empty (an event of probability ≤ alpha)."""
        return self._raw()[2]

    @property
    def interval(self) -> ConfidenceInterval:
        """The current interval for Δ (the certain range if the intersection became empty)."""
        low, high, empty, feas = self._raw()
        return ConfidenceInterval(*feas) if empty else ConfidenceInterval(low, high)

    def decision(self, margin: float) -> Decision:
        """Non-inferiority read off the sequence: lower > −margin, or upper < −margin.

        ``"inferior"`` wins when both hold (an empty intersection). Each claim has error
        probability ≤ ``alpha/2`` at any stopping time.
        """
        m = float(margin)
        if not (math.isfinite(m) and 0.0 <= m < 1.0):
            raise ValueError(f"margin must be in [0, 1), got {margin!r}")
        k_lo, k_hi = margin_indices(m, self.grid_size)
        assert self.upper_index is not None
        _, _, _, (feas_lo, feas_hi) = self._raw()
        if self.upper_index < k_hi or feas_hi < -m:
            return "inferior"
        if self.lower_index > k_lo or feas_lo > -m:
            return "non-inferior"
        return "inconclusive"


def trajectory(
    state: UpliftConfidenceSequence, diffs: ArrayLike
) -> tuple[UpliftConfidenceSequence, NDArray[Any], NDArray[Any], Any, Any]:
    """Run ``state`` through ``diffs``: the final state and, after every pair, the running grid
    indices ``(lower, upper)`` and the certain range ``(low, high)``.

    All pairs' factors are computed at once in chunks and accumulated with ``cumsum``, the same
    floating-point additions in the same order as one :meth:`~UpliftConfidenceSequence.update` at
    a time, so resuming a stored campaign costs O(pairs × grid) vectorised work.
    """
    d = check_diffs(diffs).reshape(-1)
    n_pop, g, steps = state.population_size, state.grid_size, d.size
    if n_pop is not None and state.pairs + steps > n_pop:
        raise ValueError(f"{state.pairs + steps} pairs exceed the population size {n_pop}")
    x = (d + 1.0) / 2.0
    t = state.pairs + np.arange(1.0, steps + 1.0)
    sum_x = np.cumsum(np.concatenate(([state.sum_x], x)))
    sum_sq = np.cumsum(np.concatenate(([state.sum_sq], (x - (0.5 + sum_x[1:]) / (t + 1.0)) ** 2)))
    sum_d = np.cumsum(np.concatenate(([state.sum_diff], d)))
    abs_sum = np.cumsum(np.concatenate(([state.abs_sum_diff], np.abs(d))))
    integral = np.logical_and.accumulate(np.concatenate(([state.integral], d == np.round(d))))
    assert state.log_capital_up is not None and state.log_capital_down is not None
    assert state.upper_index is not None
    up, down = state.log_capital_up, state.log_capital_down
    lows, highs = np.empty(steps, dtype=np.int64), np.empty(steps, dtype=np.int64)
    low, high, thr = state.lower_index, state.upper_index, math.log(2.0 / state.alpha)
    chunk = max(1, _CHUNK_ELEMENTS // g)
    for s in range(0, steps, chunk):
        e = min(steps, s + chunk)
        sums = (sum_x[s:e], sum_sq[s:e])
        f_up, f_down = log_factors(grid_means(g), x[s:e], t[s:e], sums, state.alpha, n_pop)
        cum_up = np.cumsum(np.vstack([up, f_up]), axis=0)[1:]
        cum_down = np.cumsum(np.vstack([down, f_down]), axis=0)[1:]
        lows[s:e] = np.maximum.accumulate(np.append(low, rejected_below(cum_up, thr)))[1:]
        highs[s:e] = np.minimum.accumulate(np.append(high, rejected_above(cum_down, thr)))[1:]
        up, down, low, high = cum_up[-1], cum_down[-1], int(lows[e - 1]), int(highs[e - 1])
    feas = feasible_range(sum_d[1:], abs_sum[1:], integral[1:], t, n_pop)
    feas_low = np.maximum.accumulate(
        np.append(state.feasible_low, np.broadcast_to(feas[0], t.shape))
    )
    feas_high = np.minimum.accumulate(
        np.append(state.feasible_high, np.broadcast_to(feas[1], t.shape))
    )
    final = UpliftConfidenceSequence(
        state.alpha,
        n_pop,
        g,
        state.pairs + steps,
        float(sum_d[-1]),
        float(abs_sum[-1]),
        bool(integral[-1]),
        float(feas_low[-1]),
        float(feas_high[-1]),
        float(sum_x[-1]),
        float(sum_sq[-1]),
        low,
        high,
        up,
        down,
    )
    return final, lows, highs, feas_low[1:], feas_high[1:]


def uplift_confidence_sequence(
    diffs: ArrayLike,
    *,
    population_size: int | None = None,
    alpha: float = 0.05,
    grid_size: int = DEFAULT_GRID_SIZE,
) -> ConfidenceSequenceResult:
    """Running anytime-valid bounds for Δ after every pair, for plotting against pairs run.

    Identical, pair by pair, to the ``interval`` of :class:`UpliftConfidenceSequence` fed the same
    differences. A 2-D input ``(campaigns, pairs)`` gives one row of bounds per campaign.

    Args:
        diffs: Per-task differences in ``[-1, 1]`` in the order they were run: -1/0/+1 for one run
            per task, or differences of pass fractions with repeated runs.
        population_size: Suite size N when the tasks are a random-order run through a finite suite
            (the bounds then close on the suite's uplift at n = N); ``None`` for i.i.d. pairs.
        alpha: Miscoverage over all n at once (each side ``alpha/2``).
        grid_size: Number of candidate uplifts on ``[-1, 1]`` (resolution ``2/(grid_size − 1)``).

    Returns:
        A :class:`ConfidenceSequenceResult` whose arrays have the shape of ``diffs``.

    Raises:
        ValueError: On values outside ``[-1, 1]``, NaN, more pairs than ``population_size`` or an
            invalid level.
    """
    a = check_level(alpha, "alpha")
    d = check_diffs(diffs)
    if d.ndim not in (1, 2) or d.shape[-1] == 0:
        raise ValueError(f"diffs must be 1-D or 2-D (campaigns, pairs), got shape {d.shape}")
    start = UpliftConfidenceSequence(alpha=a, population_size=population_size, grid_size=grid_size)
    rows = d.reshape(-1, d.shape[-1])
    lower, upper = np.empty(rows.shape), np.empty(rows.shape)
    for r, row in enumerate(rows):
        _, lows, highs, feas_low, feas_high = trajectory(start, row)
        low, high, empty = combine_bounds(lows, highs, (feas_low, feas_high), start.grid_size)
        lower[r] = np.where(empty, feas_low, low)
        upper[r] = np.where(empty, feas_high, high)
    estimate = np.cumsum(d, axis=-1) / np.arange(1, d.shape[-1] + 1)
    arrays = [lower.reshape(d.shape), upper.reshape(d.shape), estimate]
    for arr in arrays:
        arr.setflags(write=False)
    n_pop = start.population_size
    kind = "infinite population" if n_pop is None else f"without replacement, N = {n_pop}"
    name = f"hedged-capital betting confidence sequence ({kind}, grid {grid_size}, running intersection)"
    return ConfidenceSequenceResult(arrays[0], arrays[1], arrays[2], a, n_pop, name)
