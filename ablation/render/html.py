"""Self-contained HTML report: one page, inline CSS, inline SVG plots, no scripts.

Agent outputs, errors, task ids, categories, labels and agent names are untrusted: each one is
written through :func:`html.escape` (``quote=True``), and nothing else reaches the page unescaped
except markup built here. The page loads nothing from outside (no external URL, font or script)
and carries a Content-Security-Policy that forbids scripts, as a second line of defence should an
escape ever be missed. A word of user text longer than :data:`LONG_WORD` (a long id, a path) may
wrap anywhere (class ``long`` on its table cell; headings and paragraphs always), so it never
widens the page past the window. Plots come from :mod:`ablation.render.plots`; without matplotlib the page
says how to get them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from ablation.render import _drilldown as drill
from ablation.render import _sections as sections
from ablation.render._breakdowns import (
    CATEGORY_HEADERS,
    FLAKY_HEADERS,
    category_cap_note,
    category_note,
    category_rows,
    flaky_rows,
    repeated_rows,
    show_categories,
)
from ablation.render._ci_safe import no_workflow_commands
from ablation.render._drilldown import diff_markup, pair_type_note, run_lines, tool_lines
from ablation.render._errors import (
    ERROR_HEADERS,
    error_note,
    error_rows,
    error_title,
    regression_outcome,
)
from ablation.render._format import (
    DASH,
    category_of,
    fmt_noun,
    fmt_p,
    ordered_details,
    ordered_regressions,
    output_text,
    printable,
    single_line,
    summary_sentence,
    truncate,
    verdict_line,
)
from ablation.render._sequential import SEQUENTIAL_TITLE, sequential_note, sequential_rows
from ablation.report import AblationReport, PairDetail, TrialView

__all__ = ["LONG_WORD", "esc", "html_page", "html_table", "long_word", "page_title", "render_html"]

OUTPUT_LIMIT = 20_000
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;
padding:0 1.2em 3em;color:#1f2933;background:#fff}
h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.15em;border-bottom:1px solid #d9e2ec;
padding-bottom:.2em;margin-top:1.8em}h3{font-size:1em;margin:.2em 0}
.verdict{padding:.8em 1.1em;border-radius:6px;margin-top:1em}
.verdict.pass{background:#e3f9e5;border-left:6px solid #31a14c}
.verdict.fail{background:#ffe3e3;border-left:6px solid #d64545}
table{border-collapse:collapse;margin:.5em 0;font-size:.93em}
th,td{border:1px solid #d9e2ec;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f0f4f8}td.num{text-align:right;font-variant-numeric:tabular-nums}
.critical{color:#fff;background:#d64545;padding:0 .4em;border-radius:3px;font-weight:600}
.status-pass{color:#1f7a35;font-weight:600}.status-fail{color:#c22;font-weight:600}
.status-inconclusive{color:#b7791f;font-weight:600}.status-off{color:#777;font-weight:600}
.ids{line-height:1.8}.ids span{background:#f0f4f8;border-radius:3px;padding:.1em .35em;
display:inline-block;max-width:100%;overflow-wrap:anywhere}
.long,h1,h2,h3,p,li{overflow-wrap:anywhere}.note{color:#52606d;font-size:.9em}.plot svg{max-width:100%;height:auto}
.pair{border:1px solid #d9e2ec;border-radius:6px;margin:1em 0;padding:.6em .8em}
.pair.regression{border-left:5px solid #d64545}.pair.improvement{border-left:5px solid #2e86c1}
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:.8em}
@media (max-width:700px){.sbs{grid-template-columns:1fr}}
pre{background:#f5f7fa;border:1px solid #e4e7eb;padding:.5em;white-space:pre-wrap;
overflow-wrap:anywhere;max-height:28em;overflow:auto;margin:.3em 0;font-size:.88em}
pre.error{background:#fff5f5;border-color:#f5c2c2}
footer{margin-top:2.5em;color:#52606d;font-size:.85em}
"""


def esc(value: object) -> str:
    """``html.escape(str(value), quote=True)``: the only way user text enters the page."""
    return html.escape(printable(str(value)), quote=True)


