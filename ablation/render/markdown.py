r"""Markdown report for a pull-request comment (GitHub-flavoured Markdown).

Headline and verdict first, then regressions (critical first), improvements, and GitHub tables for
the numbers. Tables are always valid: a header row, a separator row, and the same number of cells
in every row. User text in a table cell, a heading, a list or a paragraph is escaped for Markdown
(``|``, backticks, emphasis, brackets, ``#``, ``!``, the ``$`` of math) and for HTML (``<``,
``>``, ``&``), and newlines become ``<br>``, so it never ends a block or a table row; where it
starts a line, a list or thematic-break marker is escaped too. Outside ``<pre>`` (where GitHub links nothing), a
zero-width space follows each ``@`` before a name and ``#`` before a number of user text
(:func:`unlinked`), so a task id ``@org/team`` or ``org/repo#123`` in a pull-request comment
notifies nobody and cross-references no issue, and still reads as written; URLs and ``www.``
names are broken the same way, so user text adds no link. The drill-down sits in
``<details>`` blocks: a task's ``<summary>`` is HTML-escaped on one line (newlines shown as
``\n``: a blank line would end the HTML block and let the rest be read as Markdown), and outputs
are HTML-escaped inside ``<pre>`` (a ``<pre>`` block runs to its closing tag, so blank lines in an
output cannot end it early).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

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
from ablation.render._drilldown import (
    diff_markup,
    pair_subject,
    pair_type_note,
    run_lines,
    task_label,
    tool_lines,
)
from ablation.render._errors import (
    ERROR_HEADERS,
    error_note,
    error_rows,
    error_title,
    has_errors,
    regression_outcome,
)
from ablation.render._format import (
    DASH,
    cap_list,
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

__all__ = ["md_cell", "md_table", "render_markdown", "unlinked"]

IMPROVEMENT_CAP = 30
REGRESSION_CAP = 50
EXCLUDED_CAP = 20
OUTPUT_LIMIT = 2000
_MD_SPECIAL = set("\\`*_[]|~#!$")  # "$": GitHub reads $...$ as math (styled, sized text)


def _esc(text: str) -> str:
    """HTML-escape untrusted text for a ``<pre>`` block, control characters shown as escapes."""
    return html.escape(printable(text))


#: What GitHub links in a comment's text: an ``@`` before a name (a mention, or an e-mail
#: address), a ``#`` or ``GH`` before a number (a reference), a URL's ``://`` and a bare ``www.``.
_GITHUB_LINK = re.compile(
    r"@(?=[A-Za-z0-9])|#(?=[0-9])|:(?=//)|(?<![A-Za-z0-9])(?:[Ww]{3}(?=\.)|[Gg][Hh](?=-[0-9]))"
)


def unlinked(text: str) -> str:
    r""":func:`printable` text with a zero-width space after each ``@`` of a mention and ``#`` or
    ``GH`` of a reference, and inside each URL's ``://`` and bare ``www.``.

    GitHub reads ``@name`` and ``@org/team`` in a comment's text (not in ``<pre>`` or ``<code>``)
    as mentions, which notify, and ``#123``, ``org/repo#123``, ``GH-123`` as references, which
    link and note the comment in that issue's timeline; it turns URLs, ``www.`` names and e-mail
    addresses into links (GFM autolinks). A character between the sign and the name breaks each,
    and a reader sees the text unchanged. A zero-width space of the text itself is already shown as ``\u200b`` by
    :func:`printable`, so each one on the page is this function's.
    """
    return _GITHUB_LINK.sub(lambda m: m.group() + "\u200b", printable(text))


def _esc_inline(text: str) -> str:
    """HTML-escape untrusted text for an element outside ``<pre>`` (a ``<summary>``, an ``<i>``)."""
    return html.escape(unlinked(text))


def md_cell(value: object) -> str:
    """Escape text for one cell of a GitHub table (or any inline Markdown position)."""
    out: list[str] = []
    for ch in unlinked(str(value)):
        if ch in _MD_SPECIAL:
            out.append("\\" + ch)
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "&":
            out.append("&amp;")
        elif ch == "\n":
            out.append("<br>")
        elif ch == "\r":
            continue
        else:
            out.append(ch)
    return "".join(out)


#: What makes a line a list item, a thematic break, a setext underline or an indented code block,
#: at its start (``#``, ``>``, ``*``, ``_``, ``~``, backticks and ``|`` are escaped by md_cell anyway).
_LINE_START = re.compile(r"[ \t]+|[-+=]|\d{1,9}(?=[.)])")


def _md_line(text: str) -> str:
    """:func:`md_cell` text that starts a line of its own: a leading block marker is escaped."""
    cell = md_cell(text)
    m = _LINE_START.match(cell)
    if m is None:
        return cell
    lead = m.group()
    if lead[0] in " \t":
        safe = "".join("&#32;" if ch == " " else "&#9;" for ch in lead)
    elif lead[0].isdigit():
        return lead + "\\" + cell[len(lead):]
    else:
        safe = "\\" + lead
    return safe + cell[len(lead):]


class _Markup(str):
    """Markdown this module wrote itself, which :func:`md_table` puts in a cell unescaped."""

    __slots__ = ()


#: The mark of a critical regression in the regressions table (bold).
_CRITICAL = _Markup("**CRITICAL**")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub table; cells are escaped with :func:`md_cell` (but this module's own
    :class:`_Markup`), short rows are padded."""
    width = len(headers)
    lines = [
        "| " + " | ".join(md_cell(h) for h in headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    for row in rows:
        cells = [c if isinstance(c, _Markup) else md_cell(c) for c in row][:width]
        cells += [""] * (width - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ids(ids: Sequence[str], cap: int) -> str:
    shown, more = cap_list(ids, cap)
    named = [task_label(t) for t in shown]
    text = ", ".join([_md_line(t) for t in named[:1]] + [md_cell(t) for t in named[1:]])
    return text + (f" {sections.more_line(more, len(ids), 'improvements')}" if more else "")


def _regressions(report: AblationReport) -> list[str]:
    ids = ordered_regressions(report)
    crit = set(report.critical_regressions)
    head = f"### {sections.regressions_title(report)}"
    if not ids:
        return [head, sections.no_regression_text(report)]
    cats = category_of(report)
    errs = set(report.errored_regressions)
    shown, more = cap_list(ids, REGRESSION_CAP)
    cat = show_categories(report)  # no column of "default" when tasks have no categories
    rows = [
        (
            i, task_label(tid), *([cats.get(tid, DASH)] if cat else []),
            *([_CRITICAL if tid in crit else ""] if crit else []),
            *([regression_outcome(errs, tid)] if errs else []),
        )
        for i, tid in enumerate(shown, 1)
    ]
    headers = ["#", "task", *(["category"] if cat else []), *(["critical"] if crit else []),
               *(["candidate"] if errs else [])]
    out = [head, md_table(headers, rows)]
    if more:
        out.append(sections.more_line(more, len(ids), "regressions"))
    return out


def _table_section(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]
) -> list[str]:
    return [title, md_table(headers, rows)] if rows else []


def _category_notes(report: AblationReport) -> list[str]:
    """The methods under the category table, and how many more categories there are."""
    if not show_categories(report):
        return []
    cap = category_cap_note(report)
    return ["", md_cell(category_note(report)), *(["", md_cell(cap)] if cap else [])]


def _notes(notes: Sequence[str], lead: str) -> list[str]:
    return ["", lead + "; ".join(md_cell(n) for n in notes) + "."] if notes else []


def _gates(report: AblationReport) -> list[str]:
    out = ["### Release gates"]
    if report.gates:
        rows = [
            (g.name, g.status.upper(), g.evidence, fmt_p(g.pvalue), fmt_p(g.adjusted_pvalue))
            for g in report.gates
        ]
        out += [md_table(["gate", "status", "evidence", "p", "adj. p"], rows), ""]
    return [*out, f"**{md_cell(verdict_line(report))}**"]


def _trial_html(trial: TrialView | None, arm: str) -> str:
    if trial is None:
        return f"<b>{arm}</b>: no trial\n"
    parts = [f"<b>{arm}</b>: {md_cell(sections.trial_facts(trial))}\n"]
    if trial.error:
        text = _esc(truncate(trial.error, OUTPUT_LIMIT))
        parts.append(f"\n<pre>error: {text}</pre>\n")
    if trial.note:
        parts.append(f"\n<pre>verifier: {_esc(truncate(trial.note, OUTPUT_LIMIT))}</pre>\n")
    output = output_text(trial.output)
    if output:
        parts.append(f"\n<pre>{_esc(truncate(output, OUTPUT_LIMIT))}</pre>\n")
    return "".join(parts)


def _pair_extras(d: PairDetail) -> list[str]:
    """Every run, the tool sequences and the word diff (``<del>``/``<ins>`` in ``<pre>``)."""
    lines = [*run_lines(d), *tool_lines(d)]
    out = [f"\n<pre>{_esc(chr(10).join(lines))}</pre>\n"] if lines else []
    out += [f"\n<i>{_esc_inline(note)}</i>\n"] if (note := pair_type_note(d)) else []
    if any(s.op != "equal" for s in d.diff):
        marked = diff_markup(d, _esc, ("<del>", "</del>"), ("<ins>", "</ins>"), OUTPUT_LIMIT)
        out.append(f"\n<b>diff</b> (baseline → candidate):\n<pre>{marked}</pre>\n")
    return out


def _drilldown(details: Sequence[PairDetail]) -> list[str]:
    out = [f"<details><summary>Drill-down: {fmt_noun(len(details), 'regressed and improved task')}</summary>\n"]
    for d in details:
        head = "CRITICAL REGRESSION" if d.critical and d.kind == "regression" else d.kind.upper()
        title = f"{head}: {pair_subject(d)}"
        out += [
            f"<details><summary>{_esc_inline(single_line(title))}</summary>\n",
            *(
                [f"<b>expected</b>:\n<pre>{_esc(truncate(output_text(d.expected_output), OUTPUT_LIMIT))}</pre>\n"]
                if d.expected_output is not None
                else []
            ),
            *(
                [f"<b>input</b>:\n<pre>{_esc(truncate(output_text(d.input), OUTPUT_LIMIT))}</pre>\n"]
                if d.input is not None
                else []
            ),
            _trial_html(d.baseline, "baseline"),
            _trial_html(d.candidate, "candidate"),
            *_pair_extras(d),
            "</details>\n",
        ]
    out.append("</details>")
    return out


def render_markdown(report: AblationReport, *, details: bool = False) -> str:
    """The report as a GitHub pull-request comment.

    Args:
        report: The report.
        details: Add a collapsed drill-down of every regressed and improved task. Long lists
            (regressions, improvements, excluded ids) are capped either way, with a count; the
            full lists are in the JSON report.

    Returns:
        The Markdown; no line of it is a CI workflow command (:mod:`ablation.render._ci_safe`).
    """
    mark = "✅" if report.verdict == "pass" else "❌"
    improvements = _ids(report.improvements, IMPROVEMENT_CAP)
    parts: list[list[str]] = [
        [
            f"## {mark} ablation: {md_cell(verdict_line(report))}",
            md_cell(summary_sentence(report)),
            *(f"- {md_cell(note)}" for note in report.notes),
        ],
        _regressions(report),
        [f"### Improvements ({len(report.improvements)})", improvements or "No task improved."],
        _table_section(f"### {error_title(report)}", ERROR_HEADERS, error_rows(report))
        + (["", md_cell(error_note(report))] if has_errors(report) else []),
        _table_section(f"### {SEQUENTIAL_TITLE}", ["", "value"], sequential_rows(report))
        + (["", md_cell(sequential_note(report))] if report.sequential else []),
        [
            "### Paired outcomes",
            md_table(["", "candidate pass", "candidate fail", "total"], sections.paired_rows(report)),
            "",
            md_cell(sections.paired_note(report)),
        ],
        ["### Arms", md_table(["", "baseline", "candidate"], sections.arm_rows(report))],
        [
            "### Tests and intervals",
            md_table(
                ["quantity", "estimate", "interval / counts", "method"], sections.test_rows(report)
            ),
        ],
        _table_section(
            "### Paired metrics (pairs where both trials completed)",
            sections.METRIC_HEADERS,
            sections.metric_rows(report),
        )
        + _notes(sections.metric_notes(report), "Left out and scorer errors: "),
        _table_section(
            "### Repeated runs (the task is the unit)", ["", "value"], repeated_rows(report)
        ),
        _table_section(
            f"### Flaky tasks ({len(report.flaky)})", FLAKY_HEADERS, flaky_rows(report)
        ),
    ]
    ni = sections.noninferiority_text(report)
    if ni is not None:
        parts.append(["### Non-inferiority (H0: uplift <= -margin)", md_cell(ni)])
    parts += [
        _table_section(
            f"### Excluded from the paired analysis ({len(report.excluded)})",
            ["reason", "count", "tasks"],
            sections.excluded_rows(report, EXCLUDED_CAP),
        ),
        _table_section("### Categories", CATEGORY_HEADERS, category_rows(report))
        + _category_notes(report),
        _gates(report),
    ]
    prov = "<br>\n".join(md_cell(line) for line in sections.provenance_lines(report))
    parts.append([f"<sub>{prov}</sub>"])
    if details and report.details:
        parts.append(_drilldown(ordered_details(report)))
    text = "\n\n".join("\n".join(block) for block in parts if block) + "\n"
    return no_workflow_commands(text, markup=True)
