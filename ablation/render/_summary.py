"""Several candidates against one baseline: one row per candidate, Holm across candidates.

Each candidate's claim of improvement (its report's one-sided test, H1 "candidate better": the
one-sided exact McNemar test with one run) is Holm-adjusted over all candidates (family-wise
error rate, the right control when the best candidate will be picked). Holm is for these claims
of improvement only; a candidate's own gates are judged unadjusted, so a regression never hides
behind the number of candidates. The reports are assumed
to share a baseline and a task suite; when their baseline pass counts, baseline agents or suite
fingerprints differ, a note says so instead of silently comparing unlike things.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ablation.render._ci_safe import no_workflow_commands
from ablation.render._format import fmt_level, fmt_p, fmt_pct, fmt_pp
from ablation.report import AblationReport

__all__ = [
    "SUMMARY_HEADERS",
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


def summary_data(reports: Sequence[AblationReport], names: Sequence[str]) -> dict[str, Any]:
    """Rows (raw numbers) and notes for :func:`ablation.render.render_summary`.

    Raises:
        ValueError: if ``reports`` is empty or ``names`` has a different length.
    """
    if not reports:
        raise ValueError("render_summary needs at least one report")
    if len(reports) != len(names):
        raise ValueError(f"{len(reports)} reports but {len(names)} names")
    from ablation.stats import adjust_pvalues

    better = [_improvement_p(r) for r in reports]
    holm = [float(x) for x in adjust_pvalues(better, method="holm")]
    rows = []
    for name, r, adj, p_better in zip(names, reports, holm, better, strict=True):
        iv = r.uplift.ci  # the headline, as every renderer shows it
        rows.append(
            {
                "name": name,
                "n_paired": r.n_paired,
                "baseline_pass_rate": r.baseline.pass_rate,
                "candidate_pass_rate": r.candidate.pass_rate,
                "uplift": r.uplift.estimate,
                "uplift_ci": iv.model_dump(),
                "regressions": r.table.regressions,
                "critical_regressions": len(r.critical_regressions),
                "improvements": r.table.improvements,
                "mcnemar_pvalue": r.mcnemar.pvalue,
                "improvement_pvalue": p_better,
                "holm_pvalue": adj,
                "summary": r.summary,
                "verdict": r.verdict if r.gates else "not gated",
            }
        )
    methods = sorted({r.uplift.ci.method for r in reports})
    notes = [
        "base / cand: pass rates; b / c: regressions / improvements; p: one-sided test of "
        f"improvement (H1: candidate better; {_methods(reports)}); "
        f"Holm p: adjusted across {len(reports)} candidates (claims of improvement); "
        f"uplift interval: {', '.join(methods)} at "
        f"{fmt_level(reports[0].provenance.confidence_level)}."
    ]
    for label, key in (
        ("baseline pass counts", lambda r: (r.baseline.passes, r.baseline.n_trials)),
        ("baseline agents", lambda r: r.provenance.baseline_agent),
        ("suite fingerprints", lambda r: r.provenance.suite_fingerprint),
    ):
        if len({key(r) for r in reports}) > 1:
            notes.append(
                f"Warning: the reports differ in {label}; they may not share one baseline."
            )
    stops = [f"{n}: {r.sequential.gate} after {r.sequential.pairs} pairs"
             for n, r in zip(names, reports, strict=True) if r.sequential is not None]
    if stops:
        notes.append(
            "Sequential campaigns (each stops on its own, so their baselines cover different "
            "tasks; p and Holm p are descriptive, the verdicts use the anytime-valid decisions "
            "with alpha split across candidates): " + "; ".join(stops) + "."
        )
    return {"rows": rows, "notes": notes}


def _improvement_p(report: AblationReport) -> float:
    """One-sided p for "candidate better": the report's own test, else the exact McNemar tail."""
    if report.uplift_test is not None:
        return report.uplift_test.pvalue_better
    from ablation.stats import mcnemar

    return float(mcnemar(report.mcnemar.b, report.mcnemar.c, alternative="greater").pvalue)


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
