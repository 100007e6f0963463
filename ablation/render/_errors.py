"""The errors section shared by every format: counts by arm, stage and error type, with tasks.

Shown by default (no ``--details``) whenever a trial errored or timed out, so "17 left out" never
hides 17 connection errors; regressions caused by a candidate error are marked in the regressions
table (:func:`regression_outcome`). A quality scorer that failed on a trial is listed too, after
the trials' errors, one row per arm, scorer and error type, its stage written ``scorer NAME``
(the trial completed: it is counted in the title apart from the errors and timeouts).
"""

from __future__ import annotations

from ablation.render._drilldown import task_label
from ablation.render._format import fmt_noun
from ablation.report import AblationReport

__all__ = [
    "ERROR_HEADERS",
    "error_lines",
    "error_note",
    "error_rows",
    "error_title",
    "has_errors",
    "regression_outcome",
]

ERROR_HEADERS = ["arm", "stage", "error type", "trials", "tasks", "task ids", "example"]


def has_errors(report: AblationReport) -> bool:
    """True when at least one trial errored or timed out, or a scorer failed on one."""
    return bool(report.errors and (report.errors.groups or report.errors.scorer_groups))


def error_title(report: AblationReport) -> str:
    """``Errors and timeouts (N trials)``, then ``; scorer errors (M trials)`` when a scorer
    failed (``Scorer errors (M trials)`` alone when no trial errored or timed out)."""
    total = sum(g.count for g in report.errors.groups) if report.errors else 0
    scored = sum(g.count for g in report.errors.scorer_groups) if report.errors else 0
    title = f"Errors and timeouts ({fmt_noun(total, 'trial')})"
    if not scored:
        return title
    scorer = f"corer errors ({fmt_noun(scored, 'trial')})"
    return f"{title}; s{scorer}" if total else f"S{scorer}"


def error_rows(report: AblationReport) -> list[tuple[str, ...]]:
    """One row per (arm, stage, error type), then per (arm, scorer, error type): counts, the
    first task ids and one message."""
    rows: list[tuple[str, ...]] = []
    e = report.errors
    for g in [*e.groups, *e.scorer_groups] if e else []:
        more = g.n_tasks - len(g.task_ids)
        ids = ", ".join(map(task_label, g.task_ids)) + (f" ... and {more} more" if more > 0 else "")
        stage = g.stage if g.scorer is None else f"{g.stage} {g.scorer}"
        rows.append(
            (g.arm, stage, g.error_type, str(g.count), str(g.n_tasks), ids, g.example or "")
        )
    return rows


def error_lines(report: AblationReport) -> list[str]:
    """The groups as short lines, for narrow terminals: one line of counts, one example."""
    lines: list[str] = []
    for arm, stage, kind, count, n_tasks, ids, example in error_rows(report):
        lines.append(f"{arm} / {stage} / {kind}: {count} trial(s) on {n_tasks} task(s): {ids}")
        if example:
            lines.append(f"    e.g. {example}")
    return lines


def error_note(report: AblationReport) -> str:
    """Completed trials per arm, and how many regressions are candidate errors."""
    e = report.errors
    if e is None:
        return ""
    arms = "; ".join(
        f"{arm}: {e.completed.get(arm, 0)} of {n} trials completed" for arm, n in e.trials.items()
    )
    n_err = len(report.errored_regressions)
    if n_err:
        arms += (
            f"; {n_err} of {len(report.regressions)} regressions are candidate errors or "
            "timeouts, not wrong answers (marked ERROR in the regressions table)"
        )
    return arms


def regression_outcome(errored: set[str], task_id: str) -> str:
    """``"ERROR"`` when the candidate's trial of a regressed task errored, else ``""``.

    ``errored`` is ``set(report.errored_regressions)``, built once per table.
    """
    return "ERROR" if task_id in errored else ""
