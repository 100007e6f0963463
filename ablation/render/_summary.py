"""Several candidates against one baseline: one row per candidate, Holm across candidates.

Every report is shown after :func:`~ablation.analysis.candidates.holm_claims` (the one place the
rule is applied; re-exported here): each candidate's claim of improvement Holm-adjusted across the
candidates, the adjusted p written into its report (``improvement_holm_pvalue``), so every
renderer, the summary rows and the JSON state the same claim. The reports are assumed to share a
baseline and a task suite; when their baseline pass counts, baseline agents or suite fingerprints
differ, a note says so instead of silently comparing unlike things. A passing row beside a figure
on the harmful side (its interval below 0, its sentence "candidate is worse", or a sequential
campaign's anytime-valid interval below 0) gets its report's verdict note below the table, so the
table's PASS never stands silently beside it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ablation.analysis.candidates import holm_claims, improvement_p
from ablation.errors import ConfigError
from ablation.render._ci_safe import no_workflow_commands
from ablation.render._format import fmt_float, fmt_level, fmt_p, fmt_pct, fmt_pp
from ablation.render._sections import counted
from ablation.report import REPORT_SCHEMA_VERSION, AblationReport, Claim, Interval
from ablation.report_items import stop_words

__all__ = [
    "SUMMARY_HEADERS",
    "CandidatesDocument",
    "SummaryRow",
    "candidates_document",
    "holm_claims",
    "summary_data",
    "summary_html",
    "summary_json",
    "summary_markdown",
    "summary_rows",
    "summary_terminal",
]

SUMMARY_HEADERS = (
    "candidate",
    "base",
    "cand",
    "uplift [CI]",
    "b / c",
    "p",
    "Holm p",
    "verdict",
)


_FROZEN = ConfigDict(frozen=True, extra="forbid")


class SummaryRow(BaseModel):
    """One candidate's row: raw numbers; ``summary`` is its report's claim after :func:`holm_claims`
    (an improvement only when ``holm_pvalue`` is below alpha); ``verdict`` its own gates' verdict."""

    model_config = _FROZEN

    name: str
    n_paired: int
    baseline_pass_rate: float
    candidate_pass_rate: float
    uplift: float
    uplift_ci: Interval
    regressions: int
    critical_regressions: int
    improvements: int
    mcnemar_pvalue: float
    improvement_pvalue: float
    holm_pvalue: float
    summary: Claim
    verdict: Literal["pass", "fail", "not gated"]


class CandidatesSummary(BaseModel):
    """The rows of :func:`summary_data` and the notes under them."""

    model_config = _FROZEN

    rows: list[SummaryRow]
    notes: list[str]


class CandidateReport(BaseModel):
    """One candidate of a :class:`CandidatesDocument`: its name and its report."""

    model_config = _FROZEN

    name: str
    report: AblationReport


class CandidatesDocument(BaseModel):
    """The ``--format json`` document of several candidates (``run --candidate A --candidate B``,
    ``compare BEFORE A B``): each report after :func:`holm_claims`, and the summary."""

    model_config = _FROZEN

    document: Literal["candidates"]
    schema_version: int = REPORT_SCHEMA_VERSION
    candidates: list[CandidateReport]
    summary: CandidatesSummary


def summary_data(reports: Sequence[AblationReport], names: Sequence[str]) -> dict[str, Any]:
    """Rows (raw numbers, :class:`SummaryRow`) and notes for :func:`ablation.render.render_summary`,
    of the reports after :func:`holm_claims`.

    Raises:
        ValueError: if ``reports`` is empty or ``names`` has a different length.
    """
    if not reports:
        raise ConfigError("render_summary needs at least one report")
    if len(reports) != len(names):
        raise ConfigError(f"{len(reports)} reports but {len(names)} names")
    reports = holm_claims(reports)
    rows = []
    for name, r in zip(names, reports, strict=True):
        p_better = improvement_p(r)
        holm = p_better if r.improvement_holm_pvalue is None else r.improvement_holm_pvalue
        rows.append(SummaryRow(
            name=name, n_paired=r.n_paired, baseline_pass_rate=r.baseline.pass_rate,
            candidate_pass_rate=r.candidate.pass_rate, uplift=r.uplift.estimate,
            uplift_ci=r.uplift.ci,  # the headline, as every renderer shows it
            regressions=r.table.regressions, critical_regressions=len(r.critical_regressions),
            improvements=r.table.improvements, mcnemar_pvalue=r.mcnemar.pvalue,
            improvement_pvalue=p_better, holm_pvalue=holm, summary=r.summary,
            verdict=r.verdict if r.gates else "not gated",
        ).model_dump())  # fmt: skip
    methods = sorted({r.uplift.ci.method for r in reports})
    family = max(r.improvement_holm_candidates or len(reports) for r in reports)
    notes = [
        "base / cand: pass rates; b / c: regressions / improvements; p: one-sided test of "
        f"improvement (H1: candidate better; {_methods(reports)}); "
        f"Holm p: adjusted across {family} candidates (a claim of improvement needs Holm p "
        f"below alpha {fmt_float(reports[0].provenance.alpha)}; regressions and gates are judged "
        "unadjusted); "
        f"uplift interval: {', '.join(methods)} at "
        f"{fmt_level(reports[0].provenance.confidence_level)}."
    ]
    for label, key in (
        ("baseline pass counts", lambda r: (r.baseline.passes, counted(r.baseline))),
        ("baseline agents", lambda r: r.provenance.baseline_agent),
        ("suite fingerprints", lambda r: r.provenance.suite_fingerprint),
    ):
        if len({key(r) for r in reports}) > 1:
            notes.append(
                f"Warning: the reports differ in {label}; they may not share one baseline."
            )
    stops = [
        f"{n}: stopped after {r.sequential.pairs} pairs {stop_words(r.sequential)}, "
        f"{r.sequential.tasks_run} of {r.sequential.n_tasks} tasks run"
        + (" (p, Holm p and interval descriptive)" if r.sequential.fixed_n_descriptive else "")
        for n, r in zip(names, reports, strict=True) if r.sequential is not None
    ]  # fmt: skip
    for n, r in zip(names, reports, strict=True):
        if r.gates and r.verdict == "pass" and _harmful_side(r):
            notes.append(
                f"{n}: PASS beside a figure on the harmful side: "
                f"{r.verdict_note or 'see its report'}."
            )
    if stops:
        notes.append(
            "Sequential campaigns (each stops on its own, so their baselines cover different "
            "tasks; after a stop before every task ran the fixed-n figures are descriptive; the "
            "regression e-process and the anytime-valid intervals use alpha split across "
            "candidates, and a campaign that ran every task is also judged by the fixed-n "
            "one-sided test at alpha): " + "; ".join(stops) + "."
        )
    return {"rows": rows, "notes": notes}