#: A word longer than this (a long id, a path) may wrap anywhere (class ``long``); shorter words
#: and numbers never break inside. Words end at white space and hyphens, where a browser may
#: break a line anyway.
LONG_WORD = 12
_WORD_END = re.compile(r"[\s-]+")


def long_word(text: str) -> bool:
    """Whether ``text`` holds a word longer than :data:`LONG_WORD` characters."""
    return any(len(word) > LONG_WORD for word in _WORD_END.split(text))


def _td(text: object, markup: str | None = None) -> str:
    """A table cell of ``text`` (escaped; or ``markup`` built from it), of class ``long`` when
    ``text`` holds a long word."""
    shown = esc(text) if markup is None else markup
    return f'<td class="long">{shown}</td>' if long_word(str(text)) else f"<td>{shown}</td>"


def html_table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], *, num: Sequence[int] = ()
) -> str:
    """A table whose cells are all escaped; columns listed in ``num`` are right-aligned."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{esc(c)}</td>' if i in num else _td(c)
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def page_title(report: AblationReport) -> str:
    """The page's ``<title>`` text (before escaping)."""
    p = report.provenance
    return (
        f"ablation report: {p.candidate_agent or 'candidate'} vs {p.baseline_agent or 'baseline'}"
        f" (verdict {report.verdict})"
    )


def _section(ident: str, title: str, *body: str) -> str:
    return f'<section id="{ident}"><h2>{esc(title)}</h2>{"".join(body)}</section>'


def _paragraph(text: str, cls: str = "") -> str:
    return f'<p class="{cls}">{esc(text)}</p>' if cls else f"<p>{esc(text)}</p>"


def _more(total: int, what: str) -> str:
    """The note under a list capped at :data:`~ablation.render._sections.TABLE_CAP` items."""
    more = total - sections.TABLE_CAP
    return _paragraph(sections.more_line(more, total, what), "note") if more > 0 else ""


def _regressions(report: AblationReport) -> str:
    ids = ordered_regressions(report)
    crit = set(report.critical_regressions)
    title = sections.regressions_title(report)
    if not ids:
        return _section("regressions", title, _paragraph(sections.no_regression_text(report)))
    cats = category_of(report)
    errs = set(report.errored_regressions)
    with_detail = {d.task_id for d in report.details if d.kind == "regression"}
    cat = show_categories(report)  # no column of "default" when tasks have no categories
    rows = []
    for i, tid in enumerate(ids[: sections.TABLE_CAP], 1):
        label = esc(drill.task_label(tid))
        name = f'<a href="#pair-{i}-r">{label}</a>' if tid in with_detail else label
        mark = ""
        if crit:
            mark = (
                "<td>" + ('<span class="critical">CRITICAL</span>' if tid in crit else "") + "</td>"
            )
        err = f"<td>{esc(regression_outcome(errs, tid))}</td>" if errs else ""
        rows.append(
            f'<tr><td class="num">{i}</td>{_td(tid, name)}'
            + (_td(cats.get(tid, DASH)) if cat else "") + f"{mark}{err}</tr>"
        )
    head = (
        "<th>#</th><th>task</th>" + ("<th>category</th>" if cat else "")
        + ("<th></th>" if crit else "")
        + ("<th>candidate</th>" if errs else "")
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return _section("regressions", title, table + _more(len(ids), "regressions"))


def _improvements(report: AblationReport) -> str:
    ids = report.improvements
    shown = ids[: sections.TABLE_CAP]
    body = (
        '<div class="ids">' + "\n".join(f"<span>{esc(drill.task_label(t))}</span>" for t in shown) + "</div>"
        if ids
        else _paragraph("No task improved.")
    ) + _more(len(ids), "improvements")
    return _section("improvements", f"Improvements ({len(ids)})", body)


def _table_section(
    ident: str, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], *extra: str
) -> str:
    return _section(ident, title, html_table(headers, rows), *extra) if rows else ""


def _notes(notes: Sequence[str]) -> str:
    return "".join(_paragraph(n, "note") for n in notes)


