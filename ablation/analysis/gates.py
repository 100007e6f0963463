"""Release gates: turn a report and a :class:`~ablation.config.GatePolicy` into a verdict.

Gates, in the order they are reported:

0. ``"paired tasks present"`` (always, shown only when it fails): a report in which no task was
   paired (every task excluded or present on one side only) has nothing to judge and fails,
   never passes silently.
1. ``"critical tasks must not regress"`` (``policy.critical_must_not_regress``, on by default):
   fails when any critical task regressed, whatever any p-value says.
2. ``"complete comparison"`` (``policy.require_complete``, on by default): every expected pair is
   present and each arm completed at least ``policy.min_completed`` of its trials
   (:mod:`ablation.analysis.completeness`).
3. ``"non-inferiority"`` (``policy.noninferiority_margin``, opt-in): reads the report's exact
   non-inferiority test (the analysis computes it when a margin is configured). ``"non-inferior"``
   passes; ``"inconclusive"`` is reported as inconclusive and counts as a failure; ``"regression"``
   fails; a missing test fails (nothing is recomputed here).
4. ``"non-inferiority of METRIC"`` (``policy.metric_margins``, opt-in): the report's paired t
   non-inferiority test of each named metric, judged the same way.
5. ``"no significant regression"`` (``policy.no_significant_regression``, on by default):
   one-sided exact McNemar for "candidate worse" (with repeated runs: the paired t on per-task
   pass fractions, one-sided), and
6. ``"no significant latency regression"`` (``policy.max_latency_ratio``, opt-in): one-sided test
   that the geometric-mean latency ratio exceeds the limit.

Gates 5 and 6 are significance tests that fail when significant; each is judged at ``alpha`` on
its own (no Holm adjustment between them: adjusting gates that fail when significant would
protect against false failures and let a regression that fails alone pass beside another gate). A default gate the user turned off is
listed with status ``"off"`` and what it would have said. The verdict is ``"fail"`` as soon as
one gate is neither ``"pass"`` nor ``"off"``.

In sequential mode (``report.sequential`` set) gates 3 and 5 are judged by the anytime-valid
decisions of :mod:`ablation.analysis.sequential_gates` (gate 5 is then always on), not by fixed-n
p-values, which are not valid after a data-dependent stop.

Assumptions: the report's counts, intervals and non-inferiority decision come from
:mod:`ablation.analysis`; this module only judges them (and runs the exact McNemar tail, which is
cheap and exact).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ablation.analysis.completeness import GATE_COMPLETENESS, completeness_gate
from ablation.analysis.pass_note import pass_note
from ablation.analysis.sequential_gates import (
    sequential_noninferiority_gate,
    sequential_regression_gate,
)
from ablation.config import GatePolicy
from ablation.errors import ConfigError
from ablation.report import AblationReport, GateResult, LatencyComparison

__all__ = [
    "GATE_COMPLETENESS",
    "GATE_CRITICAL",
    "GATE_INVENTORY",
    "GATE_LATENCY",
    "GATE_METRIC",
    "GATE_NONINFERIORITY",
    "GATE_REGRESSION",
    "evaluate_gates",
    "exit_code_for",
]

GATE_INVENTORY = "paired tasks present"
GATE_CRITICAL = "critical tasks must not regress"
GATE_NONINFERIORITY = "non-inferiority"
GATE_REGRESSION = "no significant regression"
GATE_LATENCY = "no significant latency regression"
GATE_METRIC = "non-inferiority of {metric}"

_MAX_LISTED = 20


def _g(x: float) -> str:
    return f"{x:.4g}"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_MAX_LISTED])
    more = len(ids) - _MAX_LISTED
    return shown + (f" ... and {more} more" if more > 0 else "")


def _critical_gate(report: AblationReport) -> GateResult:
    crit = list(report.critical_regressions)
    how = (
        "baseline passed, candidate failed"
        if report.runs == 1
        else f"baseline passed all {report.runs} runs, candidate failed all"
    )
    flaky = (
        f" {len(report.critical_flaky)} critical task(s) with a lower pass fraction are flaky "
        f"(some runs pass) and not counted as regressions: {_ids(list(report.critical_flaky))}."
        if report.critical_flaky
        else ""
    )
    if crit:
        return GateResult(
            name=GATE_CRITICAL,
            status="fail",
            evidence=(
                f"{len(crit)} critical task(s) regressed ({how}): "
                f"{_ids(crit)}. A critical regression fails whatever the p-value "
                f"(McNemar p = {_g(report.mcnemar.pvalue)}).{flaky}"
            ),
            tasks=crit,
        )
    return GateResult(
        name=GATE_CRITICAL,
        status="pass",
        evidence=(
            (
                f"none of the {report.n_critical} critical task(s) regressed "
                if report.n_critical
                else "no task is marked critical "
            )
            + f"({report.table.regressions} regression(s) in all)."
            + flaky
        ),
    )


def _noninferiority_gate(report: AblationReport, margin: float) -> GateResult:
    ni = report.noninferiority
    if ni is None:
        return GateResult(
            name=GATE_NONINFERIORITY,
            status="fail",
            evidence=(
                f"the analysis did not provide a non-inferiority test for margin {_g(margin)}; "
                "nothing was computed here, so the gate cannot pass."
            ),
        )
    if not math.isclose(ni.margin, margin, rel_tol=1e-9, abs_tol=1e-12):
        return GateResult(
            name=GATE_NONINFERIORITY,
            status="fail",
            evidence=(
                f"the report's non-inferiority test used margin {_g(ni.margin)}, the policy asks "
                f"for {_g(margin)}; re-run the analysis with the policy's margin."
            ),
            pvalue=ni.pvalue,
        )
    level = f"{100 * ni.ci.confidence_level:g}%"
    interval = f"{level} CI [{ni.ci.low:+.4f}, {ni.ci.high:+.4f}]"
    test = f"{ni.method}, H0: uplift <= -{_g(margin)}, p = {_g(ni.pvalue)}, alpha {_g(ni.alpha)}"
    if ni.decision == "non-inferior":
        return GateResult(
            name=GATE_NONINFERIORITY,
            status="pass",
            evidence=f"non-inferior: {interval} lies above -{_g(margin)} ({test}).",
            pvalue=ni.pvalue,
        )
    if ni.decision == "inconclusive":
        return GateResult(
            name=GATE_NONINFERIORITY,
            status="inconclusive",
            evidence=(
                f"inconclusive: {interval} crosses -{_g(margin)} ({test}); the data show neither "
                "non-inferiority nor a regression, and an inconclusive gate counts as a failure."
            ),
            pvalue=ni.pvalue,
            tasks=list(report.regressions),
        )
    return GateResult(
        name=GATE_NONINFERIORITY,
        status="fail",
        evidence=f"regression: {interval} lies below 0 ({test}).",
        pvalue=ni.pvalue,
        tasks=list(report.regressions),
    )


def _metric_gate(report: AblationReport, metric: str, margin: float) -> GateResult:
    """Non-inferiority of a numeric metric or quality score within ``margin`` (its units)."""
    name = GATE_METRIC.format(metric=metric)
    ni = report.metric_noninferiority.get(metric)
    if ni is None:
        return GateResult(
            name=name,
            status="fail",
            evidence=(
                f"no paired values of {metric!r} to test against margin {_g(margin)} (the metric "
                "is absent from the report, or no pair has a value in both arms)."
            ),
        )
    status = {"non-inferior": "pass", "inconclusive": "inconclusive"}.get(ni.decision, "fail")
    interval = (
        f"{100 * ni.ci.confidence_level:g}% CI of candidate - baseline "
        f"[{ni.ci.low:+.4g}, {ni.ci.high:+.4g}]"
    )
    return GateResult(
        name=name,
        status=status,  # type: ignore[arg-type]
        evidence=f"{ni.decision}: {interval}; {ni.method}, p = {_g(ni.pvalue)}, alpha {_g(ni.alpha)}.",
        pvalue=ni.pvalue,
    )


def _regression_off(report: AblationReport, alpha: float) -> GateResult:
    """The significant-regression gate, turned off: shown, with what it would have said."""
    p, desc = _regression_test(report)
    would = "would have failed" if p < alpha else "would have passed"
    return GateResult(
        name=GATE_REGRESSION,
        status="off",
        evidence=(
            "turned off (--allow-significant-regression, no_significant_regression = false); "
            f"{desc}; p = {_g(p)} vs alpha {_g(alpha)}: {would}."
        ),
        pvalue=p,
    )


def _regression_test(report: AblationReport) -> tuple[float, str]:
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


def _latency_test(lat: LatencyComparison | None, limit: float) -> tuple[float | None, str]:
    """One-sided p-value for "geometric-mean latency ratio > limit" (None when impossible)."""
    if lat is None or lat.geometric_mean_ratio is None or lat.ratio_ci is None:
        return (
            None,
            "the report has no latency ratio with an interval (no pair completed in both arms?)",
        )
    gmr, ci = lat.geometric_mean_ratio, lat.ratio_ci
    if min(gmr, ci.low, ci.high) <= 0 or not all(map(math.isfinite, (gmr, ci.low, ci.high))):
        return None, f"the latency ratio {gmr} or its interval is not a positive finite number"
    desc = (
        f"geometric-mean latency ratio {_g(gmr)}x ({100 * ci.confidence_level:g}% CI "
        f"[{_g(ci.low)}x, {_g(ci.high)}x], {ci.method}; {lat.n_pairs} pairs) vs limit {_g(limit)}x"
    )
    if lat.ratio_limit == limit and lat.ratio_limit_pvalue is not None:
        return lat.ratio_limit_pvalue, f"{desc}; {lat.ratio_limit_method}"
    if limit == 1.0 and lat.ratio_pvalue is not None:
        half = lat.ratio_pvalue / 2
        return (half if gmr > 1 else 1 - half), desc + "; one-sided from the report's ratio test"
    z = NormalDist().inv_cdf(0.5 + ci.confidence_level / 2)
    se = (math.log(ci.high) - math.log(ci.low)) / (2 * z)
    shift = math.log(gmr) - math.log(limit)
    # A zero-width interval leaves no doubt about which side of the limit the ratio is on.
    p = NormalDist().cdf(-shift / se) if se > 0 else (0.0 if shift > 0 else 1.0)
    return p, desc + "; one-sided, normal approximation on the log scale from the interval"


def _with_timeouts(lat: LatencyComparison | None, p: float, desc: str) -> tuple[float, str]:
    """The latency gate's p and words with timed-out trials accounted for.

    Timed-out trials count at the cap (lower bounds), so the ratio understates a candidate that
    times out more. The gate also runs the one-sided exact test that timeouts are more frequent
    in the candidate (tasks where only it timed out against tasks where only the baseline did)
    and fails when either test is significant; unbalanced timeouts are always named.
    """
    if lat is None or lat.censoring is None:
        return p, desc
    only_c, only_b = lat.timeouts_only_candidate, lat.timeouts_only_baseline
    from ablation.stats import mcnemar

    p_to = float(mcnemar(only_c, only_b, method="exact", alternative="less").pvalue)
    words = (
        f"{desc}; {lat.censoring}; timeouts in the candidate only on {only_c} task(s), in the "
        f"baseline only on {only_b}"
    )
    if only_c != only_b:
        words += (
            f" (unbalanced: one-sided exact test of more candidate timeouts p = {_g(p_to)}; the "
            "gate fails when it or the ratio test is significant)"
        )
    return min(p, p_to), words


def _significance_gates(tested: list[tuple[str, float, str, list[str]]], a: float) -> list[GateResult]:
    """Judge the significance-test gates, each at ``a`` on its own.

    Each of these gates fails when its test is significant, so a multiplicity adjustment would
    protect against false failures and take protection away from the user: adding a second gate
    must never let a regression that fails alone pass. They are not adjusted against each other.
    """
    gates: list[GateResult] = []
    for name, p, desc, tasks in tested:
        failed = p < a
        outcome = "significant: fails" if failed else "not significant: passes"
        gates.append(
            GateResult(
                name=name,
                status="fail" if failed else "pass",
                evidence=(
                    f"{desc}; p = {_g(p)} (each fail-if-significant gate at alpha on its own, "
                    f"not adjusted) {'<' if failed else '>='} alpha {_g(a)}: {outcome}."
                ),
                pvalue=p,
                tasks=tasks if failed else [],
            )
        )
    return gates


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


def evaluate_gates(
    report: AblationReport,
    policy: GatePolicy,
    *,
    alpha: float | None = None,
) -> AblationReport:
    """Judge ``report`` against ``policy``.

    Args:
        report: The analysed report (its existing gates are replaced).
        policy: Which gates apply.
        alpha: Significance level for the test gates (default: ``report.provenance.alpha``).

    Returns:
        A copy of the report with ``gates`` and ``verdict`` set.

    Raises:
        ConfigError: if ``alpha`` is not in (0, 1).
    """
    a = report.provenance.alpha if alpha is None else alpha
    if not 0 < a < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {a!r}")
    gates = _inventory_gates(report)
    if policy.critical_must_not_regress:
        gates.append(_critical_gate(report))
    gates.append(completeness_gate(report, policy))
    if policy.noninferiority_margin is not None:
        if report.sequential is not None:  # fixed-n tests are not valid after a sequential stop
            gates.append(sequential_noninferiority_gate(report.sequential, GATE_NONINFERIORITY))
        else:
            gates.append(_noninferiority_gate(report, policy.noninferiority_margin))
    gates.extend(_metric_gate(report, m, v) for m, v in policy.metric_margins.items())

    tested: list[tuple[str, float, str, list[str]]] = []
    missing: list[GateResult] = []
    if report.sequential is not None:  # the e-process decides; always on in sequential mode
        gates.append(sequential_regression_gate(report.sequential, GATE_REGRESSION))
    elif policy.no_significant_regression:
        p, desc = _regression_test(report)
        tested.append((GATE_REGRESSION, p, desc, list(report.regressions)))
    elif report.n_paired:
        missing.append(_regression_off(report, a))
    if policy.max_latency_ratio is not None:
        p_lat, desc = _latency_test(report.latency, policy.max_latency_ratio)
        if p_lat is not None:
            p_lat, desc = _with_timeouts(report.latency, p_lat, desc)
        if p_lat is None:
            missing.append(GateResult(name=GATE_LATENCY, status="fail", evidence=desc + "."))
        else:
            tested.append((GATE_LATENCY, p_lat, desc, []))
    gates.extend(_significance_gates(tested, a))
    gates.extend(missing)
    verdict = "fail" if any(g.status not in ("pass", "off") for g in gates) else "pass"
    note = pass_note(report, gates, a) if verdict == "pass" else None
    return report.model_copy(update={"gates": gates, "verdict": verdict, "verdict_note": note})


def exit_code_for(report: AblationReport) -> int:
    """The process exit code for a judged report: 0 when the verdict is pass, 2 when it fails."""
    return 0 if report.verdict == "pass" else 2
