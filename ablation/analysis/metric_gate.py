"""The gate ``"non-inferiority of METRIC"`` (``GatePolicy.metric_margins``), one per metric.

It judges the report's non-inferiority test of the metric
(:func:`ablation.analysis.metric_margins.metric_noninferiority`): ``"non-inferior"`` passes,
``"regression"`` fails, ``"inconclusive"`` is inconclusive. With fewer than
:data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` pairs holding the metric in both arms the test is not
run (its t test under-covers there, and the report shows no interval of the mean difference
either), and the gate is inconclusive saying why
(:func:`ablation.analysis.gate_data.too_few_pairs`); a report analysed without the margin fails.

A quality score whose scorer failed on a trial of either arm (the report's quality section
counts its failures, the errors section lists them) is inconclusive whatever the test on the
scored pairs says: a score that could not be computed is missing, not a low score, and a check
that could not run is neither a pass nor a failure. The evidence names the scorer, its failures
per arm and the first error message the errors section shows.

Quality scores, cost, latency and the other metrics (tokens, model requests, a result file's
numbers) are inconclusive the same way when a pair lacks the value in one arm (a trial that
errored, or timed out before it gave an output to score, or stated no cost or latency): an
unreported value is unknown, not a good one, and an agent that reported its cost only where it
was cheap, gave an output only where it was easy, or crashed on its slow tasks, would otherwise
pass on the pairs that have one. A timed-out trial keeps its latency pair, counted at the time
limit (the margin's own rule for that bound: :mod:`ablation.analysis.metric_margins`); an errored
one has no latency (:mod:`ablation.analysis.latency_censoring`), and its pair is left out of the
latency section.

Assumptions: ``report.quality[metric].scorer_errors_*`` count the scorer's failures over the
trials ``report.errors.trials`` counts (every trial seen of the report's tasks).
"""

from __future__ import annotations

from ablation.analysis.failures import scorer_failed
from ablation.analysis.gate_data import metric_section, too_few_pairs
from ablation.analysis.gate_status import could_not_run
from ablation.report import AblationReport, GateResult
from ablation.stats import MEAN_DIFFERENCE_MIN_N

__all__ = ["GATE_METRIC", "metric_gate", "scorer_failures"]

GATE_METRIC = "non-inferiority of {metric}"


def _short(x: float) -> str:
    return f"{x:.4g}"


def scorer_failures(report: AblationReport, metric: str) -> str | None:
    """Words saying that the scorer of quality score ``metric`` failed on a trial (counts per
    arm, and the first example of its groups in the errors section), or ``None``."""
    q = report.quality.get(metric)
    if q is None or not (q.scorer_errors_baseline or q.scorer_errors_candidate):
        return None
    seen = report.errors.trials if report.errors is not None else {}
    groups = report.errors.scorer_groups if report.errors is not None else []
    example = next((g.example for g in groups if g.scorer == metric and g.example), None)
    counts = [
        (q.scorer_errors_baseline, seen.get("baseline", report.baseline.n_trials)),
        (q.scorer_errors_candidate, seen.get("candidate", report.candidate.n_trials)),
    ]
    return scorer_failed(metric, counts, example)


def unpaired_values(report: AblationReport, metric: str) -> str | None:
    """Words saying that some pairs lack ``metric`` in one arm (a quality score, cost, latency,
    tokens, a file's metric), or ``None`` when every pair has it (module docstring)."""
    section = metric_section(report, metric)
    if section is None or not section.n_left_out:
        return None
    reason = f" ({section.left_out_reason})" if section.left_out_reason else ""
    return (
        f"{section.n_left_out} of {section.n_pairs + section.n_left_out} pairs have no {metric} "
        f"in one arm{reason}"
    )


def metric_gate(report: AblationReport, metric: str, margin: float) -> GateResult:
    """Non-inferiority of a numeric metric or quality score within ``margin`` (its units); see
    the module docstring for when it is inconclusive."""
    name = GATE_METRIC.format(metric=metric)
    test = f"the non-inferiority test against margin {_short(margin)}"
    ni = report.metric_noninferiority.get(metric)
    failed = scorer_failures(report, metric)
    missing = unpaired_values(report, metric)
    if ni is None:
        why = too_few_pairs(report, metric, MEAN_DIFFERENCE_MIN_N)
        if why is not None:
            return could_not_run(name, test, "; ".join(w for w in (why, failed, missing) if w))
        section = metric_section(report, metric)
        return GateResult(
            name=name,
            status="fail",
            evidence=(
                f"the report holds no non-inferiority test of {metric!r} for margin "
                f"{_short(margin)}, although {section.n_pairs if section else 0} pairs have it in "
                "both arms: it was analysed without this margin; nothing was computed here, so "
                "the gate cannot pass."
            ),
        )
    interval = (
        f"{100 * ni.ci.confidence_level:g}% CI of candidate - baseline "
        f"[{ni.ci.low:+.4g}, {ni.ci.high:+.4g}]"
    )
    scored = f"{interval}, p = {_short(ni.pvalue)}, alpha {_short(ni.alpha)}"
    if failed is not None:
        return GateResult(
            name=name,
            status="inconclusive",
            evidence=(
                f"inconclusive: {failed}. A score that could not be computed is missing, so "
                f"the test on the scored pairs alone ({scored}) cannot decide; a check that "
                "could not run is neither a pass nor a failure of the candidate, and the "
                "verdict cannot pass on it."
            ),
            pvalue=ni.pvalue,
        )
    if missing is not None:
        return GateResult(
            name=name,
            status="inconclusive",
            evidence=(
                f"inconclusive: {missing}. A value that was not reported is unknown, not a good "
                f"one, so the test on the pairs that have it in both arms ({scored}) cannot "
                "decide; a check that could not run is neither a pass "
                "nor a failure of the candidate, and the verdict cannot pass on it."
            ),
            pvalue=ni.pvalue,
        )
    status = {"non-inferior": "pass", "inconclusive": "inconclusive"}.get(ni.decision, "fail")
    return GateResult(
        name=name,
        status=status,  # type: ignore[arg-type]
        evidence=f"{ni.decision}: {interval}; {ni.method}, p = {_short(ni.pvalue)}, alpha {_short(ni.alpha)}.",
        pvalue=ni.pvalue,
    )
