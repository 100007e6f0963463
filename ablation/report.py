"""The :class:`AblationReport` model and its parts.

A report is plain data (frozen pydantic models): it is built by :mod:`ablation.analysis`,
judged by :mod:`ablation.analysis.gates`, drawn by :mod:`ablation.render` and stored as JSON. Every
number that comes from a statistical method carries the method's name next to it.
"""

# No ``from __future__ import annotations``: pydantic reads the fields' types without parsing.

from typing import Annotated, Literal

from pydantic import BaseModel, Field, WithJsonSchema

from ablation.config import Provenance
from ablation.report_items import (
    FROZEN,
    ErrorGroup,
    ErrorSummary,
    GateResult,
    Interval,
    NamedInterval,
    PairDetail,
    SequentialPoint,
    SequentialSummary,
    TrialView,
    UpliftTest,
    no_items,
)

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "AblationReport",
    "ArmSummary",
    "CategoryBreakdown",
    "Claim",
    "ContinuousComparison",
    "ErrorGroup",
    "ErrorSummary",
    "ExcludedItem",
    "FlakyTask",
    "GateResult",
    "Interval",
    "LatencyComparison",
    "McNemarSummary",
    "NamedInterval",
    "NonInferiority",
    "PairDetail",
    "PairTable",
    "QualityComparison",
    "RepeatedRuns",
    "SequentialPoint",
    "SequentialSummary",
    "TrialView",
    "Uplift",
    "UpliftTest",
]

#: A float the statistics can make infinite, in the JSON schema a number or one of those strings.
MaybeInfinite = Annotated[
    float, WithJsonSchema({"anyOf": [{"type": "number"}, {"enum": ["Infinity", "-Infinity", "NaN"]}]})
]


class PairTable(BaseModel):
    """The paired 2x2 table: rows baseline (pass, fail), columns candidate (pass, fail)."""

    model_config = FROZEN

    both_pass: int = 0
    regressions: int = 0
    improvements: int = 0
    both_fail: int = 0

    @property
    def n(self) -> int:
        """Number of pairs in the table."""
        return self.both_pass + self.regressions + self.improvements + self.both_fail


class ExcludedItem(BaseModel):
    """A task (or one run of it) left out of the paired analysis, and why."""

    model_config = FROZEN

    task_id: str
    reason: str
    run: int | None = None


class ArmSummary(BaseModel):
    """What one arm did, on the pairs that entered the analysis."""

    model_config = FROZEN

    agent: str | None = None
    n_trials: int
    passes: int
    counted_trials: int | None = Field(default=None, description="trials pass_rate counts (passes "
                                       "of them): n_trials less those on_error='exclude' left out")  # fmt: skip
    pass_rate: float
    pass_rate_ci: Interval
    errors: int = 0
    timeouts: int = 0
    retried: int = 0
    latency_mean_s: float | None = None
    latency_median_s: float | None = None
    latency_p90_s: float | None = None
    cost_total: float | None = None
    cost_mean: float | None = None
    cost_trials: int | None = Field(default=None, description="trials cost_total and cost_mean count "
                                     "(None: none stated a cost; below n_trials: some did not)")  # fmt: skip
    cost_currency: str | None = Field(
        default=None, description="ISO 4217 currency of the arm's costs (None: unstated)")
    cost_source: str | None = Field(default=None, description="where the arm's costs come from: agent, "
                                    "price-db (genai-prices) or override ([tool.ablation.prices]); several joined by '+'")  # fmt: skip
    quality_means: dict[str, float | None] = Field(default_factory=dict)


class McNemarSummary(BaseModel):
    """McNemar's test on the discordant pairs (b regressions, c improvements)."""

    model_config = FROZEN

    b: int
    c: int
    pvalue: float
    midp_pvalue: float
    method: str
    midp_method: str = "mid-p McNemar (Lancaster 1961)"
    note: str | None = None