def candidates_document(reports: Sequence[AblationReport], names: Sequence[str]) -> dict[str, Any]:
    """The ``--format json`` document of several candidates, as plain data (its layout is
    :class:`CandidatesDocument`): every report after :func:`holm_claims`, then the summary.

    Raises:
        ValueError: as :func:`summary_data`.
    """
    reports = holm_claims(reports)
    return {
        "document": "candidates",
        "schema_version": REPORT_SCHEMA_VERSION,
        "candidates": [
            {"name": n, "report": json.loads(r.model_dump_json())}
            for n, r in zip(names, reports, strict=True)
        ],
        "summary": summary_data(reports, names),
    }


def _harmful_side(r: AblationReport) -> bool:
    """Whether the row's interval, the report's sentence or its anytime-valid interval says the
    candidate is worse (a passing row then gets its verdict note beside the table)."""
    seq = r.sequential
    return (
        r.uplift.ci.high < 0
        or r.summary == "regression"
        or (seq is not None and seq.interval.high < 0)
    )


def _methods(reports: Sequence[AblationReport]) -> str:
    names = {r.uplift_test.method if r.uplift_test else "one-sided exact McNemar" for r in reports}
    return ", ".join(sorted(names))


def summary_rows(data: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The rows of :func:`summary_data` as text cells (see :data:`SUMMARY_HEADERS`)."""
    out: list[tuple[str, ...]] = []
    for row in data["rows"]:
        ci = row["uplift_ci"]
        crit = f" ({row['critical_regressions']} critical)" if row["critical_regressions"] else ""
        out.append(
            (
                row["name"],
                fmt_pct(row["baseline_pass_rate"]),
                fmt_pct(row["candidate_pass_rate"]),
                f"{fmt_pp(row['uplift'])} [{fmt_pp(ci['low'])}, {fmt_pp(ci['high'])}]",
                f"{row['regressions']}{crit} / {row['improvements']}",
                fmt_p(row["improvement_pvalue"]),
                fmt_p(row["holm_pvalue"]),
                str(row["verdict"]).upper(),
            )
        )
    return out


def summary_json(data: Mapping[str, Any], width: int | None = None) -> str:
    """The summary as JSON: the rows' raw numbers and the notes."""
    return json.dumps(data, indent=2) + "\n"


def summary_markdown(data: Mapping[str, Any], width: int | None = None) -> str:
    """The summary as a Markdown table with its notes."""
    from ablation.render.markdown import md_cell, md_table

    notes = "\n\n".join(md_cell(n) for n in data["notes"])
    text = f"### Candidates vs baseline\n\n{md_table(SUMMARY_HEADERS, summary_rows(data))}\n\n{notes}\n"
    return no_workflow_commands(text, markup=True)


def summary_html(data: Mapping[str, Any], width: int | None = None) -> str:
    """The summary as one self-contained HTML page."""
    from ablation.render.html import esc, html_page, html_table

    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in data["notes"])
    body = f"<h1>Candidates vs baseline</h1>{html_table(SUMMARY_HEADERS, summary_rows(data))}{notes}"
    return html_page("ablation: candidates vs baseline", body)


def summary_terminal(data: Mapping[str, Any], width: int | None = None) -> str:
    """The summary as plain terminal text, ``width`` columns wide (default 100)."""
    from rich.console import Console

    from ablation.render.terminal import summary_renderables

    console = Console(
        width=width or 100,
        record=True,
        file=io.StringIO(),
        force_terminal=False,
        color_system=None,
    )
    for part in summary_renderables(SUMMARY_HEADERS, summary_rows(data), data["notes"]):
        console.print(part)
    text = console.export_text(styles=False)
    text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    return no_workflow_commands(text, markup=False)