def _gates(report: AblationReport) -> str:
    body = ""
    if report.gates:
        rows = "".join(
            f'<tr><td>{esc(g.name)}</td><td class="status-{esc(g.status)}">'
            f"{esc(g.status.upper())}</td><td>{esc(g.evidence)}</td>"
            f'<td class="num">{esc(fmt_p(g.pvalue))}</td>'
            f'<td class="num">{esc(fmt_p(g.adjusted_pvalue))}</td></tr>'
            for g in report.gates
        )
        body = (
            "<table><thead><tr><th>gate</th><th>status</th><th>evidence</th><th>p</th>"
            f"<th>adj. p</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    return _section("gates", "Release gates", body, f"<p><b>{esc(verdict_line(report))}</b></p>")


def _trial(trial: TrialView | None, arm: str) -> str:
    if trial is None:
        return f"<div><h4>{arm}</h4><p>no trial</p></div>"
    parts = [f"<div><h4>{arm}</h4>", _paragraph(sections.trial_facts(trial))]
    if trial.error:
        parts.append(f'<pre class="error">{esc(truncate(trial.error, OUTPUT_LIMIT))}</pre>')
    if trial.note:
        parts.append(_paragraph("verifier: " + truncate(trial.note, OUTPUT_LIMIT), "note"))
    output = output_text(trial.output)
    if output:
        parts.append(f"<pre>{esc(truncate(output, OUTPUT_LIMIT))}</pre>")
    else:
        parts.append(_paragraph("(no output)" if trial.output is None else "(empty output)", "note"))
    return "".join(parts) + "</div>"


def _input(d: PairDetail) -> str:
    if d.input is None:
        return ""
    return f"<p><b>input:</b></p><pre>{esc(truncate(output_text(d.input), OUTPUT_LIMIT))}</pre>"


def _pair_extras(d: PairDetail) -> str:
    """Every run, the tool sequences and the word diff (``<del>``/``<ins>``), all escaped."""
    lines = [*run_lines(d), *tool_lines(d)]
    out = f"<pre>{esc(chr(10).join(lines))}</pre>" if lines else ""
    out += _paragraph(note, "note") if (note := pair_type_note(d)) else ""
    if any(s.op != "equal" for s in d.diff):
        marked = diff_markup(d, esc, ("<del>", "</del>"), ("<ins>", "</ins>"), OUTPUT_LIMIT)
        out += f'<p><b>diff</b> (baseline → candidate):</p><pre class="diff">{marked}</pre>'
    return out


def _drilldown(report: AblationReport) -> str:
    if not report.details:
        return ""
    anchors = {tid: i for i, tid in enumerate(ordered_regressions(report), 1)}
    used: set[str] = set()
    items = []
    for d in ordered_details(report):
        critical = d.critical and d.kind == "regression"
        anchor = ""
        if d.kind == "regression" and d.task_id in anchors and d.task_id not in used:
            used.add(d.task_id)
            anchor = f' id="pair-{anchors[d.task_id]}-r"'
        head = ('<span class="critical">CRITICAL</span> ' if critical else "") + esc(d.kind.upper())
        expected = (
            f"<p><b>expected:</b></p><pre>{esc(truncate(output_text(d.expected_output), OUTPUT_LIMIT))}</pre>"
            if d.expected_output is not None
            else ""
        )
        items.append(
            f'<article class="pair {d.kind}"{anchor}><h3>{head}: {esc(drill.pair_subject(d))}</h3>{_input(d)}'
            f'{expected}<div class="sbs">{_trial(d.baseline, "baseline")}{_trial(d.candidate, "candidate")}</div>'
            f"{_pair_extras(d)}</article>"
        )
    return _section("drilldown", f"Drill-down ({fmt_noun(len(report.details), 'task')})", "".join(items))


def _plots(report: AblationReport) -> tuple[dict[str, str], str]:
    try:
        from ablation.render.plots import report_plots

        plots = report_plots(report)
    except ImportError:
        return {}, _paragraph("Plots need matplotlib: pip install ablation[html]", "note")
    return {caption: f'<figure class="plot">{svg}</figure>' for caption, svg in plots}, ""


def html_page(title: str, body: str) -> str:
    """Wrap ``body`` (already safe markup) in the page skeleton with inline CSS and the CSP.

    ``title`` is untrusted text: it is escaped and written on one line (a newline is shown as
    ``\\n``). No line of the page, head or body, is a CI workflow command
    (:mod:`ablation.render._ci_safe`).
    """
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(single_line(title))}</title><style>{CSS}</style></head>\n<body>{body}</body></html>\n"
    )
    return no_workflow_commands(page, markup=True)


