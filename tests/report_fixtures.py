"""Realistic :class:`AblationReport` instances built directly from the model.

The numbers are those the analysis would produce for the stated tables (exact McNemar, Wilson,
Tango score intervals, seeded percentile bootstrap), computed once with scipy/statsmodels and
written down here, so renderer and gate tests need neither the analysis module nor a campaign.

* :func:`make_report` - 62 tasks, 60 pairs (2 excluded), 4 regressions (2 critical), 13
  improvements, three categories, latency, cost, two quality scorers, drill-down details.
* :func:`hostile_report` - the same with an HTML/script payload as task id, category, output,
  error, agent name, label and exclusion reason.
* :func:`repeated_report` - three runs per task, flaky tasks, no Tango interval.
* :func:`noninferiority_report` - n = 1000, b = 30, c = 20, margin 0.02: inconclusive.
* :func:`simple_report` - a bare report for a given table (gate tests).
"""

from __future__ import annotations

from typing import Any

from ablation.config import GatePolicy, Provenance
from ablation.report import (
    AblationReport,
    ArmSummary,
    CategoryBreakdown,
    ContinuousComparison,
    ExcludedItem,
    FlakyTask,
    Interval,
    LatencyComparison,
    McNemarSummary,
    NamedInterval,
    NonInferiority,
    PairDetail,
    PairTable,
    QualityComparison,
    RepeatedRuns,
    TrialView,
    Uplift,
)

XSS = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"

#: The policy under which the snapshot reports are gated.
SNAPSHOT_POLICY = GatePolicy(
    critical_must_not_regress=True,
    noninferiority_margin=0.05,
    no_significant_regression=True,
    max_latency_ratio=1.5,
)

BOOT = "paired bootstrap, percentile (10000 resamples)"
TANGO = "Tango score interval"
WILSON = "Wilson score interval"
EXACT = "exact McNemar (binomial, two-sided)"

REGRESSIONS = [
    "code/parse-date-004",
    "code/refactor-012",
    "code/sql-injection-guard",
    "math/word-problem-09",
]
CRITICAL = ["code/refactor-012", "code/sql-injection-guard"]
IMPROVEMENTS = sorted(
    [
        "math/add-fractions-002",
        "math/percent-change-011",
        "math/unit-convert-007",
        "math/word-problem-03",
        "math/word-problem-14",
        "code/fizzbuzz-variant-001",
        "code/json-schema-010",
        "code/regex-email-006",
        "code/sort-stable-015",
        "code/two-sum-008",
        "retrieval/wiki-capital-004",
        "retrieval/wiki-date-012",
        "retrieval/wiki-population-007",
    ]
)


def iv(low: float, high: float, method: str, level: float = 0.95) -> Interval:
    """Shorthand for an :class:`Interval`."""
    return Interval(low=low, high=high, confidence_level=level, method=method)


def niv(name: str, low: float, high: float, method: str, level: float = 0.95) -> NamedInterval:
    """Shorthand for an uplift interval of ``uplift.intervals`` (the bootstrap is secondary)."""
    return NamedInterval(name=name, low=low, high=high, confidence_level=level, method=method,
                         secondary=name == "bootstrap")  # fmt: skip


def provenance(**overrides: Any) -> Provenance:
    """Provenance of the snapshot campaign (fixed times so renders are byte-stable)."""
    values: dict[str, Any] = {
        "seed": 20240611,
        "n_resamples": 10_000,
        "confidence_level": 0.95,
        "alpha": 0.05,
        "runs": 1,
        "on_error": "fail",
        "methods": {
            "mcnemar": EXACT,
            "uplift_ci": BOOT,
            "uplift_score_ci": TANGO,
            "pass_rate_ci": WILSON,
            "latency": "log ratio, paired t; Wilcoxon signed-rank",
        },
        "versions": {"ablation": "0.1.0", "python": "3.11.7", "numpy": "2.4.6", "scipy": "1.17.1"},
        "suite_fingerprint": "9f2c4e61b7a05d3389e1c2f4a6b8d0e2f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1",
        "baseline_agent": "agents/support.py:v1",
        "candidate_agent": "agents/support.py:v2",
        "started_at": "2025-06-11T09:14:02+00:00",
        "finished_at": "2025-06-11T09:31:47+00:00",
        "campaign_id": "c-2f9a41",
        "baseline_reused_from": "c-1e77d0",
        "baseline_ran_at": "2025-06-10T17:02:11+00:00",
        "source": "campaign",
        "labels": {"model": "gpt-x-2025-06", "prompt": "v2-concise"},
    }
    values.update(overrides)
    return Provenance(**values)


