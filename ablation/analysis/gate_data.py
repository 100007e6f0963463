"""What a report holds of each metric a gate may test, and why a metric has too few pairs.

A metric gate (``GatePolicy.metric_margins``) and the latency gate test paired values. When a
report holds too few pairs of a metric for its test, :func:`too_few_pairs` says exactly why, in
the order a reader would check: no task was paired; the arms' costs are in different currencies
(never compared); the results carry no value of the metric at all; one arm carries none; no trial
of an arm (or of either) completed; the pairs left out and their reason; a single pair. The gates
then report an inconclusive check (:func:`ablation.analysis.gate_status.could_not_run`), never a
pass or a failure.

A metric's section of the report (:func:`metric_section`): ``latency_s`` (alias ``latency``) is
``report.latency``, ``cost`` is ``report.cost``, any other name a quality score or else a
metric. :func:`carried_metrics` lists the names the report holds a section of: the names a
margin can test in these results.

Assumptions: ``report.latency`` and ``report.cost`` are present when either arm has a value
(latency counting a timed-out trial at the time limit, so a latency section may hold pairs whose
values were never measured; cost dropped when the arms' currencies differ), ``report.quality``
when either arm has the scorer, ``report.metrics`` when the baseline has the metric (so of any
other name only the baseline's absence is known); an arm summary's ``errors`` and ``timeouts``
are disjoint counts over every task of the report, paired or not
(:mod:`ablation.analysis.arm_totals`), while its ``n_trials`` and ``passes`` count the paired
tasks' trials: so ``n_trials - errors - timeouts`` is a lower bound of the paired trials that
completed, and a pass, or a pair under ``on_error="exclude"`` (which pairs completed trials
only), shows one completed (:func:`_some_completed`).
"""

from __future__ import annotations

from ablation.report import AblationReport, ArmSummary, ContinuousComparison, QualityComparison

__all__ = [
    "LATENCY_NAMES", "UNITS_JOINED", "carried_metrics", "metric_section", "mixes_units",
    "none_completed", "too_few_pairs",
]

UNITS_JOINED = "+"
"""Joins the distinct currencies (or sources) of an arm's costs in ``ArmSummary.cost_currency``
(``cost_source``): a value holding it names several (``"EUR+USD"``)."""


def mixes_units(unit: str | None) -> bool:
    """Whether an arm's ``cost_currency`` (or ``cost_source``) names several units."""
    return UNITS_JOINED in (unit or "")

#: The names of latency as a metric, the first the canonical one.
LATENCY_NAMES = ("latency_s", "latency")

_ARMS = ("baseline", "candidate")


def metric_section(report: AblationReport, name: str) -> ContinuousComparison | None:
    """The report's paired comparison of metric ``name``, or ``None`` when it holds none."""
    if name in LATENCY_NAMES:
        return report.latency
    if name == "cost":
        return report.cost
    quality = report.quality.get(name)
    return quality if quality is not None else report.metrics.get(name)


def carried_metrics(report: AblationReport) -> set[str]:
    """The metric names ``report`` holds a comparison of (``latency_s`` for latency)."""
    names = set(report.quality) | set(report.metrics)
    if report.latency is not None:
        names.add(LATENCY_NAMES[0])
    if report.cost is not None:
        names.add("cost")
    return names


def _some_completed(report: AblationReport, arm: ArmSummary) -> bool:
    """Whether some paired trial of ``arm`` completed (module docstring: the errors and timeouts
    of tasks left out of the pairs do not count against the paired trials)."""
    if arm.passes > 0 or (report.provenance.on_error == "exclude" and report.n_paired > 0):
        return True
    return arm.n_trials - arm.errors - arm.timeouts > 0


def _failures(arm: ArmSummary) -> str:
    """``"3 error(s) and 1 timeout(s) in 4 trial(s)"``."""
    parts = [f"{n} {word}(s)" for n, word in ((arm.errors, "error"), (arm.timeouts, "timeout")) if n]
    return f"{' and '.join(parts) or 'no failure'} in {arm.n_trials} trial(s)"


def none_completed(report: AblationReport) -> str | None:
    """Words saying that no trial of either arm completed, or ``None`` when one did."""
    b, c = report.baseline, report.candidate
    if not (b.n_trials and c.n_trials) or _some_completed(report, b) or _some_completed(report, c):
        return None
    if not (b.errors or c.errors):
        return f"every trial of both arms timed out ({b.timeouts} baseline, {c.timeouts} candidate)"
    return f"no trial of either arm completed (baseline: {_failures(b)}; candidate: {_failures(c)})"