def _analysis_sections(report: AblationReport, plots: dict[str, str], ni: str | None) -> list[str]:
    """Paired table, arms, tests and intervals, metrics, repeated runs, flaky, non-inferiority."""
    return [
        _section(
            "paired",
            "Paired outcomes",
            html_table(["", "candidate pass", "candidate fail", "total"], sections.paired_rows(report)),
            _paragraph(sections.paired_note(report), "note"),
            plots.get("Paired outcomes", ""),
        ),
        _section("arms", "Arms", html_table(["", "baseline", "candidate"], sections.arm_rows(report))),
        _section(
            "tests",
            "Tests and intervals",
            html_table(
                ["quantity", "estimate", "interval / counts", "method"], sections.test_rows(report)
            ),
            plots.get("Intervals", ""),
        ),
        _table_section(
            "metrics",
            "Paired metrics (pairs where both trials completed)",
            sections.METRIC_HEADERS,
            sections.metric_rows(report),
            _notes(sections.metric_notes(report)),
        ),
        _table_section(
            "repeated",
            "Repeated runs (the task is the unit)",
            ["", "value"],
            repeated_rows(report),
        ),
        _table_section(
            "flaky", f"Flaky tasks ({len(report.flaky)})", FLAKY_HEADERS, flaky_rows(report)
        ),
        _section("noninferiority", "Non-inferiority (H0: uplift <= -margin)", _paragraph(ni)) if ni else "",
    ]


def render_html(report: AblationReport, *, details: bool = True) -> str:
    """The report as one self-contained HTML page.

    Args:
        report: The report.
        details: Include the drill-down (default ``True``: a page has room for it).
    """
    plots, plot_note = _plots(report)
    p = report.provenance
    agents = f"{p.candidate_agent or 'candidate'} vs {p.baseline_agent or 'baseline'}"
    ni = sections.noninferiority_text(report)
    verdict_class = "pass" if report.verdict == "pass" else "fail"
    body = [
        f'<header class="verdict {verdict_class}"><h1>{esc(verdict_line(report))}</h1>'
        f"{_paragraph(summary_sentence(report))}"
        + "".join(_paragraph(note, "note") for note in report.notes)
        + f"{_paragraph(agents, 'note')}</header>",
        plot_note,
        _regressions(report),
        _improvements(report),
        _table_section(
            "errors", error_title(report), ERROR_HEADERS, error_rows(report),
            _paragraph(error_note(report), "note"),
        ),
        _table_section(
            "sequential", SEQUENTIAL_TITLE, ["", "value"], sequential_rows(report),
            _paragraph(sequential_note(report), "note"), plots.get("Confidence sequence", ""),
        ) if report.sequential else "",
        *_analysis_sections(report, plots, ni),
        _table_section(
            "excluded",
            f"Excluded from the paired analysis ({len(report.excluded)})",
            ["task", "run", "reason"],
            [
                (drill.task_label(e.task_id), "" if e.run is None else str(e.run), e.reason)
                for e in report.excluded[: sections.TABLE_CAP]
            ],
            _more(len(report.excluded), "exclusions"),
        ),
        _table_section(
            "categories",
            "Categories",
            CATEGORY_HEADERS,
            category_rows(report),
            _paragraph(category_note(report), "note"),
            _paragraph(cap, "note") if (cap := category_cap_note(report)) else "",
            plots.get("Uplift by category", ""),
        ),
        _gates(report),
        _drilldown(report) if details else "",
        "<footer>" + "<br>".join(esc(line) for line in sections.provenance_lines(report)) + "</footer>",
    ]
    return html_page(page_title(report), "\n".join(b for b in body if b))