def _details() -> list[PairDetail]:
    long_output = "def refactored(x):\n" + "".join(f"    step_{i} = x + {i}\n" for i in range(120))
    out: list[PairDetail] = [
        PairDetail(
            task_id="code/refactor-012",
            kind="regression",
            category="code",
            critical=True,
            baseline=TrialView(
                status="completed",
                passed=True,
                output="def refactored(x):\n    return sum(range(x))",
                latency_s=3.41,
                quality={"rubric": 0.9, "code_quality": 0.82},
            ),
            candidate=TrialView(
                status="completed",
                passed=False,
                output=long_output,
                latency_s=2.87,
                quality={"rubric": 0.4, "code_quality": 0.55},
            ),
        ),
        PairDetail(
            task_id="code/sql-injection-guard",
            kind="regression",
            category="code",
            critical=True,
            baseline=TrialView(
                status="completed",
                passed=True,
                output="cursor.execute('SELECT * FROM users WHERE id = ?', (uid,))",
                latency_s=5.02,
                quality={"rubric": 1.0},
            ),
            candidate=TrialView(
                status="error",
                passed=False,
                error="TimeoutError: upstream model did not answer in 30 s",
                latency_s=None,
                attempts=3,
            ),
        ),
        PairDetail(
            task_id="code/parse-date-004",
            kind="regression",
            category="code",
            baseline=TrialView(status="completed", passed=True, output="2025-03-01", latency_s=1.9),
            candidate=TrialView(
                status="completed", passed=False, output="03/01/2025", latency_s=1.4
            ),
        ),
        PairDetail(
            task_id="math/word-problem-09",
            kind="regression",
            category="math",
            baseline=TrialView(
                status="completed",
                passed=True,
                output={"answer": 42, "unit": "apples"},
                latency_s=2.2,
            ),
            candidate=TrialView(
                status="completed",
                passed=False,
                output={"answer": 41, "unit": "apples"},
                latency_s=1.7,
            ),
        ),
    ]
    for tid in IMPROVEMENTS:
        cat = tid.split("/")[0]
        out.append(
            PairDetail(
                task_id=tid,
                kind="improvement",
                category=cat,
                baseline=TrialView(
                    status="completed", passed=False, output="I am not sure.", latency_s=4.1
                ),
                candidate=TrialView(
                    status="completed",
                    passed=True,
                    output=f"Answer for {tid} | with a pipe",
                    latency_s=3.3,
                    quality={"rubric": 0.8},
                ),
            )
        )
    return out


