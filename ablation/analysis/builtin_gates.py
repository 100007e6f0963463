"""The built-in release gates, each an object of the one gate shape (:class:`BuiltinGate`).

:mod:`ablation.analysis.gates` lists them in :data:`~ablation.analysis.gates.GATES` and evaluates
the list; its module docstring describes each gate. Every gate here is a stateless object with a
``name``, ``applies(policy, report)``, ``judge(policy, report, alpha) -> list[GateResult]``,
``fail_if_significant`` (a significance test that fails when significant: never Holm-adjusted
against another gate) and ``holm_family`` (``None`` for all the built-in gates). The latency gate is in
:mod:`ablation.analysis.latency_gate`, the metric gates' judgement in
:mod:`ablation.analysis.metric_gate`, the sequential-mode forms of the non-inferiority and
regression gates in :mod:`ablation.analysis.sequential_gates`.

Assumptions: the report's counts, intervals and non-inferiority decision come from
:mod:`ablation.analysis`; these gates only judge them (and run the exact McNemar tail, which is
cheap and exact).
"""

from __future__ import annotations

import math

from ablation.analysis.completeness import GATE_COMPLETENESS, completeness_gate
from ablation.analysis.gate_status import could_not_run, listed_ids, turned_off
from ablation.analysis.metric_gate import GATE_METRIC, metric_gate
from ablation.config import GatePolicy
from ablation.report import AblationReport, GateResult, NonInferiority

__all__ = [
    "GATE_COMPLETENESS",
    "GATE_CRITICAL",
    "GATE_INVENTORY",
    "GATE_LATENCY",
    "GATE_METRIC",
    "GATE_NONINFERIORITY",
    "GATE_REGRESSION",
    "BuiltinGate",
    "CompletenessGate",
    "CriticalGate",
    "InventoryGate",
    "MetricNonInferiorityGate",
    "NonInferiorityGate",
    "RegressionGate",
    "judge_significance",
    "no_pair",
    "regression_test",
    "short",
]

GATE_INVENTORY = "paired tasks present"
GATE_CRITICAL = "critical tasks must not regress"
GATE_NONINFERIORITY = "non-inferiority"
GATE_REGRESSION = "no significant regression"
GATE_LATENCY = "no significant latency regression"

_MAX_LISTED = 20


def short(x: float) -> str:
    """A number in four significant digits, as the gates' evidence writes it."""
    return f"{x:.4g}"


def no_pair(report: AblationReport, name: str, test: str) -> GateResult | None:
    """The inconclusive result of gate ``name`` when no task was paired, else ``None``.

    A test of the pairs (the regression and non-inferiority gates, fixed-n or sequential) had
    nothing to weigh: it did not run, so it is neither a pass nor a fail, whichever of its forms
    would have judged it.
    """
    return None if report.n_paired else could_not_run(name, test, "no task was paired")


def _left_out(report: AblationReport) -> str:
    """The critical tasks left out of the pairing, each with why (its excluded entry)."""
    why: dict[str, str] = {}
    for e in report.excluded:
        if e.run is None:
            why.setdefault(e.task_id, e.reason)
    left = report.critical_excluded
    return listed_ids(left, _MAX_LISTED, why={t: why.get(t, "left out") for t in left[:_MAX_LISTED]})


def _critical_gate(report: AblationReport) -> GateResult:
    """Fails on a critical regression among the pairs; else a critical task left out of the
    pairing (no pair to compare) makes it inconclusive: it could not be checked."""
    crit, left = list(report.critical_regressions), list(report.critical_excluded)
    n = report.n_critical
    how = (
        "baseline passed, candidate failed"
        if report.runs == 1
        else f"baseline passed all {report.runs} runs, candidate failed all"
    )
    flaky = (
        f" {len(report.critical_flaky)} critical task(s) with a lower pass fraction are flaky "
        f"(some runs pass) and not counted as regressions: {listed_ids(report.critical_flaky, _MAX_LISTED)}."
        if report.critical_flaky
        else ""
    )
    if crit:  # the report's two-sided figure; with repeated runs a sign test on the tasks
        test = "McNemar" if report.runs == 1 else "two-sided sign test on the tasks,"
        unchecked = f" {len(left)} critical task(s) left out of the pairing could not be checked: "
        return GateResult(
            name=GATE_CRITICAL,
            status="fail",
            evidence=(
                f"{len(crit)} critical task(s) regressed ({how}): "
                f"{listed_ids(crit, _MAX_LISTED)}. A critical regression fails whatever the p-value "
                f"({test} p = {short(report.mcnemar.pvalue)}).{flaky}"
                + (f"{unchecked}{_left_out(report)}." if left else "")
            ),
            tasks=crit,
        )
    in_all = f"({report.table.regressions} regression(s) in all)."
    if not left:
        what = f"none of the {n} critical task(s) regressed" if n else "no paired task is marked critical"
        return GateResult(name=GATE_CRITICAL, status="pass", evidence=f"{what} {in_all}{flaky}")
    gate = could_not_run(
        GATE_CRITICAL, f"the check of {len(left)} critical task(s) left out of the pairing",
        f"they have no pair to compare: {_left_out(report)}",
    )  # fmt: skip
    paired = (
        f"None of the {n} paired critical task(s) regressed" if n else "No paired task is marked critical"
    )
    evidence = f"{gate.evidence} {paired} {in_all}{flaky}"
    return gate.model_copy(update={"evidence": evidence, "tasks": left})


