"""The latency gate: is the candidate's geometric-mean latency significantly above the limit?

``"no significant latency regression"`` (``policy.max_latency_ratio``, opt-in): a one-sided test
that the geometric-mean latency ratio (candidate / baseline) exceeds the limit, and, when trials
timed out, the one-sided exact test that timeouts are more frequent in the candidate; it fails
when either is significant at ``alpha``, judged on its own (a fail-if-significant gate). When the
ratio cannot be tested (no latency in the results, too few pairs with one in both arms, no
completed trial so that every latency is a time limit, a ratio past the float range) the gate is
inconclusive and says which (:mod:`ablation.analysis.gate_data`).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ablation.analysis.builtin_gates import GATE_LATENCY, BuiltinGate, judge_significance, short
from ablation.analysis.gate_data import LATENCY_NAMES, none_completed, too_few_pairs
from ablation.analysis.gate_status import could_not_run
from ablation.config import GatePolicy
from ablation.report import AblationReport, GateResult, LatencyComparison

__all__ = ["LatencyGate"]


def _untestable(report: AblationReport) -> str | None:
    """Why the report's latency ratio cannot be tested, or ``None`` when it can."""
    lat = report.latency
    idle = none_completed(report)
    if lat is not None and lat.n_pairs and idle is not None:
        return (
            f"{idle}: every latency of a pair is the value a timed-out trial counts at (the time "
            "limit, a lower bound), so their ratio says nothing"
        )
    if lat is None or lat.n_pairs < 2:
        return too_few_pairs(report, LATENCY_NAMES[0])
    if lat.ratio_note is not None:
        return f"the latency ratio cannot be computed ({lat.ratio_note})"
    gmr, ci = lat.geometric_mean_ratio, lat.ratio_ci
    if gmr is None or ci is None:
        return (
            f"fewer than 2 of the {lat.n_pairs} pairs with a latency in both arms have a positive "
            "one in both (a latency of 0 s has no log ratio)"
        )
    if min(gmr, ci.low, ci.high) <= 0 or not all(map(math.isfinite, (gmr, ci.low, ci.high))):
        return f"the latency ratio {gmr} or its interval is not a positive finite number"
    return None


def _left_out(lat: LatencyComparison) -> str:
    """The pairs without a latency in an arm (an error), named beside the tested ones: the gate
    tests the pairs that have one, and a reader sees how many it could not."""
    if not lat.n_left_out:
        return ""
    reason = f": {lat.left_out_reason}" if lat.left_out_reason else ""
    return f", {lat.n_left_out} left out{reason}"


def _latency_test(lat: LatencyComparison, limit: float) -> tuple[float, str]:
    """One-sided p-value for "geometric-mean latency ratio > limit" (the report's ratio and its
    interval are positive and finite: :func:`_untestable` is ``None``)."""
    assert lat.geometric_mean_ratio is not None and lat.ratio_ci is not None
    gmr, ci = lat.geometric_mean_ratio, lat.ratio_ci
    desc = (
        f"geometric-mean latency ratio {short(gmr)}x ({100 * ci.confidence_level:g}% CI "
        f"[{short(ci.low)}x, {short(ci.high)}x], {ci.method}; {lat.n_pairs} pairs{_left_out(lat)}) vs "
        f"limit {short(limit)}x"
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
    in the candidate (tasks where only it timed out against tasks where only the baseline did).
    The gate's p-value is the Bonferroni combination of the two, ``min(1, 2·min(p_ratio, p_to))``,
    so the gate fails when either test is significant at α/2 and its size stays at most α at the
    limit (a candidate exactly at the limit also times out more: each test alone at α fails such a
    candidate up to 8% of the time, docs/VALIDATION.md section 8). Unbalanced timeouts are always
    named.
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
            f" (unbalanced: one-sided exact test of more candidate timeouts p = {short(p_to)})"
        )
    combined = min(1.0, 2.0 * min(p, p_to))
    words += f"; gate p = min(1, 2 min(ratio p, timeout p)) = {short(combined)} (Bonferroni)"
    return combined, words


class LatencyGate(BuiltinGate):
    name = GATE_LATENCY
    fail_if_significant = True

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return policy.max_latency_ratio is not None

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        limit = policy.max_latency_ratio
        assert limit is not None
        why = _untestable(report)
        if why is not None or report.latency is None:
            test = f"the one-sided test of the latency ratio against the limit {short(limit)}x"
            return [could_not_run(GATE_LATENCY, test, why or "the report has no latency")]
        p_lat, desc = _latency_test(report.latency, limit)
        p_lat, desc = _with_timeouts(report.latency, p_lat, desc)
        return [judge_significance(GATE_LATENCY, p_lat, desc, [], alpha)]