def make_report(**overrides: Any) -> AblationReport:
    """The main snapshot report (no gates evaluated; see :data:`SNAPSHOT_POLICY`)."""
    values: dict[str, Any] = {
        "n_tasks": 62,
        "n_paired": 60,
        "excluded": [
            ExcludedItem(
                task_id="retrieval/wiki-019", reason="no candidate result (missing observation)"
            ),
            ExcludedItem(
                task_id="code/lint-fix-031", reason="no baseline result (missing observation)"
            ),
        ],
        "table": PairTable(both_pass=38, regressions=4, improvements=13, both_fail=5),
        "regressions": REGRESSIONS,
        "improvements": IMPROVEMENTS,
        "critical_regressions": CRITICAL,
        "baseline": ArmSummary(
            agent="agents/support.py:v1",
            n_trials=60,
            passes=42,
            pass_rate=0.70,
            pass_rate_ci=iv(0.574913, 0.801018, WILSON),
            errors=1,
            timeouts=0,
            retried=2,
            latency_mean_s=4.82,
            latency_median_s=4.1,
            latency_p90_s=8.7,
            cost_total=0.7011,
            cost_mean=0.0123,
            quality_means={"rubric": 0.71, "code_quality": 0.74},
        ),
        "candidate": ArmSummary(
            agent="agents/support.py:v2",
            n_trials=60,
            passes=51,
            pass_rate=0.85,
            pass_rate_ci=iv(0.738854, 0.919026, WILSON),
            errors=2,
            timeouts=1,
            retried=3,
            latency_mean_s=4.11,
            latency_median_s=3.6,
            latency_p90_s=7.2,
            cost_total=0.8037,
            cost_mean=0.0141,
            quality_means={"rubric": 0.78, "code_quality": 0.72},
        ),
        "mcnemar": McNemarSummary(
            b=4, c=13, pvalue=0.049041748046875, midp_pvalue=0.0308837890625, method=EXACT
        ),
        "uplift": Uplift(
            estimate=0.15,
            relative=0.2142857,
            ci=iv(0.0166667, 0.2833333, BOOT),
            headline="bootstrap",
            intervals=[
                niv("tango", 0.0167733, 0.2855470, TANGO),
                niv("bootstrap", 0.0166667, 0.2833333, BOOT),
            ],
            se_paired=0.0659335,
            se_unpaired=0.075,
            correlation=0.2342674,
            n=60,
        ),
        "latency": LatencyComparison(
            metric="latency_s",
            n_pairs=57,
            n_left_out=3,
            left_out_reason="one arm did not complete (error or timeout)",
            baseline_mean=4.82,
            candidate_mean=4.11,
            mean_difference=-0.71,
            ci=iv(-1.12, -0.29, BOOT),
            wilcoxon_pvalue=0.0031,
            wilcoxon_method="Wilcoxon signed-rank (exact)",
            geometric_mean_ratio=0.873,
            ratio_ci=iv(0.812, 0.939, "paired t on log ratio"),
            ratio_pvalue=0.0004,
            median_ratio=0.86,
            share_faster=0.72,
        ),
        "cost": ContinuousComparison(
            metric="cost",
            n_pairs=57,
            n_left_out=3,
            left_out_reason="one arm did not complete (error or timeout)",
            baseline_mean=0.0123,
            candidate_mean=0.0141,
            mean_difference=0.0018,
            ci=iv(0.0009, 0.0027, BOOT),
            wilcoxon_pvalue=0.0008,
            wilcoxon_method="Wilcoxon signed-rank (normal approximation)",
        ),
        "quality": {
            "rubric": QualityComparison(
                metric="rubric",
                n_pairs=55,
                n_left_out=5,
                left_out_reason="scorer error or incomplete trial",
                baseline_mean=0.71,
                candidate_mean=0.78,
                mean_difference=0.07,
                ci=iv(0.03, 0.11, BOOT),
                wilcoxon_pvalue=0.0021,
                wilcoxon_method="Wilcoxon signed-rank (Pratt)",
                scorer_errors_baseline=1,
                scorer_errors_candidate=2,
            ),
            "code_quality": QualityComparison(
                metric="code_quality",
                n_pairs=25,
                n_left_out=35,
                left_out_reason="scorer applies to code tasks only",
                baseline_mean=0.74,
                candidate_mean=0.72,
                mean_difference=-0.02,
                ci=iv(-0.06, 0.02, BOOT),
                wilcoxon_pvalue=0.41,
                wilcoxon_method="Wilcoxon signed-rank (Pratt)",
            ),
        },
        "metrics": {
            "tokens": ContinuousComparison(
                metric="tokens",
                n_pairs=57,
                n_left_out=3,
                left_out_reason="one arm did not complete (error or timeout)",
                baseline_mean=1520.0,
                candidate_mean=1710.0,
                mean_difference=190.0,
                ci=iv(120.0, 262.0, BOOT),
                wilcoxon_pvalue=0.00002,
                wilcoxon_method="Wilcoxon signed-rank (normal approximation)",
            )
        },
        "categories": [
            CategoryBreakdown(
                category="code",
                n=25,
                table=PairTable(both_pass=15, regressions=3, improvements=5, both_fail=2),
                regressions=[
                    "code/parse-date-004",
                    "code/refactor-012",
                    "code/sql-injection-guard",
                ],
                improvements=[t for t in IMPROVEMENTS if t.startswith("code/")],
                baseline_pass_rate=0.72,
                candidate_pass_rate=0.80,
                uplift=0.08,
                ci=iv(-0.154738, 0.309004, TANGO),
                mcnemar_pvalue=0.7265625,
                adjusted_pvalue=0.75,
            ),
            CategoryBreakdown(
                category="math",
                n=20,
                table=PairTable(both_pass=13, regressions=1, improvements=5, both_fail=1),
                regressions=["math/word-problem-09"],
                improvements=[t for t in IMPROVEMENTS if t.startswith("math/")],
                baseline_pass_rate=0.70,
                candidate_pass_rate=0.90,
                uplift=0.20,
                ci=iv(-0.049129, 0.436908, TANGO),
                mcnemar_pvalue=0.21875,
                adjusted_pvalue=0.375,
            ),
            CategoryBreakdown(
                category="retrieval",
                n=15,
                table=PairTable(both_pass=10, regressions=0, improvements=3, both_fail=2),
                regressions=[],
                improvements=[t for t in IMPROVEMENTS if t.startswith("retrieval/")],
                baseline_pass_rate=0.6666667,
                candidate_pass_rate=0.8666667,
                uplift=0.20,
                ci=iv(-0.044660, 0.451855, TANGO),
                mcnemar_pvalue=0.25,
                adjusted_pvalue=0.375,
            ),
        ],
        "noninferiority": NonInferiority(
            margin=0.05,
            alpha=0.05,
            statistic=2.8112357,
            pvalue=0.0024676,
            ci=iv(0.0396704, 0.2628392, TANGO, level=0.90),
            decision="non-inferior",
            method="Tango/Nam score test",
        ),
        "minimum_detectable_effect": 0.093,
        "summary": "improvement",
        "details": _details(),
        "provenance": provenance(),
    }
    values.update(overrides)
    return AblationReport(**values)