def _lacking(report: AblationReport, name: str, section: ContinuousComparison) -> list[str]:
    """The arms known to carry no value of ``name`` (cost and quality scores say so per arm)."""
    arms = {"baseline": report.baseline, "candidate": report.candidate}
    if name == "cost":
        return [arm for arm, s in arms.items() if s.cost_total is None and s.cost_trials is None]
    if isinstance(section, QualityComparison) and name in report.quality:
        return [arm for arm, s in arms.items() if s.quality_means.get(name) is None]
    return []


def _unpaired(report: AblationReport, name: str, section: ContinuousComparison) -> str:
    """Why no pair has ``name`` in both arms although some trial has it."""
    lacking = _lacking(report, name, section)
    scorer = ""
    if isinstance(section, QualityComparison) and (
        section.scorer_errors_baseline or section.scorer_errors_candidate
    ):
        scorer = (
            f" (its scorer failed on {section.scorer_errors_baseline} baseline and "
            f"{section.scorer_errors_candidate} candidate trial(s))"
        )
    if len(lacking) == 1:
        return f"the {lacking[0]}'s results carry none{scorer}"
    if lacking:
        return f"neither arm's results carry a value of it{scorer}"
    for arm, s in zip(_ARMS, (report.baseline, report.candidate), strict=True):
        if s.n_trials and not _some_completed(report, s):
            return f"no trial of the {arm} completed ({_failures(s)})"
    reason = f": {section.left_out_reason}" if section.left_out_reason else ""
    return f"{section.n_left_out} pair(s) left out{reason}{scorer}"


def too_few_pairs(report: AblationReport, name: str, needed: int = 2) -> str | None:
    """Why fewer than ``needed`` pairs have metric ``name`` in both arms, as a clause.

    Args:
        report: The analysed report.
        name: The metric (``latency_s``/``latency``, ``cost``, ``tokens``, a quality score or
            any metric of the results).
        needed: The pairs the caller's test needs: 2 for a ratio, and
            :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` for a margin on a mean difference,
            whose t test under-covers below it as the report's interval would.

    Returns:
        The most specific reason the report shows, e.g. ``"the results carry no cost at all: no
        trial of either arm records one"`` or ``"no pair has cost in both arms: the candidate's
        results carry none"``; ``None`` when ``needed`` or more pairs have it (a report
        analysed without a test of it: nothing is missing from the data).
    """
    what = "latency" if name in LATENCY_NAMES else name
    if report.n_paired == 0:
        return "no task was paired"
    section = metric_section(report, name)
    idle = none_completed(report)
    b, c = report.baseline, report.candidate
    if section is None and name == "cost" and any(a.cost_total is not None or a.cost_trials is not None for a in (b, c)):
        units = (b.cost_currency or "unstated", c.cost_currency or "unstated")
        how = "mix currencies" if any(mixes_units(u) for u in units) else "are in different currencies"
        return (  # the analysis drops a cost comparison across currencies
            f"the arms' costs {how} (baseline {units[0]}, candidate {units[1]}), and costs in "
            "different currencies are never compared"
        )
    if section is None:
        both = name in LATENCY_NAMES or name == "cost"  # sections of either arm's values
        if idle is not None:
            return f"{idle}, and no {'trial' if both else 'baseline trial'} records {what}"
        if both:
            return f"the results carry no {what} at all: no trial of either arm records one"
        return f"the baseline's results carry no {what} (no baseline trial records one), so no pair has it"
    if section.n_pairs == 0:
        return f"no pair has {what} in both arms: {_unpaired(report, name, section)}"
    if section.n_pairs == 1 and needed <= 2:
        return f"only 1 pair has {what} in both arms, and the test needs at least 2"
    timeouts = b.timeouts + c.timeouts
    if name in LATENCY_NAMES and timeouts and (idle is not None or section.n_pairs >= needed):
        # the section counts a timed-out trial at the time limit, the test does not
        return f"fewer than {needed} pairs have a measured latency in both arms: " + (
            idle if idle is not None
            else f"{timeouts} trial(s) timed out, and a timed-out trial has no measured latency"
        )  # fmt: skip
    if section.n_pairs < needed:
        pairs = "1 pair has" if section.n_pairs == 1 else f"{section.n_pairs} pairs have"
        ratio = "; the latency ratio gate (max_latency_ratio) holds at any n" if name in LATENCY_NAMES else ""
        return (
            f"only {pairs} {what} in both arms, and a margin on its mean difference needs "
            f"{needed}: below, skewed per-task differences make the t test under-cover, and the "
            "report shows no interval of the mean difference either (docs/STATISTICS.md "
            f"section 4){ratio}"
        )
    return None