def _noninferiority_gate(report: AblationReport, margin: float) -> GateResult:
    ni = report.noninferiority
    unpaired = no_pair(report, GATE_NONINFERIORITY, f"the non-inferiority test at margin {short(margin)}")
    if unpaired is not None:
        return unpaired
    if ni is None:
        return GateResult(
            name=GATE_NONINFERIORITY,
            status="fail",
            evidence=(
                f"the analysis did not provide a non-inferiority test for margin {short(margin)}; "
                "nothing was computed here, so the gate cannot pass."
            ),
        )
    if not math.isclose(ni.margin, margin, rel_tol=1e-9, abs_tol=1e-12):
        return GateResult(
            name=GATE_NONINFERIORITY,
            status="fail",
            evidence=(
                f"the report's non-inferiority test used margin {short(ni.margin)}, the policy asks "
                f"for {short(margin)}; re-run the analysis with the policy's margin."
            ),
            pvalue=ni.pvalue,
        )
    status = {"non-inferior": "pass", "inconclusive": "inconclusive"}.get(ni.decision, "fail")
    return GateResult(
        name=GATE_NONINFERIORITY,
        status=status,  # type: ignore[arg-type]
        evidence=_ni_evidence(report, ni, margin),
        pvalue=ni.pvalue,
        tasks=[] if status == "pass" else list(report.regressions),
    )


def _against(low: float, margin: float) -> str:
    """Where an interval's lower end lies against ``-margin``, in words."""
    return "lies above" if low > -margin else ("reaches" if low == -margin else "crosses")


def _ni_evidence(report: AblationReport, ni: NonInferiority, margin: float) -> str:
    """The decision in words true of both the interval and the test: the Tango interval can clear
    -margin while the exact p stays above alpha (STATISTICS.md section 7)."""
    level, m = f"{100 * ni.ci.confidence_level:g}%", short(margin)
    bounds = f"[{ni.ci.low:+.4f}, {ni.ci.high:+.4f}]"
    h0 = f"H0: uplift <= -{m}"
    test = f"{ni.method}, {h0}, p = {short(ni.pvalue)}, alpha {short(ni.alpha)}"
    named = f"the {level} {ni.ci.method} {bounds}"
    if ni.decision == "non-inferior":  # the test decides; the interval is shown beside it
        return (
            f"non-inferior: {ni.method} gives p = {short(ni.pvalue)} <= alpha {short(ni.alpha)} "
            f"({h0}); {named} {_against(ni.ci.low, margin)} -{m}."
        )
    if ni.decision == "regression":
        return f"regression: {named} lies below 0 ({test})."
    if ni.ci.low > -margin:  # the interval clears the margin; the test's p decides
        tester = "the exact test" if report.runs == 1 else "the test"
        why = (
            f"{named} lies above -{m}, but {tester} gives p = {short(ni.pvalue)} > alpha "
            f"{short(ni.alpha)} ({ni.method}, {h0}), and the test decides"
        )
    else:
        why = f"{named} {_against(ni.ci.low, margin)} -{m} ({test})"
    return (
        f"inconclusive: {why}; the data show neither non-inferiority nor a regression, and an "
        "inconclusive gate counts as a failure."
    )


def _regression_off(report: AblationReport, alpha: float) -> GateResult:
    """The significant-regression gate, turned off: shown, with what it would have said."""
    p, desc = regression_test(report)
    would = "would have failed" if p < alpha else "would have passed"
    return GateResult(
        name=GATE_REGRESSION,
        status="off",
        evidence=(
            f"{turned_off('no_significant_regression')}; {desc}; p = {short(p)} vs alpha "
            f"{short(alpha)}: {would}."
        ),
        pvalue=p,
    )