class Uplift(BaseModel):
    """Pass-rate uplift: candidate rate minus baseline rate, with intervals.

    ``se_paired`` is the standard error that pairing gives; ``se_unpaired`` is what two
    independent samples of the same size would have given; ``correlation`` is the correlation of
    the two arms' outcomes across tasks (phi for binary outcomes).

    ``intervals`` holds every registered interval method that applies
    (:mod:`ablation.analysis.uplift_intervals`), each with its ``name``: with one run per task
    ``tango``, ``tango_sparse`` (Tango computed at a wider level below 30 discordant pairs) and
    ``newcombe``; with repeated runs (the unit is the task's pass fraction) ``t``, marked
    ``secondary`` (it loses its level when few tasks change: docs/STATISTICS.md), and ``betting``
    (fixed-n); always ``bootstrap``, seeded and marked ``secondary`` (it under-covers with few
    discordant pairs and is [0, 0] when there are none). With no paired task the list is
    ``tango`` and ``bootstrap``, both [-1, 1]. ``ci`` is the headline interval, the entry named
    ``headline``, chosen by :func:`~ablation.analysis.uplift_intervals.choose_headline`:
    ``tango_sparse`` with one run per task, ``betting`` with repeated runs, ``bootstrap`` when
    tasks share families. ``tango_ci``, ``newcombe_ci``, ``t_ci`` and ``bootstrap_ci`` read the
    list by name (``None`` when absent); :meth:`others` gives the rest of it, each figure once."""

    model_config = FROZEN

    estimate: float
    relative: float | None = None
    ci: Interval
    headline: str | None = None
    intervals: list[NamedInterval] = Field(default_factory=no_items)
    se_paired: float | None = None
    se_unpaired: float | None = None
    correlation: float | None = None
    n: int

    def interval(self, name: str) -> Interval | None:
        """The listed interval produced by method ``name``, or ``None``."""
        return next((iv for iv in self.intervals if iv.name == name), None)

    def others(self) -> list[NamedInterval]:
        """The listed intervals but the headline, each figure once (:attr:`Interval.figure`)."""
        return [iv for iv in self.intervals if iv.figure != self.ci.figure]  # the headline's too

    @property
    def tango_ci(self) -> Interval | None:
        """The Tango score interval (one run per task), from ``intervals``."""
        return self.interval("tango")

    @property
    def newcombe_ci(self) -> Interval | None:
        """Newcombe's hybrid score interval (one run per task), from ``intervals``."""
        return self.interval("newcombe")

    @property
    def t_ci(self) -> Interval | None:
        """The paired t interval on per-task differences (repeated runs), from ``intervals``."""
        return self.interval("t")

    @property
    def bootstrap_ci(self) -> Interval | None:
        """The seeded bootstrap interval (secondary), from ``intervals``."""
        return self.interval("bootstrap")


class ContinuousComparison(BaseModel):
    """A paired comparison of a continuous metric (cost, a quality score, latency in seconds)."""

    model_config = FROZEN

    metric: str
    n_pairs: int
    n_left_out: int = 0
    left_out_reason: str | None = None
    baseline_mean: float | None = None
    candidate_mean: float | None = None
    mean_difference: float | None = None
    ci: Interval | None = None
    ci_note: str | None = None
    wilcoxon_pvalue: float | None = None
    wilcoxon_method: str | None = None
    t_pvalue: float | None = None
    hodges_lehmann: float | None = None


class LatencyComparison(ContinuousComparison):
    """Latency: mean difference in seconds plus the per-task log ratio (geometric-mean ratio).

    ``ratio_limit_pvalue``: one-sided p of H0 ratio <= ``ratio_limit`` (latency gate). Timed-out
    trials count at the cap (``censoring`` says which); ``timeouts_only_*`` count paired tasks
    where only that arm timed out. ``ratio_note`` says why the ratio fields are empty although
    two or more pairs have positive latencies (a ratio or bound past the float range)."""

    geometric_mean_ratio: float | None = None
    ratio_ci: Interval | None = None
    ratio_pvalue: float | None = None
    median_ratio: float | None = None
    share_faster: float | None = None
    ratio_note: str | None = None
    ratio_limit: float | None = None
    ratio_limit_pvalue: float | None = None
    ratio_limit_method: str | None = None
    timeouts_only_baseline: int = 0
    timeouts_only_candidate: int = 0
    censoring: str | None = None


class QualityComparison(ContinuousComparison):
    """A quality scorer's paired comparison, with that scorer's error counts per arm."""

    scorer_errors_baseline: int = 0
    scorer_errors_candidate: int = 0


class CategoryBreakdown(BaseModel):
    """The paired table and uplift of one category.

    ``ci`` is the uplift's interval with its method named in it: the Tango score interval with one
    run per task, ``None`` with repeated runs."""

    model_config = FROZEN

    category: str
    n: int
    table: PairTable
    regressions: list[str] = Field(default_factory=no_items)
    improvements: list[str] = Field(default_factory=no_items)
    baseline_pass_rate: float
    candidate_pass_rate: float
    uplift: float
    ci: Interval | None = None
    mcnemar_pvalue: float | None = None
    adjusted_pvalue: float | None = None


class FlakyTask(BaseModel):
    """A task whose outcome differs between runs inside at least one arm."""

    model_config = FROZEN

    task_id: str
    baseline_passes: int
    baseline_runs: int
    candidate_passes: int
    candidate_runs: int
    flaky_in: list[str]
    pvalue: float | None = None
    method: str | None = None


class RepeatedRuns(BaseModel):
    """Summary of a campaign with ``runs > 1``: the task is the unit of analysis."""

    model_config = FROZEN

    runs: int
    n_tasks: int
    mean_difference: float
    t_ci: Interval
    t_pvalue: float
    cluster_ci: Interval | None = None
    icc_baseline: float | None = None
    icc_candidate: float | None = None
    design_effect_baseline: float | None = None
    design_effect_candidate: float | None = None
    between_var_baseline: float | None = None
    within_var_baseline: float | None = None
    between_var_candidate: float | None = None
    within_var_candidate: float | None = None
    stable_regressions: list[str] = Field(default_factory=no_items)
    stable_improvements: list[str] = Field(default_factory=no_items)


