"""Markdown, HTML and JUnit documents of ``ablation compare`` on a numeric ``--field``.

The numeric comparison (:mod:`ablation.analysis.numeric`) gives its plain-text lines and its
gates (:class:`~ablation.report.GateResult`); this module writes them as one document, however
many AFTER files were compared: a section (JUnit: a ``<testsuite>``) per candidate, then the
Holm summary lines. User text (task ids, field and file names) is escaped with the report
renderers' helpers: :func:`ablation.render.markdown.md_cell` / ``md_table``,
:func:`ablation.render.html.esc` inside :func:`~ablation.render.html.html_page`, and the JUnit
writer of :mod:`ablation.render.junit` (one ``<testcase>`` per gate: a failed or inconclusive gate
a ``<failure>``, a gate turned off a ``<skipped>``, so ``failures`` is non-zero exactly when the
verdict is ``"fail"`` and the command exits 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ablation.render._ci_safe import no_workflow_commands
from ablation.render._format import fmt_p
from ablation.render.html import esc, html_page
from ablation.render.junit import gate_case, junit_document
from ablation.render.markdown import md_cell, md_table
from ablation.report import GateResult

__all__ = ["NUMERIC_FORMATS", "NumericSection", "numeric_document"]

#: The ``--format`` values a numeric comparison writes here (``json`` and ``terminal`` are text
#: of :mod:`ablation.analysis.numeric`).
NUMERIC_FORMATS = ("markdown", "html", "junit")

_HEADERS = ["gate", "status", "evidence", "p"]


class NumericSection(NamedTuple):
    """One candidate's comparison: its name (the AFTER file), lines, gates and verdict."""

    name: str
    lines: list[str]
    gates: list[GateResult]
    verdict: str


def _title(s: NumericSection) -> str:
    return f"ablation compare (numeric field): {s.name}: verdict {s.verdict.upper()}"


def _markdown(sections: Sequence[NumericSection], summary: Sequence[str]) -> str:
    out: list[str] = []
    for s in sections:
        rows = [(g.name, g.status.upper(), g.evidence, fmt_p(g.pvalue)) for g in s.gates]
        out += [
            f"## {md_cell(_title(s))}", "", *(f"- {md_cell(line)}" for line in s.lines), "",
            "### Release gates", md_table(_HEADERS, rows), "", f"**verdict: {s.verdict.upper()}**", "",
        ]  # fmt: skip
    if summary:
        out += [md_cell(summary[0]), "", *(f"- {md_cell(line.strip())}" for line in summary[1:])]
    return no_workflow_commands("\n".join(out).rstrip(), markup=True)


def _html(sections: Sequence[NumericSection], summary: Sequence[str]) -> str:
    body = []
    for s in sections:
        rows = "".join(
            f'<tr><td>{esc(g.name)}</td><td class="status-{esc(g.status)}">{esc(g.status.upper())}'
            f'</td><td>{esc(g.evidence)}</td><td class="num">{esc(fmt_p(g.pvalue))}</td></tr>'
            for g in s.gates
        )
        verdict = "pass" if s.verdict == "pass" else "fail"
        body.append(
            f'<section><header class="verdict {verdict}"><h1>{esc(_title(s))}</h1></header><ul>'
            + "".join(f"<li>{esc(line)}</li>" for line in s.lines)
            + "</ul><h2>Release gates</h2><table><thead><tr>"
            + "".join(f"<th>{esc(h)}</th>" for h in _HEADERS)
            + f"</tr></thead><tbody>{rows}</tbody></table></section>"
        )
    if summary:
        body.append(
            f"<section><p>{esc(summary[0])}</p><ul>"
            + "".join(f"<li>{esc(line.strip())}</li>" for line in summary[1:])
            + "</ul></section>"
        )
    failed = any(s.verdict != "pass" for s in sections)
    title = f"ablation compare (numeric field): verdict {'FAIL' if failed else 'PASS'}"
    return html_page(title, "".join(body)).rstrip("\n")


def _junit(sections: Sequence[NumericSection]) -> str:
    suites = []
    for s in sections:
        cases = [gate_case(g) for g in s.gates]
        suites.append((s.name if len(sections) == 1 else f"ablation: {s.name}", cases))
    if len(sections) == 1:
        suites = [("ablation", suites[0][1])]
    return junit_document(suites)  # type: ignore[arg-type]


def numeric_document(fmt: str, sections: Sequence[NumericSection], summary: Sequence[str] = ()) -> str:
    """The ``fmt`` (one of :data:`NUMERIC_FORMATS`) document of every candidate's section and the
    Holm ``summary`` lines (empty for one candidate; JUnit leaves them out: they are no gate).

    Raises:
        ValueError: an ``fmt`` not in :data:`NUMERIC_FORMATS`.
    """
    if fmt == "markdown":
        return _markdown(sections, summary)
    if fmt == "html":
        return _html(sections, summary)
    if fmt == "junit":
        return _junit(sections)
    raise ValueError(f"no numeric document in format {fmt!r} (known: {', '.join(NUMERIC_FORMATS)})")
