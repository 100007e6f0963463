"""Anytime-valid test for "significant regression", for campaigns looked at after every pair.

A fixed-n p-value is valid at one pre-set n. Looked at after every pair, with a stop at the first
p ≤ α, it raises false alarms far above α (STATISTICS.md §10). The tools of the sequential modules
stay valid at any data-dependent stopping time, because they are built on nonnegative
supermartingales and Ville's (1939) inequality ``P(∃n: E_n ≥ 1/α) ≤ α``:

* here, :func:`regression_eprocess` / :class:`SequentialRegressionTest`: a mixture likelihood
  ratio (Robbins 1970; the mSPRT of Johari, Koomen, Pekelis & Walsh 2022) on the discordant pairs
  for H0: P(regression | discordant) ≤ 1/2;
* :mod:`ablation.stats.sequential_cs`: a confidence sequence for the uplift Δ (Waudby-Smith &
  Ramdas 2020, 2024);
* :mod:`ablation.stats.sequential_monitor`: the stopping rules that combine them;
* :mod:`ablation.stats.sequential_sim`: the same rules over many campaigns at once, for planning.

State objects are frozen: ``update`` returns a new state, so a state is a pure function of the
ordered outcomes and is rebuilt exactly by replaying them (``from_outcomes``). An outcome is a
per-task difference ``d = candidate − baseline`` in ``[-1, 1]``: ``-1`` a regression, ``+1`` an
improvement, ``0`` a concordant pair, or a difference of pass fractions with repeated runs.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats import _dist
from ablation.stats._common import as_count, check_level

__all__ = ["EValueResult", "SequentialRegressionTest", "regression_eprocess"]

_ALTERNATIVES = ("less", "greater", "two-sided")
_LN2 = math.log(2.0)
_TAIL_FLOOR = 1e-280  # below this, betainc loses relative accuracy: use the continued fraction


@dataclass(frozen=True, slots=True)
class EValueResult:
    """Result of :func:`regression_eprocess`.

    Attributes:
        e_value: The e-value ``E`` (``inf`` when ``log_e_value`` exceeds the float range).
        log_e_value: ``log E``, exact to floating-point accuracy even at ``b + c = 10**6``.
        b: Regressions (discordant pairs where the candidate is worse).
        c: Improvements.
        alternative: ``"less"`` (H1: candidate worse), ``"greater"`` or ``"two-sided"``.
        prior: The Beta shape parameters of the mixing prior before truncation.
        method: Name of the procedure.
    """

    e_value: float
    log_e_value: float
    b: int
    c: int
    alternative: str
    prior: tuple[float, float]
    method: str

    def rejects(self, alpha: float) -> bool:
        """Whether ``E ≥ 1/alpha`` (a level-``alpha`` rejection by Ville's inequality)."""
        return self.log_e_value >= -math.log(check_level(alpha, "alpha"))


def _check_prior(prior: tuple[float, float]) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in prior)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be two Beta shape parameters, got {prior!r}") from None
    if not (math.isfinite(a) and math.isfinite(b) and a > 0.0 and b > 0.0):
        raise ValueError(f"prior shape parameters must be finite and > 0, got {prior!r}")
    return a, b


def _check_eprocess_alternative(alternative: str) -> str:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    return alternative


#: The outcome of a critical regression: the baseline passed every run of the task and the
#: candidate failed every run (the critical gate's rule); a lower pass fraction above it is not one.
CRITICAL_REGRESSION = -1.0


