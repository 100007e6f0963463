"""Release gates: critical regressions, non-inferiority, significant regression, Holm, exit codes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from report_fixtures import (
    SNAPSHOT_POLICY,
    TANGO,
    iv,
    make_report,
    noninferiority_report,
    repeated_report,
    simple_report,
)
from scipy import stats as sps

from ablation.analysis.gates import (
    GATE_COMPLETENESS,
    GATE_CRITICAL,
    GATE_INVENTORY,
    GATE_LATENCY,
    GATE_NONINFERIORITY,
    GATE_REGRESSION,
    evaluate_gates,
    exit_code_for,
)
from ablation.config import GatePolicy
from ablation.errors import ConfigError
from ablation.report import Interval, LatencyComparison, McNemarSummary, NonInferiority, PairTable


def _gate(report, name):
    matches = [g for g in report.gates if g.name == name]
    assert len(matches) == 1, [g.name for g in report.gates]
    return matches[0]


def _latency(gmr: float, low: float, high: float, pvalue: float | None = None) -> LatencyComparison:
    return LatencyComparison(
        metric="latency_s",
        n_pairs=80,
        geometric_mean_ratio=gmr,
        ratio_ci=Interval(
            low=low, high=high, confidence_level=0.95, method="paired t on log ratio"
        ),
        ratio_pvalue=pvalue,
    )


# --------------------------------------------------------------------------- critical tasks
def test_critical_regression_fails_even_when_mcnemar_p_is_one() -> None:
    report = simple_report(
        50,
        3,
        3,
        4,
        critical_regressions=["t-reg-001"],
        mcnemar=McNemarSummary(b=3, c=3, pvalue=1.0, midp_pvalue=1.0, method="exact McNemar"),
    )
    judged = evaluate_gates(report, GatePolicy(no_significant_regression=True))
    gate = _gate(judged, GATE_CRITICAL)
    assert gate.status == "fail"
    assert gate.tasks == ["t-reg-001"]
    assert "t-reg-001" in gate.evidence and "whatever the p-value" in gate.evidence
    # the significance gate itself holds (b = c), yet the verdict fails
    assert _gate(judged, GATE_REGRESSION).status == "pass"
    assert judged.verdict == "fail"
    assert exit_code_for(judged) == 2 and judged.exit_code == 2


def test_critical_gate_turned_off_is_listed_off_with_what_it_would_have_said() -> None:
    report = simple_report(50, 3, 3, 4, critical_regressions=["t-reg-001"])
    judged = evaluate_gates(report, GatePolicy(critical_must_not_regress=False))
    gate = _gate(judged, GATE_CRITICAL)
    # once the gate was dropped from the list, so JSON and Markdown hid what JUnit showed
    assert gate.status == "off" and gate.tasks == ["t-reg-001"]
    assert "turned off" in gate.evidence and "would have failed" in gate.evidence
    assert judged.verdict == "pass" and exit_code_for(judged) == 0


def test_no_critical_regression_passes_and_exit_code_zero() -> None:
    judged = evaluate_gates(simple_report(50, 3, 5, 4), GatePolicy())
    # the default gates: critical tasks, completeness, no significant regression
    assert [g.name for g in judged.gates] == [GATE_CRITICAL, GATE_COMPLETENESS, GATE_REGRESSION]
    assert [g.status for g in judged.gates] == ["pass", "pass", "pass"]
    assert judged.verdict == "pass"
    assert exit_code_for(judged) == 0


def test_evaluate_gates_returns_a_copy_and_replaces_old_gates() -> None:
    report = simple_report(50, 3, 5, 4, critical_regressions=["t-reg-000"])
    judged = evaluate_gates(report, GatePolicy())
    assert report.gates == [] and report.verdict == "pass"
    relaxed = evaluate_gates(
        judged,
        GatePolicy(
            critical_must_not_regress=False, no_significant_regression=False, require_complete=False
        ),
    )
    # default gates turned off stay listed, as off, the critical gate included
    assert [(g.name, g.status) for g in relaxed.gates] == [
        (GATE_CRITICAL, "off"),
        (GATE_COMPLETENESS, "off"),
        (GATE_REGRESSION, "off"),
    ]
    assert relaxed.verdict == "pass"


# --------------------------------------------------------------------------- non-inferiority
def test_noninferiority_fixture_matches_the_stats_package() -> None:
    from ablation.stats import noninferiority_test

    ni = noninferiority_report().noninferiority
    assert ni is not None
    ref = noninferiority_test(920, 30, 20, 30, margin=0.02, alpha=0.05)
    assert ref.decision == ni.decision == "inconclusive"
    assert ni.pvalue == pytest.approx(ref.pvalue, abs=1e-6)
    # exact unconditional p (the asymptotic score p was 0.0851, over the level on small n)
    assert ni.pvalue == pytest.approx(0.0869, abs=5e-4)
    assert ni.ci.low == pytest.approx(ref.confidence_interval.low, abs=1e-6)
    assert ni.ci.low == pytest.approx(-0.0221, abs=5e-5)


def test_noninferiority_inconclusive_counts_as_failure() -> None:
    judged = evaluate_gates(noninferiority_report(), GatePolicy(noninferiority_margin=0.02))
    gate = _gate(judged, GATE_NONINFERIORITY)
    assert gate.status == "inconclusive"
    assert "inconclusive" in gate.evidence and "counts as a failure" in gate.evidence
    assert "-0.0221" in gate.evidence and "0.08694" in gate.evidence
    assert gate.pvalue == pytest.approx(0.0869, abs=1e-4)
    assert judged.verdict == "fail"
    assert exit_code_for(judged) == 2


@pytest.mark.parametrize(
    ("decision", "status"),
    [("non-inferior", "pass"), ("regression", "fail"), ("inconclusive", "inconclusive")],
)
def test_noninferiority_decision_maps_to_status(decision: str, status: str) -> None:
    ni = NonInferiority(
        margin=0.05,
        alpha=0.05,
        statistic=0.0,
        pvalue=0.5,
        ci=iv(-0.2, -0.1, TANGO, level=0.9),
        decision=decision,  # type: ignore[arg-type]
        method="Tango/Nam score test",
    )
    report = simple_report(80, 10, 2, 8, noninferiority=ni)
    # b = 10, c = 2 is also a significant regression; this test is about the NI gate alone
    policy = GatePolicy(noninferiority_margin=0.05, no_significant_regression=False)
    judged = evaluate_gates(report, policy)
    assert _gate(judged, GATE_NONINFERIORITY).status == status
    assert judged.verdict == ("pass" if status == "pass" else "fail")


def test_noninferiority_missing_from_report_fails_without_computing() -> None:
    judged = evaluate_gates(simple_report(80, 1, 5, 14), GatePolicy(noninferiority_margin=0.02))
    gate = _gate(judged, GATE_NONINFERIORITY)
    assert gate.status == "fail"
    assert "did not provide" in gate.evidence
    assert gate.pvalue is None


def test_noninferiority_with_another_margin_fails() -> None:
    judged = evaluate_gates(noninferiority_report(), GatePolicy(noninferiority_margin=0.05))
    gate = _gate(judged, GATE_NONINFERIORITY)
    assert gate.status == "fail" and "margin 0.02" in gate.evidence


# --------------------------------------------------------------------------- significance gates
def test_regression_gate_is_one_sided_exact_mcnemar() -> None:
    judged = evaluate_gates(
        simple_report(70, 12, 2, 16),
        GatePolicy(critical_must_not_regress=False, no_significant_regression=True),
    )
    gate = _gate(judged, GATE_REGRESSION)
    expected = sps.binomtest(12, 14, 0.5, alternative="greater").pvalue
    assert gate.pvalue == pytest.approx(expected, rel=1e-12)
    assert gate.adjusted_pvalue is None  # fail-if-significant gates are never adjusted
    assert gate.status == "fail" and judged.verdict == "fail"
    assert gate.tasks == [f"t-reg-{i:03d}" for i in range(12)]


def test_regression_gate_passes_when_candidate_is_better() -> None:
    judged = evaluate_gates(
        simple_report(70, 2, 12, 16),
        GatePolicy(critical_must_not_regress=False, no_significant_regression=True),
    )
    gate = _gate(judged, GATE_REGRESSION)
    assert gate.status == "pass" and gate.pvalue == pytest.approx(
        sps.binomtest(2, 14, 0.5, alternative="greater").pvalue
    )
    assert judged.verdict == "pass"


def test_regression_gate_counts_read_right_for_one() -> None:
    judged = evaluate_gates(
        simple_report(70, 1, 1, 16),
        GatePolicy(critical_must_not_regress=False, no_significant_regression=True),
    )
    evidence = _gate(judged, GATE_REGRESSION).evidence
    assert "regressions b = 1, improvements c = 1" in evidence
    assert "1 regressions" not in evidence and "1 improvements" not in evidence  # once said so


def test_two_gated_metrics_are_each_judged_at_alpha_unadjusted() -> None:
    latency = _latency(1.30, 1.08, 1.5648)
    report = simple_report(80, 9, 2, 9, latency=latency)
    policy = GatePolicy(
        critical_must_not_regress=False, no_significant_regression=True, max_latency_ratio=1.05
    )
    judged = evaluate_gates(report, policy, alpha=0.05)
    reg, lat = _gate(judged, GATE_REGRESSION), _gate(judged, GATE_LATENCY)

    p_reg = sps.binomtest(9, 11, 0.5, alternative="greater").pvalue
    z = sps.norm.ppf(0.975)
    se = (math.log(1.5648) - math.log(1.08)) / (2 * z)
    p_lat = sps.norm.sf((math.log(1.30) - math.log(1.05)) / se)

    assert reg.pvalue == pytest.approx(p_reg, rel=1e-12)
    assert lat.pvalue == pytest.approx(p_lat, rel=1e-9)
    assert reg.adjusted_pvalue is None and lat.adjusted_pvalue is None
    assert [reg.status == "fail", lat.status == "fail"] == [p_reg < 0.05, p_lat < 0.05]
    assert "Holm" not in reg.evidence and "not adjusted" in reg.evidence
    assert judged.verdict == ("fail" if min(p_reg, p_lat) < 0.05 else "pass")


def test_adding_a_gate_never_lets_a_failing_regression_pass() -> None:
    # n = 200, b = 15, c = 6: one-sided exact p = 0.039 fails alone; a latency gate whose test
    # gives p = 1 (identical latencies) used to take it to Holm p = 0.078 and a pass.
    p_reg = sps.binomtest(15, 21, 0.5, alternative="greater").pvalue
    assert 0.025 < p_reg < 0.05
    lat = _latency(1.0, 1.0, 1.0)
    report = simple_report(179, 15, 6, 0, latency=lat)
    alone = evaluate_gates(
        report, GatePolicy(critical_must_not_regress=False, no_significant_regression=True)
    )
    both = evaluate_gates(
        report,
        GatePolicy(
            critical_must_not_regress=False, no_significant_regression=True, max_latency_ratio=1.5
        ),
    )
    assert _gate(both, GATE_LATENCY).pvalue == 1.0
    assert _gate(alone, GATE_REGRESSION).status == "fail"
    assert _gate(both, GATE_REGRESSION).status == "fail"
    assert _gate(both, GATE_REGRESSION).pvalue == pytest.approx(p_reg, rel=1e-12)
    assert both.verdict == "fail"


def test_latency_gate_is_consistent_with_its_interval() -> None:
    # the limit at the interval's lower end gives the one-sided p of a 95% interval: 0.025
    lat = _latency(1.3, 1.1, 1.3**2 / 1.1)
    judged = evaluate_gates(
        simple_report(80, 5, 5, 10, latency=lat),
        GatePolicy(critical_must_not_regress=False, max_latency_ratio=1.1),
    )
    assert _gate(judged, GATE_LATENCY).pvalue == pytest.approx(0.025, rel=1e-9)


def test_latency_gate_at_limit_one_uses_the_reports_ratio_test() -> None:
    judged = evaluate_gates(
        simple_report(80, 5, 5, 10, latency=_latency(1.2, 1.05, 1.37, pvalue=0.008)),
        GatePolicy(critical_must_not_regress=False, max_latency_ratio=1.0),
    )
    gate = _gate(judged, GATE_LATENCY)
    assert gate.pvalue == pytest.approx(0.004)
    assert gate.status == "fail" and "report's ratio test" in gate.evidence


def test_latency_gate_without_latency_is_inconclusive() -> None:
    judged = evaluate_gates(
        simple_report(80, 5, 5, 10),
        GatePolicy(critical_must_not_regress=False, max_latency_ratio=1.5),
    )
    gate = _gate(judged, GATE_LATENCY)
    assert gate.status == "inconclusive" and "carry no latency at all" in gate.evidence
    assert judged.verdict == "fail"


def test_repeated_runs_use_the_task_level_paired_t() -> None:
    report = repeated_report()
    judged = evaluate_gates(
        report, GatePolicy(critical_must_not_regress=False, no_significant_regression=True)
    )
    gate = _gate(judged, GATE_REGRESSION)
    assert report.repeated is not None
    # mean difference +0.15: the one-sided p for "candidate worse" is 1 - p/2
    assert gate.pvalue == pytest.approx(1 - report.repeated.t_pvalue / 2)
    assert "per-task pass fractions" in gate.evidence
    assert gate.status == "pass"


# --------------------------------------------------------------------------- alpha, snapshot policy
def test_alpha_defaults_to_the_report_and_another_is_refused() -> None:
    report = simple_report(70, 10, 3, 17)  # one-sided p = 0.046
    policy = GatePolicy(critical_must_not_regress=False, no_significant_regression=True)
    assert evaluate_gates(report, policy).verdict == "fail"
    with pytest.raises(ConfigError):  # a pass at 0.01 would sit beside "Candidate is worse"
        evaluate_gates(report, policy, alpha=0.01)
    with pytest.raises(ConfigError):
        evaluate_gates(report, policy, alpha=1.5)


def test_snapshot_policy_on_the_main_report() -> None:
    judged = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    assert [g.name for g in judged.gates] == [
        GATE_CRITICAL,
        GATE_COMPLETENESS,
        GATE_NONINFERIORITY,
        GATE_REGRESSION,
        GATE_LATENCY,
    ]
    # two pairs are missing (one side only): the default completeness gate names them
    assert [g.status for g in judged.gates] == ["fail", "fail", "pass", "pass", "pass"]
    assert judged.gates[1].tasks == ["retrieval/wiki-019", "code/lint-fix-031"]
    assert judged.gates[0].tasks == ["code/refactor-012", "code/sql-injection-guard"]
    assert judged.verdict == "fail"


def test_a_report_with_nothing_paired_fails() -> None:
    report = simple_report(5, 0, 0, 0).model_copy(
        update={"n_tasks": 7, "n_paired": 0, "table": PairTable()}
    )
    judged = evaluate_gates(report, GatePolicy())
    gate = _gate(judged, GATE_INVENTORY)
    assert gate.status == "fail" and "no task was paired" in gate.evidence
    assert judged.verdict == "fail" and exit_code_for(judged) == 2
    # the regression test had no data: it did not run, so it did not pass (it once said PASS, p = 1)
    regression = _gate(judged, GATE_REGRESSION)
    assert regression.status == "inconclusive" and regression.pvalue is None
    # with pairs, the inventory gate is not listed
    assert GATE_INVENTORY not in [
        g.name for g in evaluate_gates(simple_report(5, 0, 0, 0), GatePolicy()).gates
    ]


def test_a_passing_latency_gate_beside_an_interval_above_its_limit_is_said() -> None:
    """At --confidence 0.8 the interval is one-sided 90%, the gate one-sided 95%: they can part."""
    from ablation import CampaignConfig, compare_results

    rng = np.random.default_rng(17)
    base = rng.lognormal(0, 0.3, 30)
    cand = base * np.exp(np.log(1.28) + rng.normal(0, 0.12, 30))
    rows = [[{"id": f"t{i}", "passed": True, "latency_s": float(x)} for i, x in enumerate(arm)]
            for arm in (base, cand)]
    config = CampaignConfig(confidence_level=0.8, gates=GatePolicy(max_latency_ratio=1.2))
    report = compare_results(*rows, config=config)
    gate = _gate(report, GATE_LATENCY)
    assert report.latency is not None and report.latency.ratio_ci is not None
    ci = report.latency.ratio_ci
    # the reference: the one-sided paired t test of log ratio > log 1.2 (scipy)
    d = np.log(cand) - np.log(base)
    ref = sps.ttest_1samp(d, np.log(1.2), alternative="greater").pvalue
    assert gate.pvalue is not None and ref >= 0.05 and gate.pvalue >= 0.05
    assert ci.low > 1.2 and gate.status == "pass" and report.verdict == "pass"
    assert report.verdict_note is not None
    assert "latency ratio" in report.verdict_note and "lies above the limit 1.2x" in report.verdict_note
