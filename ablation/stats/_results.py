"""Result types of :mod:`ablation.stats`.

Every public function returns a frozen dataclass (or a plain float / array where stated). Field names
follow SciPy where a SciPy analogue exists (``statistic``, ``pvalue``, ``confidence_interval.low`` /
``.high``). Every result carries a human-readable ``method`` string naming the procedure actually
used, including any fallback taken on degenerate input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BootstrapResult",
    "ConfidenceInterval",
    "DifferenceResult",
    "McNemarResult",
    "NonInferiorityResult",
    "OneSidedTTest",
    "PairingSummary",
    "ProportionResult",
    "RatioResult",
    "SampleSizeResult",
    "TTestResult",
    "TestResult",
    "TostResult",
    "VarianceComponents",
]


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]``.

    Attributes:
        low: Lower limit (may be ``-inf`` for a one-sided interval).
        high: Upper limit (may be ``inf`` for a one-sided interval).
    """

    low: float
    high: float

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low

    def contains(self, value: float) -> bool:
        """Whether ``low <= value <= high``."""
        return self.low <= value <= self.high


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """Result of :func:`ablation.stats.mcnemar`.

    Attributes:
        statistic: ``min(b, c)`` for the two-sided exact / mid-p test, ``b`` for a one-sided exact /
            mid-p test, the chi-squared value for the two-sided asymptotic tests, or the signed z value
            (positive when the candidate is better) for a one-sided asymptotic test.
        pvalue: The p-value, in ``[0, 1]``; exactly ``1.0`` when ``b + c == 0``.
        method: Name of the test, e.g. ``"exact McNemar (binomial, two-sided)"``.
        alternative: ``"two-sided"``, ``"less"`` (candidate worse) or ``"greater"`` (candidate better).
        b: Regressions (baseline passed, candidate failed).
        c: Improvements (baseline failed, candidate passed).
    """

    statistic: float
    pvalue: float
    method: str
    alternative: str
    b: int
    c: int


@dataclass(frozen=True, slots=True)
class ProportionResult:
    """A single proportion ``k / n`` with a confidence interval.

    Attributes:
        estimate: ``k / n`` (``0.0`` when ``n == 0``).
        confidence_interval: The interval, within ``[0, 1]``.
        method: Name of the interval method.
        k: Number of successes.
        n: Number of trials.
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    method: str
    k: int
    n: int


@dataclass(frozen=True, slots=True)
class DifferenceResult:
    """A paired difference (candidate − baseline) with an interval.

    Binary outcomes (:func:`ablation.stats.paired_difference_interval`): ``Δ = (c − b) / n``, with
    the interval within ``[-1, 1]``. Numeric metrics (:func:`ablation.stats.mean_difference_interval`):
    the mean of ``y − x`` in the metric's units.

    Attributes:
        estimate: The observed difference (``0.0`` for an empty 2x2 table).
        confidence_interval: The interval.
        method: Name of the interval method.
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    method: str


@dataclass(frozen=True, slots=True)
class NonInferiorityResult:
    """Result of a non-inferiority test: :func:`ablation.stats.noninferiority_test` (paired
    binary) or :func:`ablation.stats.metric_noninferiority` (numeric metric).

    Attributes:
        statistic: Binary: the Tango/Nam restricted-MLE score statistic ``Z(−margin)``. Metric: the
            one-sided paired t statistic against the shifted null.
        pvalue: One-sided p-value of H0 "inferior by at least the margin" (binary: the exact
            Berger–Boos p-value, never below the asymptotic score p-value).
        margin: The non-inferiority margin (a positive number in the units of the outcome).
        alpha: One-sided significance level.
        decision: ``"non-inferior"``, ``"regression"`` or ``"inconclusive"``.
        confidence_interval: The two-sided ``1 − 2·alpha`` interval for the difference
            (candidate − baseline): Tango score interval (binary) or paired t interval (metric).
        method: Name of the test.
    """

    statistic: float
    pvalue: float
    margin: float
    alpha: float
    decision: Literal["non-inferior", "regression", "inconclusive"]
    confidence_interval: ConfidenceInterval
    method: str