def regression_test(report: AblationReport) -> tuple[float, str]:
    """One-sided p-value for "candidate worse", and a description of the test.

    The report's :class:`~ablation.report.UpliftTest` when it has one (the test its summary
    sentence states); a report without one is judged by the same tests, computed here.
    """
    b, c = report.mcnemar.b, report.mcnemar.c
    test = report.uplift_test
    if test is not None:
        return test.pvalue_worse, f"{test.method}, H1: candidate worse, b = {b}, c = {c}"
    rep = report.repeated
    if rep is not None:
        half = rep.t_pvalue / 2
        p = half if rep.mean_difference < 0 else 1 - half
        return p, (
            f"paired t on per-task pass fractions ({rep.runs} runs, {rep.n_tasks} tasks), "
            f"one-sided (H1: candidate worse), mean difference {rep.mean_difference:+.4f}"
        )
    from ablation.stats import mcnemar

    p = float(mcnemar(b, c, method="exact", alternative="less").pvalue)
    return p, (
        f"one-sided exact McNemar (H1: candidate worse), regressions b = {b}, improvements c = {c}"
    )


def judge_significance(name: str, p: float, desc: str, tasks: list[str], a: float) -> GateResult:
    """Judge one significance-test gate at ``a`` on its own.

    Each of these gates fails when its test is significant, so a multiplicity adjustment would
    protect against false failures and take protection away from the user: adding a second gate
    must never let a regression that fails alone pass. They are not adjusted against each other.
    """
    failed = p < a
    outcome = "significant: fails" if failed else "not significant: passes"
    return GateResult(
        name=name,
        status="fail" if failed else "pass",
        evidence=(
            f"{desc}; p = {short(p)} (each fail-if-significant gate at alpha on its own, "
            f"not adjusted) {'<' if failed else '>='} alpha {short(a)}: {outcome}."
        ),
        pvalue=p,
        tasks=tasks if failed else [],
    )


def _inventory_gates(report: AblationReport) -> list[GateResult]:
    """Gate 0: a report with no paired task fails."""
    if report.n_paired:
        return []
    return [
        GateResult(
            name=GATE_INVENTORY,
            status="fail",
            evidence=(
                f"no task was paired: {report.n_tasks} task(s), {len(report.excluded)} "
                "excluded item(s) (listed in the report); there is nothing to judge."
            ),
        )
    ]


class BuiltinGate:
    """The gate shape, with the defaults of a gate that is judged on its own."""

    name: str = ""
    fail_if_significant: bool = False
    holm_family: str | None = None

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        """Whether the gate is judged (listed) for this policy and report."""
        return True

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        """The gate's results (a gate may give none, or one per metric)."""
        raise NotImplementedError


class InventoryGate(BuiltinGate):
    name = GATE_INVENTORY

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        return _inventory_gates(report)


class CriticalGate(BuiltinGate):
    """The critical-task gate; turned off, it is listed with what it would have said."""

    name = GATE_CRITICAL

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        gate = _critical_gate(report)
        if policy.critical_must_not_regress:
            return [gate]
        would = {"fail": "would have failed", "inconclusive": "would have been inconclusive"}.get(
            gate.status, "would have passed"
        )
        return [
            gate.model_copy(
                update={
                    "status": "off",
                    "evidence": f"{turned_off('critical_must_not_regress')}; {gate.evidence} "
                    f"It {would}.",
                }
            )
        ]


class CompletenessGate(BuiltinGate):
    name = GATE_COMPLETENESS

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        return [completeness_gate(report, policy)]


class NonInferiorityGate(BuiltinGate):
    name = GATE_NONINFERIORITY

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        # fixed-n tests are not valid after a sequential stop: SequentialNonInferiorityGate
        return report.sequential is None and policy.noninferiority_margin is not None

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        assert policy.noninferiority_margin is not None
        return [_noninferiority_gate(report, policy.noninferiority_margin)]


class MetricNonInferiorityGate(BuiltinGate):
    name = GATE_METRIC

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return bool(policy.metric_margins)

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        return [metric_gate(report, m, v) for m, v in policy.metric_margins.items()]


class RegressionGate(BuiltinGate):
    """The fixed-n regression gate; turned off, it is listed (with what it would have said)
    when some task was paired."""

    name = GATE_REGRESSION
    fail_if_significant = True

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return report.sequential is None and (
            policy.no_significant_regression or report.n_paired > 0
        )

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        if not policy.no_significant_regression:
            return [_regression_off(report, alpha)]
        unpaired = no_pair(report, GATE_REGRESSION, "the one-sided test")
        if unpaired is not None:
            return [unpaired]
        p, desc = regression_test(report)
        return [judge_significance(GATE_REGRESSION, p, desc, list(report.regressions), alpha)]
