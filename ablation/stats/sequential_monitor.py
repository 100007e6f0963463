"""Stopping rules for a campaign monitored after every pair.

:class:`SequentialMonitor` combines, per candidate, with ``α_c = alpha / n_candidates``:

1. *critical regression*: the first regression on a task marked critical decides at once (an
   outcome of -1: with repeated runs, the baseline passed every run and the candidate failed every
   run, the critical gate's own rule; a lower pass fraction that is flaky in an arm is no critical
   regression there, and so does not stop the campaign);
2. *significant regression*: the e-process of :func:`regression_eprocess` reaches ``1/α_c``
   (error ≤ α_c under H0: P(regression | discordant) ≤ 1/2, by Ville's inequality);
3. *inferior* / *non-inferior* (when a margin M is set): the anytime-valid confidence sequence for
   Δ at level ``1 − 2·α_c`` has upper bound < −M / lower bound > −M (each claim error ≤ α_c,
   matching the fixed-n convention "90% interval ↔ one-sided 5% test" of STATISTICS.md §7);
   *non-inferior*, the one stop that can pass, waits until every critical task of the suite
   (``critical_total``) has run, so a campaign never passes on critical tasks it did not run;
4. *futility*: nothing decided after ``futility_after`` pairs;
5. *end of suite*: all ``suite_size`` (default ``population_size``) tasks ran and nothing decided.

Gates are checked in this order after every pair and the first that fires decides; the decision is
final. Pairs that complete after it (in flight at concurrency > 1) still enter the statistics.
Bonferroni across K candidates is valid for e-processes and confidence sequences under any
dependence between candidates (they share the baseline) and any stopping rule: each candidate's
crossing event has probability ≤ α/K by Ville's inequality, and a union bound adds them up.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ablation.stats._betting import DEFAULT_GRID_SIZE
from ablation.stats._common import as_count, check_level
from ablation.stats._results import ConfidenceInterval
from ablation.stats.sequential import CRITICAL_REGRESSION, SequentialRegressionTest, as_difference
from ablation.stats.sequential_cs import UpliftConfidenceSequence

__all__ = ["GATES", "MonitorState", "SequentialMonitor", "apart"]

GATES = (
    "critical_regression",
    "regression",
    "inferior",
    "non_inferior",
    "futility",
    "end_of_suite",
)


def apart(x: float, y: float) -> tuple[str, str]:
    """``x`` and ``y`` signed with four decimals, or with up to eight as tell two different
    numbers apart, else each in its shortest exact form (a bound of ``-0.19999999999999996``
    beside ``-margin = -0.2`` is not written ``-0.2000`` twice, nor the margin
    ``-0.20000000000000001``); equal numbers stay at four (a zero is ``+0.0000``, of either sign)."""
    x, y = x + 0.0, y + 0.0  # -0.0 + 0.0 is 0.0
    for places in range(4, 9):
        a, b = f"{x:+.{places}f}", f"{y:+.{places}f}"
        if a != b or x == y:
            return a, b
    return f"{x:+}", f"{y:+}"


@dataclass(frozen=True, slots=True)
class MonitorState:
    """Snapshot of a :class:`SequentialMonitor` after some pairs.

    Attributes:
        pairs: Pairs (tasks) seen.
        regressions: Tasks where the candidate did worse (b).
        improvements: Tasks where the candidate did better (c).
        e_value: Current e-value of the regression test.
        interval: Anytime-valid interval for Δ at level ``1 − 2·alpha_per_candidate``.
        estimate: Running mean difference.
        decided: Whether a gate has decided.
        gate: The deciding gate (one of :data:`GATES`), or ``None``.
        decided_at: Number of pairs seen when the gate decided, or ``None``.
        reason: One sentence saying why (or that nothing has decided yet).
        alpha_per_candidate: ``alpha / n_candidates``.
    """

    pairs: int
    regressions: int
    improvements: int
    e_value: float
    interval: ConfidenceInterval
    estimate: float
    decided: bool
    gate: str | None
    decided_at: int | None
    reason: str
    alpha_per_candidate: float


@dataclass(frozen=True, slots=True, eq=False)
class SequentialMonitor:
    """Stopping rules for one candidate against the baseline, updated after every pair.

    Immutable: ``update`` returns a new monitor, so the monitor after n pairs is a pure function of
    the first n ``(outcome, critical)`` pairs and :meth:`replay` rebuilds it on resume. An outcome is
    the per-task difference candidate − baseline in ``[-1, 1]``; with repeated runs it is the
    difference of pass fractions: the confidence sequence uses it as is, the regression e-process
    uses its sign (a sign test on tasks).

    Attributes:
        alpha: Family-wise error rate over all candidates.
        margin: Non-inferiority margin M in pass-rate units (e.g. 0.02), or ``None`` for no
            non-inferiority gate.
        n_candidates: Number of candidates compared with the baseline (Bonferroni split).
        population_size: Suite size N: the interval is for the suite's own uplift (tasks run in
            random order, without replacement) and the campaign ends at N; ``None``: i.i.d. pairs.
        futility_after: Stop as inconclusive after this many pairs, or ``None``.
        prior: Beta prior of the regression e-process (see :func:`regression_eprocess`).
        grid_size: Grid of the confidence sequence.
        regression: The regression e-process state.
        uplift: The confidence-sequence state.
        critical_regressions: Regressions seen on critical tasks.
        gate: The deciding gate, or ``None``.
        decided_at: Pairs seen when the gate decided.
        reason: Why it decided.
        critical_total: Critical tasks in the suite (0: none, or the critical gate is off); a
            *non-inferior* stop waits until that many critical pairs have been seen. The wait is
            a stopping time fixed by the flags, not the outcomes, so every claim keeps its level.
        critical_seen: Critical pairs seen.
        suite_size: Pairs at which the campaign ends (end of suite) when the interval treats the
            pairs as i.i.d. (``population_size=None``): the population claim of the fixed-n
            test, about new tasks like these, with no finite-population shrinkage at the end of
            the suite. ``None``: ``population_size``.
    """

    alpha: float = 0.05
    margin: float | None = None
    n_candidates: int = 1
    population_size: int | None = None
    futility_after: int | None = None
    prior: tuple[float, float] = (1.0, 1.0)
    grid_size: int = DEFAULT_GRID_SIZE
    regression: SequentialRegressionTest | None = None
    uplift: UpliftConfidenceSequence | None = None
    critical_regressions: int = 0
    gate: str | None = None
    decided_at: int | None = None
    reason: str = "No gate has decided yet."
    critical_total: int = 0
    critical_seen: int = 0
    suite_size: int | None = None

    def __post_init__(self) -> None:
        a = check_level(self.alpha, "alpha")
        k = as_count(self.n_candidates, "n_candidates")
        if k < 1:
            raise ValueError("n_candidates must be at least 1")
        if not a / k < 0.5:
            raise ValueError("alpha / n_candidates must be below 0.5")
        if self.margin is not None and not (
            math.isfinite(float(self.margin)) and 0.0 <= float(self.margin) < 1.0
        ):
            raise ValueError(f"margin must be in [0, 1), got {self.margin!r}")
        if self.futility_after is not None and as_count(self.futility_after, "futility_after") < 1:
            raise ValueError("futility_after must be at least 1")
        if self.regression is None:
            object.__setattr__(self, "regression", SequentialRegressionTest(prior=self.prior))
        if self.uplift is None:
            cs = UpliftConfidenceSequence(
                alpha=2.0 * a / k, population_size=self.population_size, grid_size=self.grid_size
            )
            object.__setattr__(self, "uplift", cs)

    @classmethod
    def replay(
        cls,
        outcomes: Iterable[float],
        critical: Iterable[bool] | None = None,
        **config: Any,
    ) -> SequentialMonitor:
        """Rebuild a monitor from stored outcomes (and per-pair critical flags) in run order.

        ``config`` takes the constructor's settings (``alpha``, ``margin``, ...); the same settings
        and outcomes give the same monitor, decision and reason as the live run.
        """
        return cls(**config).update_many(outcomes, critical)

    def update_many(
        self, outcomes: Iterable[float], critical: Iterable[bool] | None = None
    ) -> SequentialMonitor:
        """The monitor after the given pairs in order (``critical``: one flag per pair or None)."""
        outs = list(outcomes)
        flags = [False] * len(outs) if critical is None else [bool(f) for f in critical]
        if len(flags) != len(outs):
            raise ValueError("critical must have one flag per outcome")
        monitor = self
        for d, flag in zip(outs, flags, strict=True):
            monitor = monitor.update(d, critical=flag)
        return monitor

    @property
    def alpha_per_candidate(self) -> float:
        """``alpha / n_candidates``."""
        return self.alpha / self.n_candidates

    @property
    def pairs(self) -> int:
        """Pairs seen."""
        assert self.uplift is not None
        return self.uplift.pairs

    @property
    def decided(self) -> bool:
        """Whether a gate has decided."""
        return self.gate is not None

    def update(self, outcome: float, *, critical: bool = False) -> SequentialMonitor:
        """The monitor after one more pair; ``critical`` marks a task whose regression decides."""
        d = as_difference(outcome)
        assert self.regression is not None and self.uplift is not None
        reg, cs = self.regression.update(d), self.uplift.update(d)
        hit = bool(critical) and d <= CRITICAL_REGRESSION
        seen = self.critical_seen + bool(critical)
        gate, at, reason = self.gate, self.decided_at, self.reason
        if gate is None:
            found = self._decide(reg, cs, hit, seen)
            if found is not None:
                gate, reason = found
                at = cs.pairs
        return SequentialMonitor(
            self.alpha,
            self.margin,
            self.n_candidates,
            self.population_size,
            self.futility_after,
            self.prior,
            self.grid_size,
            reg,
            cs,
            self.critical_regressions + hit,
            gate,
            at,
            reason,
            self.critical_total,
            seen,
            self.suite_size,
        )

    def _decide(
        self,
        reg: SequentialRegressionTest,
        cs: UpliftConfidenceSequence,
        critical_hit: bool,
        critical_seen: int,
    ) -> tuple[str, str] | None:
        n, a = cs.pairs, self.alpha_per_candidate
        if critical_hit:
            return GATES[0], f"Pair {n} is a regression on a critical task; one decides at once."
        if reg.rejected(a):
            return GATES[1], (
                f"Significant regression: the e-value reached 1/alpha = {1 / a:.4g} after {n} "
                f"pairs ({reg.b} regressions, {reg.c} improvements); under no regression this "
                f"happens with probability at most {a:.4g} at any stopping time (Ville)."
            )
        if self.margin is not None:
            verdict, ci = cs.decision(self.margin), cs.interval
            if verdict == "inferior":
                high, bound = apart(ci.high, -self.margin)
                return GATES[2], (
                    f"Inferior: the upper bound of the anytime-valid interval for the uplift, "
                    f"{high}, fell below -margin = {bound} after {n} pairs."
                )
            if verdict == "non-inferior" and critical_seen >= self.critical_total:
                waited = (
                    f" (a pass waits for all {self.critical_total} critical tasks, run by then)"
                    if self.critical_total else ""
                )
                low, bound = apart(ci.low, -self.margin)
                return GATES[3], (
                    f"Non-inferior: the lower bound of the anytime-valid interval for the uplift, "
                    f"{low}, is above -margin = {bound} after {n} pairs{waited}."
                )
        if self.futility_after is not None and n >= self.futility_after:
            return GATES[4], f"Futility: no gate decided within {self.futility_after} pairs."
        end = self.suite_size if self.suite_size is not None else self.population_size
        if end is not None and n >= end:
            return GATES[5], f"End of suite: all {n} tasks ran and no gate decided."
        return None

    @property
    def state(self) -> MonitorState:
        """A plain snapshot for reports and for checking a replay."""
        assert self.regression is not None and self.uplift is not None
        return MonitorState(
            self.pairs,
            self.regression.b,
            self.regression.c,
            self.regression.e_value,
            self.uplift.interval,
            self.uplift.estimate,
            self.decided,
            self.gate,
            self.decided_at,
            self.reason,
            self.alpha_per_candidate,
        )