def hostile_report() -> AblationReport:
    """The main report with an HTML/script payload wherever user text can appear."""
    base = make_report()
    evil_id = f"evil/{XSS}"
    details = list(base.details)
    details[0] = details[0].model_copy(
        update={
            "task_id": evil_id,
            "category": XSS,
            "baseline": TrialView(status="completed", passed=True, output=XSS, latency_s=1.0),
            "candidate": TrialView(
                status="error", passed=False, output={"html": XSS}, error=f"ValueError: {XSS}"
            ),
        }
    )
    replaced = "code/refactor-012"
    categories = list(base.categories)
    categories[0] = categories[0].model_copy(
        update={
            "category": XSS,
            "regressions": [evil_id, *(t for t in categories[0].regressions if t != replaced)],
        }
    )
    critical = [evil_id, *(t for t in base.critical_regressions if t != replaced)]
    return base.model_copy(
        update={
            "regressions": sorted([evil_id, *(t for t in base.regressions if t != replaced)]),
            "critical_regressions": critical,
            "excluded": [*base.excluded, ExcludedItem(task_id=XSS, reason=f"bad row: {XSS}")],
            "categories": categories,
            "details": details,
            "baseline": base.baseline.model_copy(update={"agent": XSS}),
            "provenance": base.provenance.model_copy(
                update={"candidate_agent": XSS, "labels": {XSS: XSS}}
            ),
        }
    )