@dataclass(frozen=True, slots=True)
class PairingSummary:
    """What pairing bought for a paired binary comparison.

    Attributes:
        se_paired: Standard error of ``Δ̂`` using the pairing, ``sqrt((b+c) − (b−c)²/n) / n``.
        se_unpaired: The (wrong for paired data) independent-samples standard error
            ``sqrt(p1(1−p1)/n + p2(1−p2)/n)``.
        correlation: Phi coefficient of the 2x2 table (``0.0`` when a margin is zero).
    """

    se_paired: float
    se_unpaired: float
    correlation: float


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """A bootstrap confidence interval.

    Attributes:
        estimate: The statistic on the observed data.
        confidence_interval: The bootstrap interval.
        standard_error: Standard deviation (ddof=1) of the bootstrap distribution.
        method: Name of the procedure, including any fallback (e.g. BCa → percentile).
        n_resamples: Number of bootstrap resamples.
        confidence_level: Two-sided confidence level.
        seed: The integer seed when ``rng`` was an int, else ``None``.
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    standard_error: float
    method: str
    n_resamples: int
    confidence_level: float
    seed: int | None


@dataclass(frozen=True, slots=True)
class TTestResult:
    """Result of :func:`ablation.stats.paired_t_test`.

    Attributes:
        statistic: The t statistic (``0.0`` when all differences are zero; ``±inf`` when the
            differences are constant and non-zero).
        pvalue: The p-value.
        df: Degrees of freedom ``n − 1`` (``0`` when ``n < 2``).
        estimate: Mean difference ``mean(y − x)``.
        standard_error: Standard error of the mean difference.
        confidence_interval: Interval for the mean difference.
        method: Name of the test, noting degenerate handling.
    """

    statistic: float
    pvalue: float
    df: int
    estimate: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    method: str


@dataclass(frozen=True, slots=True)
class TestResult:
    """A generic test result.

    Attributes:
        statistic: The test statistic (meaning documented by the producing function).
        pvalue: The p-value.
        method: Name of the test.
        n: Number of observations that entered the test.
    """

    __test__ = False  # not a pytest test class

    statistic: float
    pvalue: float
    method: str
    n: int


@dataclass(frozen=True, slots=True)
class RatioResult:
    """Result of :func:`ablation.stats.log_ratio_interval`.

    Attributes:
        estimate: Geometric-mean ratio ``exp(mean(log(y / x)))``.
        confidence_interval: t interval on the log scale, exponentiated.
        pvalue: Two-sided p-value of the paired t test on the log ratios (H0: ratio 1).
        median_ratio: ``exp(median(log(y / x)))``.
        n: Number of pairs.
        method: Name of the procedure.
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    median_ratio: float
    n: int
    method: str


@dataclass(frozen=True, slots=True)
class VarianceComponents:
    """One-way random-effects variance components.

    Attributes:
        between: Between-group variance ``σ²_b`` (truncated at 0).
        within: Within-group variance ``σ²_w`` (the within mean square).
        icc: Intra-class correlation ``σ²_b / (σ²_b + σ²_w)`` (``0.0`` when both are 0).
        k_mean: Mean group size ``N / G``.
    """

    between: float
    within: float
    icc: float
    k_mean: float


@dataclass(frozen=True, slots=True)
class SampleSizeResult:
    """Result of :func:`ablation.stats.sample_size_paired`.

    Attributes:
        n: Required number of pairs, ``ceil(n_exact)``.
        n_exact: The unrounded Connor (1987) value.
        psi: Discordant probability ``ψ = p10 + p01``.
        delta: Target difference ``δ = p01 − p10``.
        alpha: Significance level.
        power: Target power.
        method: Name of the formula.
        exact_power: Exact power of the exact McNemar test at ``n`` (Connor's n), by enumeration
            of the trinomial (:func:`ablation.stats.exact_mcnemar_power`); ``None`` if not computed
            (Connor's n above that function's limit of 10⁷ pairs; ``method`` then says so).
        n_exact_test: Smallest n at which the exact McNemar test reaches ``power``
            (:func:`ablation.stats.exact_sample_size_paired`); ``None`` when Connor's n exceeds
            the search limit of :func:`ablation.stats.sample_size_paired`.
    """

    n: int
    n_exact: float
    psi: float
    delta: float
    alpha: float
    power: float
    method: str
    exact_power: float | None = None
    n_exact_test: int | None = None


@dataclass(frozen=True, slots=True)
class OneSidedTTest:
    """One of the two one-sided paired t tests of :func:`ablation.stats.tost_paired`.

    Attributes:
        statistic: ``(mean(d) − bound) / se``.
        pvalue: One-sided p-value.
        df: Degrees of freedom ``n − 1``.
        bound: The equivalence bound tested (``low`` or ``upp``).
        alternative: ``"greater"`` (H1: mean d > low) or ``"less"`` (H1: mean d < upp).
    """

    statistic: float
    pvalue: float
    df: int
    bound: float
    alternative: str


@dataclass(frozen=True, slots=True)
class TostResult:
    """Result of :func:`ablation.stats.tost_paired` (two one-sided tests, Schuirmann 1987).

    Attributes:
        pvalue: ``max`` of the two one-sided p-values; equivalence at level α when ``≤ α``.
        lower: Test of H0: mean d ≤ low against H1: mean d > low.
        upper: Test of H0: mean d ≥ upp against H1: mean d < upp.
        estimate: Mean of ``x − y`` (statsmodels' order; pass the candidate first for candidate − baseline).
        method: Name of the procedure.
    """

    pvalue: float
    lower: OneSidedTTest
    upper: OneSidedTTest
    estimate: float
    method: str