def as_difference(value: object) -> float:
    """A per-task difference as a float in ``[-1, 1]`` (bools and non-finite values refused)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"an outcome must be a number in [-1, 1], got {value!r}")
    d = float(value)
    if not (math.isfinite(d) and -1.0 <= d <= 1.0):
        raise ValueError(f"an outcome must be in [-1, 1] (candidate - baseline), got {value!r}")
    return d


def check_diffs(diffs: ArrayLike) -> NDArray[np.float64]:
    """Per-task differences as a float array, each finite and in ``[-1, 1]``."""
    d = np.asarray(diffs, dtype=np.float64)
    if not np.all(np.isfinite(d) & (np.abs(d) <= 1.0)):
        raise ValueError("every difference must be finite and in [-1, 1] (candidate - baseline)")
    return d


def _log_betainc_cf(a: float, b: float, x: float) -> float:
    """``log I_x(a, b)`` from the continued fraction of the incomplete beta (modified Lentz).

    Used only deep in the tail (``I_x < 1e-280``), where ``x < (a + 1)/(a + b + 2)`` and the
    fraction converges in few terms (Press et al., *Numerical Recipes*, §6.4).
    """
    tiny = 1e-300

    def guard(v: float) -> float:
        return v if abs(v) > tiny else tiny

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, 1_000_000):
        aa = m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m))
        d = 1.0 / guard(1.0 + aa * d)
        c = guard(1.0 + aa / c)
        h *= d * c
        aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))
        d = 1.0 / guard(1.0 + aa * d)
        c = guard(1.0 + aa / c)
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    front = a * math.log(x) + b * math.log1p(-x) - math.log(a) - float(_dist.betaln(a, b))
    return front + math.log(h)


def _log_tail_half(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """``log P(Beta(a, b) > 1/2) = log I_{1/2}(b, a)``, elementwise and without underflow."""
    aa, bb = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    tail = np.atleast_1d(_dist.incbet(bb, aa, 0.5))
    with np.errstate(divide="ignore"):
        out = np.log(tail)
    deep = np.flatnonzero(tail < _TAIL_FLOOR)
    flat_a, flat_b = np.atleast_1d(aa).ravel(), np.atleast_1d(bb).ravel()
    for i in deep:
        out.flat[i] = _log_betainc_cf(float(flat_b[i]), float(flat_a[i]), 0.5)
    return out.reshape(aa.shape)


def _log_e_one_sided(b: ArrayLike, c: ArrayLike, prior: tuple[float, float]) -> NDArray[np.float64]:
    """``log ∫_{1/2}^1 (2p)^b (2(1−p))^c π(p) dp`` for π the Beta prior truncated to p ≥ 1/2."""
    a0, a1 = prior
    bb = np.asarray(b, dtype=np.float64)
    cc = np.asarray(c, dtype=np.float64)
    post = _dist.betaln(a0 + bb, a1 + cc) + _log_tail_half(a0 + bb, a1 + cc)
    norm = float(_dist.betaln(a0, a1)) + float(_log_tail_half(a0, a1))
    return np.asarray((bb + cc) * _LN2 + post - norm, dtype=np.float64)


def log_e_values(
    b: ArrayLike, c: ArrayLike, prior: tuple[float, float], alternative: str = "less"
) -> NDArray[np.float64]:
    """Vectorised ``log E`` of :func:`regression_eprocess` for arrays of counts (no checks)."""
    if alternative == "less":
        return _log_e_one_sided(b, c, prior)
    if alternative == "greater":
        return _log_e_one_sided(c, b, prior)
    return np.asarray(
        np.logaddexp(_log_e_one_sided(b, c, prior), _log_e_one_sided(c, b, prior)) - _LN2
    )


def regression_eprocess(
    b: int,
    c: int,
    *,
    prior: tuple[float, float] = (1.0, 1.0),
    alternative: str = "less",
) -> EValueResult:
    """Mixture-likelihood-ratio e-value for "significant regression" on the discordant pairs.

    Given the discordant pairs, each is a regression with probability p. For
    ``alternative="less"`` (H1: candidate worse) the e-value is

    ``E = ∫_{1/2}^{1} (2p)^b (2(1−p))^c π(p) dp`` = ``2^(b+c) · B(a0+b, a1+c) · P(Beta(a0+b, a1+c) > ½)
    / (B(a0, a1) · P(Beta(a0, a1) > ½))``,

    with π the Beta(a0, a1) prior truncated to ``p ≥ 1/2`` (Robbins 1970; the mSPRT of Johari et al.
    2022). With the default uniform prior, ``E = Σ_{j≤b} C(n+1, j) / ((n+1)·C(n, b))``, ``n = b + c``.

    Validity under the whole composite null ``p ≤ 1/2``: one pair multiplies the likelihood ratio of
    a fixed q ≥ 1/2 by ``L = (2q)^X (2(1−q))^(1−X)``, and ``E_p[L] = 1 + (2p − 1)(2q − 1) ≤ 1`` when
    ``p ≤ 1/2 ≤ q``. So each ``q``-ratio is a nonnegative supermartingale under every null p (a
    martingale at p = 1/2), and so is their mixture over a prior on ``[1/2, 1]`` (Tonelli). This is why
    the prior must be truncated: mass on q < 1/2 would grow under p < 1/2. Concordant pairs multiply
    E by 1. Ville's inequality then gives ``P(sup_n E_n ≥ 1/α) ≤ α``: rejecting the first time
    E ≥ 1/α is a level-α test at any stopping time. The null only needs, for each discordant pair
    given the past, P(regression) ≤ 1/2, so it allows drift in ψ and the task mix.

    ``"greater"`` swaps the roles of b and c (H1: candidate better). ``"two-sided"`` is
    ``(E_less + E_greater)/2``, an e-process for H0: p = 1/2; with a symmetric prior it equals the
    untruncated Beta-binomial mixture ``2^n B(a0+b, a0+c)/B(a0, a0)``.

    Everything is computed in log space: ``log B`` by ``scipy.special.betaln`` and the truncation
    probability by ``scipy.special.betainc``, switching to the continued fraction of the incomplete
    beta in the deep tail, so ``b + c = 10**6`` is exact to rounding.

    Args:
        b: Regressions (baseline pass, candidate fail); with repeated runs, tasks whose mean
            difference is negative.
        c: Improvements; with repeated runs, tasks whose mean difference is positive.
        prior: Beta shape parameters ``(a0, a1)`` of the mixing prior on p before truncation.
            The default uniform prior on ``[1/2, 1]`` puts its weight on large effects; Beta(2, 2)
            and Beta(1, 1) had nearly the same power in simulation (STATISTICS.md §10).
        alternative: ``"less"`` (default, H1: candidate worse), ``"greater"`` or ``"two-sided"``.

    Returns:
        An :class:`EValueResult`.

    Raises:
        ValueError: On negative or non-integer counts, an invalid prior or alternative.
    """
    bb = as_count(b, "b")
    cc = as_count(c, "c")
    pr = _check_prior(prior)
    _check_eprocess_alternative(alternative)
    log_e = float(log_e_values(bb, cc, pr, alternative))
    e = math.exp(log_e) if log_e < 709.0 else math.inf
    name = f"mixture likelihood-ratio e-process, Beta{pr} prior truncated ({alternative})"
    return EValueResult(e, log_e, bb, cc, alternative, pr, name)


@dataclass(frozen=True, slots=True)
class SequentialRegressionTest:
    """Incremental form of :func:`regression_eprocess`, updated after every completed pair.

    Immutable: ``update`` returns a new state, so the state after n pairs is a pure function of the
    first n outcomes and :meth:`from_outcomes` rebuilds it exactly on resume. Only the sign of an
    outcome matters: with repeated runs the test is a sign test on tasks (a task whose pass fraction
    differs between arms counts as one discordant pair), i.e. H0 "a task is at least as likely to
    get better as worse", not a test of the mean difference.

    Attributes:
        prior: Beta shape parameters of the mixing prior (see :func:`regression_eprocess`).
        alternative: ``"less"`` (default), ``"greater"`` or ``"two-sided"``.
        pairs: Pairs (tasks) seen, concordant ones included.
        b: Discordant pairs where the candidate is worse.
        c: Discordant pairs where the candidate is better.
        log_e_value: ``log E`` now.
        max_log_e_value: ``max_{k ≤ pairs} log E_k``; a rejection is never withdrawn.
    """

    prior: tuple[float, float] = (1.0, 1.0)
    alternative: str = "less"
    pairs: int = 0
    b: int = 0
    c: int = 0
    log_e_value: float = 0.0
    max_log_e_value: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "prior", _check_prior(self.prior))
        _check_eprocess_alternative(self.alternative)

    @classmethod
    def from_outcomes(
        cls,
        outcomes: ArrayLike,
        *,
        prior: tuple[float, float] = (1.0, 1.0),
        alternative: str = "less",
    ) -> SequentialRegressionTest:
        """Replay a stored sequence of per-pair outcomes in order."""
        return cls(prior=prior, alternative=alternative).update_many(outcomes)

    def update(self, outcome: float) -> SequentialRegressionTest:
        """The state after one more pair with difference ``outcome`` (candidate − baseline)."""
        d = as_difference(outcome)
        b, c = self.b + (d < 0.0), self.c + (d > 0.0)
        if d == 0.0:
            log_e = self.log_e_value
        else:
            log_e = float(log_e_values(b, c, self.prior, self.alternative))
        return SequentialRegressionTest(
            self.prior,
            self.alternative,
            self.pairs + 1,
            b,
            c,
            log_e,
            max(self.max_log_e_value, log_e),
        )

    def update_many(self, outcomes: ArrayLike) -> SequentialRegressionTest:
        """The state after the given pairs, bit-identical to calling :meth:`update` on each."""
        d = check_diffs(outcomes).reshape(-1)
        b = self.b + np.cumsum(d < 0.0)
        c = self.c + np.cumsum(d > 0.0)
        disc = d != 0.0
        if not disc.any():
            return SequentialRegressionTest(
                self.prior,
                self.alternative,
                self.pairs + d.size,
                self.b,
                self.c,
                self.log_e_value,
                self.max_log_e_value,
            )
        log_e = log_e_values(b[disc], c[disc], self.prior, self.alternative)
        return SequentialRegressionTest(
            self.prior,
            self.alternative,
            self.pairs + d.size,
            int(b[-1]),
            int(c[-1]),
            float(log_e[-1]),
            max(self.max_log_e_value, float(np.max(log_e))),
        )

    @property
    def e_value(self) -> float:
        """The current e-value ``E`` (``inf`` beyond the float range)."""
        return math.exp(self.log_e_value) if self.log_e_value < 709.0 else math.inf

    def rejected(self, alpha: float) -> bool:
        """Whether E has reached ``1/alpha`` at some pair so far (Ville: P ≤ alpha under H0)."""
        return self.max_log_e_value >= -math.log(check_level(alpha, "alpha"))