class NonInferiority(BaseModel):
    """Tango/Nam score test of H0: uplift <= -margin (of a metric: the one-sided paired t test,
    whose ``statistic`` is infinite when the differences have zero variance off the margin)."""

    model_config = FROZEN

    margin: float
    alpha: float
    statistic: MaybeInfinite
    pvalue: float
    ci: Interval
    decision: Literal["non-inferior", "regression", "inconclusive"]
    method: str


#: The JSON report's layout version (``AblationReport.schema_version``).
REPORT_SCHEMA_VERSION = 3

#: What the data show, in words (``AblationReport.summary``).
Claim = Literal["improvement", "regression", "no significant difference", "no discordant pairs", "no paired tasks"]


class AblationReport(BaseModel):
    """The paired comparison of a candidate against a baseline.

    ``regressions`` and ``improvements`` are sorted task ids; ``critical_regressions`` lists
    the critical ones first for the reader; ``n_critical`` counts the paired critical tasks and
    ``critical_excluded`` names the critical tasks left out of the pairing. ``summary`` says in
    words what the data show (``"improvement"``, ``"regression"`` or ``"no significant
    difference"`` at ``alpha``; ``"no discordant pairs"``, or ``"no paired tasks"`` when nothing
    was paired); with several candidates an improvement is claimed only when
    ``improvement_holm_pvalue`` is below alpha.
    ``verdict`` is the release-gate verdict, never adjusted for the number of candidates.
    """

    model_config = FROZEN

    n_tasks: int
    n_paired: int
    n_critical: int = 0
    runs: int = 1
    excluded: list[ExcludedItem] = Field(default_factory=no_items)
    table: PairTable
    regressions: list[str] = Field(default_factory=no_items)
    improvements: list[str] = Field(default_factory=no_items)
    critical_regressions: list[str] = Field(default_factory=no_items)
    critical_flaky: list[str] = Field(default_factory=no_items)
    critical_excluded: list[str] = Field(
        default_factory=no_items,
        description="sorted ids of the critical tasks left out of the pairing as a whole (an excluded entry "
        "without a run: missing, in one arm only, no completed trial in an arm); the critical gate cannot check "
        "them and is inconclusive, unless a paired critical regression fails it. n_critical counts the paired critical tasks only",
    )
    baseline: ArmSummary
    candidate: ArmSummary
    mcnemar: McNemarSummary
    uplift: Uplift
    latency: LatencyComparison | None = None
    cost: ContinuousComparison | None = None
    quality: dict[str, QualityComparison] = Field(default_factory=dict)
    metrics: dict[str, ContinuousComparison] = Field(default_factory=dict)
    categories: list[CategoryBreakdown] = Field(default_factory=no_items)
    flaky: list[FlakyTask] = Field(default_factory=no_items)
    repeated: RepeatedRuns | None = None
    noninferiority: NonInferiority | None = None
    minimum_detectable_effect: float | None = None
    minimum_detectable_effect_method: str | None = None
    metric_noninferiority: dict[str, NonInferiority] = Field(default_factory=dict)
    errors: ErrorSummary | None = None
    errored_regressions: list[str] = Field(default_factory=no_items)
    zero_regression_upper_bound: float | None = None
    summary: Claim
    uplift_test: UpliftTest | None = None
    improvement_holm_pvalue: float | None = Field(
        default=None,
        description="with several candidates against one baseline: the one-sided p for "
        "improvement (uplift_test.pvalue_better) Holm-adjusted across them; None for one candidate",
    )
    improvement_holm_candidates: int | None = None
    gates: list[GateResult] = Field(default_factory=no_items)
    verdict: Literal["pass", "fail"] = "pass"
    verdict_note: str | None = None
    notes: list[str] = Field(
        default_factory=no_items, description="sentences outside the gates, each naming its kind: 'Also changed: ' "
        "a quality score, tokens, cost, requests or a tool's calls per task (Wilcoxon, Holm across them); why costs were "
        "not compared; 'Look-alike ids: ' (compare) unpaired ids equal once NFC-normalised and stripped, with the files",
    )
    details: list[PairDetail] = Field(default_factory=no_items)
    provenance: Provenance
    sequential: SequentialSummary | None = None
    #: Version of this JSON layout; raised when a field changes meaning or is removed.
    schema_version: int = REPORT_SCHEMA_VERSION
    #: Which JSON document this is (``ablation schema`` lists every kind ``--format json`` writes).
    document: Literal["report"] = "report"

    @property
    def exit_code(self) -> int:
        """0 when every gate holds, 2 when one fails (the CLI's convention)."""
        return 0 if self.verdict == "pass" else 2
