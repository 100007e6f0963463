"""The errors section shared by every format: counts by arm, stage and error type, with tasks.

Shown by default (no ``--details``) whenever a trial errored or timed out, so "17 left out" never
hides 17 connection errors; regressions caused by a candidate error are marked in the regressions
table (:func:`regression_outcome`).
"""

from __future__ import annotations

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
    """True when at least one trial errored or timed out."""
    return bool(report.errors and report.errors.groups)


def error_title(report: AblationReport) -> str:
    """``Errors and timeouts (N trials)``."""
    total = sum(g.count for g in report.errors.groups) if report.errors else 0
    return f"Errors and timeouts ({fmt_noun(total, 'trial')})"


def error_rows(report: AblationReport) -> list[tuple[str, ...]]:
    """One row per (arm, stage, error type): counts, the first task ids and one message."""
    rows: list[tuple[str, ...]] = []
    for g in report.errors.groups if report.errors else []:
        more = g.n_tasks - len(g.task_ids)
        ids = ", ".join(g.task_ids) + (f" ... and {more} more" if more > 0 else "")
        rows.append(
            (g.arm, g.stage, g.error_type, str(g.count), str(g.n_tasks), ids, g.example or "")
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
