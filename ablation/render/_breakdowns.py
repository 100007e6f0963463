"""Breakdown tables as plain rows of text: repeated runs, flaky tasks and categories.

Shared by the Markdown, HTML and terminal renderers (like :mod:`ablation.render._sections`).
A suite can have as many categories as tasks: the category table and plot of a rendered report
show at most :data:`CATEGORY_CAP` of them, chosen by :func:`shown_categories`, with a line saying
how many more there are and which rule chose the shown ones; the JSON report keeps every one.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

from ablation.render._drilldown import task_label
from ablation.render._format import (
    DASH,
    cap_list,
    fmt_float,
    fmt_interval,
    fmt_p,
    fmt_pct,
    fmt_pp,
)
from ablation.render._sections import TABLE_CAP, more_line
from ablation.report import AblationReport, CategoryBreakdown

__all__ = [
    "CATEGORY_CAP",
    "CATEGORY_HEADERS",
    "CATEGORY_RULE",
    "FLAKY_HEADERS",
    "category_cap_note",
    "category_note",
    "category_rows",
    "flaky_rows",
    "listed_ids",
    "repeated_rows",
    "show_categories",
    "shown_categories",
]

Row = tuple[str, ...]
#: Categories a rendered report's table and plot show at most (the cap of its other long lists).
CATEGORY_CAP = TABLE_CAP
#: Which categories are shown when there are more than the cap, in the words of the note.
CATEGORY_RULE = "with the most tasks, ties broken by the largest |uplift|"


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


def listed_ids(ids: Sequence[str], what: str, cap: int = TABLE_CAP) -> str:
    """``ids`` as a rendered report lists them: the first ``cap``, each named by
    :func:`~ablation.render._drilldown.task_label`, then how many more (:func:`more_line`, ``what``
    naming them); ``""`` when there are none."""
    shown, more = cap_list(ids, cap)
    return ", ".join(map(task_label, shown)) + (f" {more_line(more, len(ids), what)}" if more else "")


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
        ("stable regressions", listed_ids(rep.stable_regressions, "stable regressions") or DASH),
        ("stable improvements", listed_ids(rep.stable_improvements, "stable improvements") or DASH),
    ]
    return rows


def flaky_rows(report: AblationReport) -> list[Row]:
    """One row per flaky task (see ``FLAKY_HEADERS``)."""
    return [
        (
            task_label(fl.task_id),
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


def shown_categories(report: AblationReport, cap: int = CATEGORY_CAP) -> list[CategoryBreakdown]:
    """The categories a table or plot shows, in the report's order: every one when there are at
    most ``cap``, else the ``cap`` with the most tasks, ties broken by the largest absolute
    uplift (an uplift that is not a number counts as the smallest), then by the report's order."""
    cats = report.categories
    if len(cats) <= cap:
        return list(cats)

    def rank(i: int) -> tuple[int, float, int]:
        u = cats[i].uplift
        return -cats[i].n, -abs(u) if math.isfinite(u) else 1.0, i

    return [cats[i] for i in sorted(heapq.nsmallest(cap, range(len(cats)), key=rank))]


def category_cap_note(report: AblationReport, cap: int = CATEGORY_CAP) -> str:
    """``""`` when every category is shown; else how many more there are, where the full list
    is, and which rule chose the ``cap`` shown (:func:`shown_categories`)."""
    total = len(report.categories)
    if total <= cap:
        return ""
    return f"{more_line(total - cap, total, 'categories')}; shown: the {cap} {CATEGORY_RULE}."


def category_rows(report: AblationReport) -> list[Row]:
    """One row per shown category (see ``CATEGORY_HEADERS`` and :func:`shown_categories`);
    empty when not worth showing."""
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
        for c in shown_categories(report)
    ]


def category_note(report: AblationReport) -> str:
    """Which interval and test the category table uses."""
    methods = sorted({c.ci.method for c in report.categories if c.ci is not None})
    return f"CI: {', '.join(methods) or DASH}; p: McNemar, adjusted across categories."