def repeated_report() -> AblationReport:
    """Three runs per task: per-task fractions, paired t, flaky tasks; no Tango interval."""
    base = make_report()
    return base.model_copy(
        update={
            "runs": 3,
            "uplift": Uplift(
                estimate=0.15,
                relative=0.2142857,
                ci=iv(0.041, 0.262, "cluster bootstrap over tasks, percentile (10000 resamples)"),
                headline="bootstrap",
                intervals=[
                    niv("t", 0.038, 0.262, "paired t on per-task pass fractions"),
                    niv("bootstrap", 0.041, 0.262,
                        "cluster bootstrap over tasks, percentile (10000 resamples)"),
                ],
                se_paired=0.056,
                se_unpaired=0.071,
                correlation=0.41,
                n=60,
            ),
            "repeated": RepeatedRuns(
                runs=3,
                n_tasks=60,
                mean_difference=0.15,
                t_ci=iv(0.038, 0.262, "paired t on per-task pass fractions"),
                t_pvalue=0.0093,
                cluster_ci=iv(0.041, 0.262, "cluster bootstrap over tasks, percentile"),
                icc_baseline=0.40,
                icc_candidate=0.25,
                design_effect_baseline=1.8,
                design_effect_candidate=1.5,
                stable_regressions=["code/refactor-012"],
                stable_improvements=["math/word-problem-03", "code/two-sum-008"],
            ),
            "flaky": [
                FlakyTask(
                    task_id="code/parse-date-004",
                    baseline_passes=3,
                    baseline_runs=3,
                    candidate_passes=1,
                    candidate_runs=3,
                    flaky_in=["candidate"],
                ),
                FlakyTask(
                    task_id="retrieval/wiki-date-012",
                    baseline_passes=1,
                    baseline_runs=3,
                    candidate_passes=2,
                    candidate_runs=3,
                    flaky_in=["baseline", "candidate"],
                    pvalue=1.0,
                    method="Fisher exact",
                ),
            ],
            "provenance": base.provenance.model_copy(update={"runs": 3}),
        }
    )


def simple_report(
    both_pass: int,
    regressions: int,
    improvements: int,
    both_fail: int,
    **overrides: Any,
) -> AblationReport:
    """A bare report for the given table; intervals are placeholders (gate tests only)."""
    n = both_pass + regressions + improvements + both_fail
    reg_ids = [f"t-reg-{i:03d}" for i in range(regressions)]
    imp_ids = [f"t-imp-{i:03d}" for i in range(improvements)]
    d = (improvements - regressions) / n
    base_rate = (both_pass + regressions) / n
    cand_rate = (both_pass + improvements) / n
    values: dict[str, Any] = {
        "n_tasks": n,
        "n_paired": n,
        "table": PairTable(
            both_pass=both_pass,
            regressions=regressions,
            improvements=improvements,
            both_fail=both_fail,
        ),
        "regressions": reg_ids,
        "improvements": imp_ids,
        "baseline": ArmSummary(
            n_trials=n,
            passes=both_pass + regressions,
            pass_rate=base_rate,
            pass_rate_ci=iv(max(base_rate - 0.05, 0), min(base_rate + 0.05, 1), WILSON),
        ),
        "candidate": ArmSummary(
            n_trials=n,
            passes=both_pass + improvements,
            pass_rate=cand_rate,
            pass_rate_ci=iv(max(cand_rate - 0.05, 0), min(cand_rate + 0.05, 1), WILSON),
        ),
        "mcnemar": McNemarSummary(
            b=regressions, c=improvements, pvalue=1.0, midp_pvalue=1.0, method=EXACT
        ),
        "uplift": Uplift(
            estimate=d,
            ci=iv(d - 0.05, d + 0.05, BOOT),
            headline="bootstrap",
            intervals=[niv("tango", d - 0.05, d + 0.05, TANGO), niv("bootstrap", d - 0.05, d + 0.05, BOOT)],
            n=n,
        ),
        "summary": "no significant difference",
        "provenance": provenance(baseline_reused_from=None, baseline_ran_at=None, labels={}),
    }
    values.update(overrides)
    return AblationReport(**values)


def noninferiority_report(margin: float = 0.02) -> AblationReport:
    """n = 1000, b = 30, c = 20 (STATISTICS.md section 7): NI at 0.02 is inconclusive."""
    return simple_report(
        920,
        30,
        20,
        30,
        mcnemar=McNemarSummary(b=30, c=20, pvalue=0.2026388, midp_pvalue=0.1607796, method=EXACT),
        noninferiority=NonInferiority(
            margin=margin,
            alpha=0.05,
            statistic=1.3715283,
            pvalue=0.0869396,
            ci=iv(-0.0221074, 0.0016733, TANGO, level=0.90),
            decision="inconclusive",
            method="exact unconditional non-inferiority test (Berger-Boos p-value, Tango/Nam "
            "score ordering)",
        ),
    )
