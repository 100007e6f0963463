"""The completeness gate: every expected pair is present and each arm mostly completed.

A comparison that silently shrank cannot be trusted: an interrupted campaign, ids present on one
side only, or an arm whose agent mostly errored must fail the release gates, naming the counts
and the first ids, unless the user turns the gate off (and the report says so).

Contract with sequential campaigns: an excluded item whose reason starts with
:data:`NOT_RUN_PREFIX` was left out on purpose (the campaign stopped at a decision) and is not
missing. Unknown ids (results for tasks outside the suite) are extra, not missing, and per-run
exclusions of errored trials (``on_error="exclude"``) count against the arm's completed share. A
task left out as partly run (fewer than the configured runs stored in an arm,
:func:`ablation.analysis.pairing.leave_out_partly_run`) is listed without a run, so it is a
missing pair like any task left out of the pairing as a whole.

Each arm's share is over its **expected** trials: for every task, the runs seen in either arm.
A run that one arm has and the other lacks (an excluded item whose reason starts with
:data:`UNMATCHED_PREFIX` followed by the arm that has it, as
:func:`ablation.analysis.pairing.unmatched_runs` writes it) is a missing trial of the other arm,
so an arm that supplied 1 of its 3 runs per task completed a third of its trials, not all.
"""

from __future__ import annotations

from collections import Counter

from ablation.analysis.gate_status import listed_ids, turned_off
from ablation.config import GatePolicy
from ablation.report import AblationReport, ExcludedItem, GateResult

__all__ = [
    "GATE_COMPLETENESS",
    "NOT_RUN_PREFIX",
    "UNMATCHED_PREFIX",
    "completeness_gate",
    "missing_pairs",
    "missing_runs",
]

GATE_COMPLETENESS = "complete comparison"
NOT_RUN_PREFIX = "not run (stopped early)"
UNMATCHED_PREFIX = "unmatched run: "
_OTHER = {"baseline": "candidate", "candidate": "baseline"}
_SHOWN = 10


def missing_pairs(report: AblationReport) -> list[ExcludedItem]:
    """Expected pairs absent from the analysis (in the report's order)."""
    return [
        e
        for e in report.excluded
        if e.run is None
        and not e.reason.startswith(NOT_RUN_PREFIX)
        and not e.reason.startswith("unknown task id")
    ]


def missing_runs(report: AblationReport) -> dict[str, int]:
    """Per arm, the runs it lacks that the other arm has for the same task (unmatched runs)."""
    out = {"baseline": 0, "candidate": 0}
    for e in report.excluded:
        if e.run is not None and e.reason.startswith(UNMATCHED_PREFIX):
            has = e.reason[len(UNMATCHED_PREFIX):].split(" ", 1)[0]
            if has in _OTHER:
                out[_OTHER[has]] += 1
    return out


def _arm_counts(report: AblationReport) -> dict[str, tuple[int, int]]:
    """``arm -> (completed, expected trials)``: every trial seen (paired or not), plus the runs
    the arm lacks that the other arm has (:func:`missing_runs`)."""
    lacking = missing_runs(report)
    if report.errors is not None and report.errors.trials:
        e = report.errors
        return {
            arm: (e.completed.get(arm, 0), e.trials[arm] + lacking[arm])
            for arm in ("baseline", "candidate")
        }
    arms = {"baseline": report.baseline, "candidate": report.candidate}
    return {
        arm: (s.n_trials - s.errors - s.timeouts, s.n_trials + lacking[arm])
        for arm, s in arms.items()
    }


def _short_arms(report: AblationReport, policy: GatePolicy) -> list[str]:
    out = []
    lacking = missing_runs(report)
    for arm, (done, total) in _arm_counts(report).items():
        share = done / total if total else 0.0
        if total and share >= policy.min_completed:
            continue
        groups = [g for g in (report.errors.groups if report.errors else []) if g.arm == arm]
        why = "; ".join(
            f"{g.count} {g.error_type} at {g.stage} (tasks {listed_ids(g.task_ids, _SHOWN, g.n_tasks)})"
            for g in groups[:3]
        )
        absent = (
            f", {lacking[arm]} of them missing runs the other arm has" if lacking[arm] else ""
        )
        out.append(
            f"{arm} completed {done} of {total} expected trial(s) ({100 * share:.1f}%, below "
            f"{100 * policy.min_completed:g}%{absent})" + (f": {why}" if why else "")
        )
    return out


def completeness_gate(report: AblationReport, policy: GatePolicy) -> GateResult:
    """Judge completeness: missing pairs and each arm's completed share.

    Returns:
        A ``"fail"`` gate naming what is missing or which arm fell short, ``"pass"`` otherwise,
        or ``"off"`` (with the same facts) when ``policy.require_complete`` is false.
    """
    missing = missing_pairs(report)
    short = _short_arms(report, policy)
    expected = report.n_paired + len(missing)
    facts: list[str] = []
    if missing:
        reasons = Counter(e.reason for e in missing)
        facts.append(
            f"{len(missing)} of {expected} expected pair(s) missing ("
            + "; ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
            + f"), first: {listed_ids([e.task_id for e in missing], _SHOWN)}"
        )
    facts.extend(short)
    counts = ", ".join(
        f"{arm} {done}/{total} completed" for arm, (done, total) in _arm_counts(report).items()
    )
    if not policy.require_complete:
        return GateResult(
            name=GATE_COMPLETENESS,
            status="off",
            evidence=f"{turned_off('require_complete')}; "
            + ("; ".join(facts) if facts else f"all {expected} expected pairs present, {counts}")
            + ".",
            tasks=[e.task_id for e in missing],
        )
    if facts:
        return GateResult(
            name=GATE_COMPLETENESS,
            status="fail",
            evidence="; ".join(facts) + ".",
            tasks=[e.task_id for e in missing],
        )
    return GateResult(
        name=GATE_COMPLETENESS,
        status="pass",
        evidence=f"all {expected} expected pair(s) present; {counts} "
        f"(at least {100 * policy.min_completed:g}% each).",
    )
