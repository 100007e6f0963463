"""Breakdown tables as plain rows of text: repeated runs, flaky tasks and categories.

Shared by the Markdown, HTML and terminal renderers (like :mod:`ablation.render._sections`).
"""

from __future__ import annotations

from ablation.render._format import (
    DASH,
    fmt_float,
    fmt_interval,
    fmt_p,
    fmt_pct,
    fmt_pp,
)
from ablation.report import AblationReport

__all__ = [
    "CATEGORY_HEADERS",
    "FLAKY_HEADERS",
    "category_note",
    "category_rows",
    "flaky_rows",
    "repeated_rows",
    "show_categories",
]

Row = tuple[str, ...]


CATEGORY_HEADERS = (
    "category",
    "n",
    "baseline",
    "candidate",
    "uplift",
    "CI",
    "b",
    "c",
    "p",
    "adj. p",
)
FLAKY_HEADERS = ("task", "baseline passes", "candidate passes", "flaky in", "p")


def repeated_rows(report: AblationReport) -> list[tuple[str, str]]:
    """The repeated-runs block as (quantity, value) rows (empty for one run per task)."""
    rep = report.repeated
    if rep is None:
        return []
    rows = [
        ("runs x tasks", f"{rep.runs} x {rep.n_tasks}"),
        ("mean difference", fmt_pp(rep.mean_difference)),
        (rep.t_ci.method, f"{fmt_interval(rep.t_ci, 'pp')}, p = {fmt_p(rep.t_pvalue)}"),
    ]
    if rep.cluster_ci is not None:
        rows.append((rep.cluster_ci.method, fmt_interval(rep.cluster_ci, "pp")))
    rows += [
        (
            "ICC baseline / candidate",
            f"{fmt_float(rep.icc_baseline)} / {fmt_float(rep.icc_candidate)}",
        ),
        (
            "design effect baseline / candidate",
            f"{fmt_float(rep.design_effect_baseline)} / {fmt_float(rep.design_effect_candidate)}",
        ),
        ("stable regressions", ", ".join(rep.stable_regressions) or DASH),
        ("stable improvements", ", ".join(rep.stable_improvements) or DASH),
    ]
    return rows


def flaky_rows(report: AblationReport) -> list[Row]:
    """One row per flaky task (see ``FLAKY_HEADERS``)."""
    return [
        (
            fl.task_id,
            f"{fl.baseline_passes}/{fl.baseline_runs}",
            f"{fl.candidate_passes}/{fl.candidate_runs}",
            ", ".join(fl.flaky_in),
            fmt_p(fl.pvalue) + (f" ({fl.method})" if fl.method else ""),
        )
        for fl in report.flaky
    ]


def show_categories(report: AblationReport) -> bool:
    """False when the only category is the default one (it would repeat the overall table)."""
    cats = report.categories
    return bool(cats) and not (len(cats) == 1 and cats[0].category == "default")


def category_rows(report: AblationReport) -> list[Row]:
    """One row per category (see ``CATEGORY_HEADERS``); empty when not worth showing."""
    if not show_categories(report):
        return []
    return [
        (
            c.category,
            str(c.n),
            fmt_pct(c.baseline_pass_rate),
            fmt_pct(c.candidate_pass_rate),
            fmt_pp(c.uplift),
            fmt_interval(c.ci, "pp"),
            str(c.table.regressions),
            str(c.table.improvements),
            fmt_p(c.mcnemar_pvalue),
            fmt_p(c.adjusted_pvalue),
        )
        for c in report.categories
    ]


def category_note(report: AblationReport) -> str:
    """Which interval and test the category table uses."""
    methods = sorted({c.ci.method for c in report.categories if c.ci is not None})
    return f"CI: {', '.join(methods) or DASH}; p: McNemar, adjusted across categories."


