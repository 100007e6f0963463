"""What ``ablation compare`` on a numeric ``--field`` writes, in every format.

A numeric comparison (:mod:`ablation.analysis.numeric`) becomes plain-text lines
(:func:`numeric_lines`: a long list of ids shows its first :data:`~ablation.render._sections.TABLE_CAP`
and counts the rest, as the pass-rate report's lists do; the JSON holds every one) and its gates
(:class:`~ablation.report.GateResult`). :func:`numeric_output` writes the terminal text or the
JSON; :func:`numeric_document` writes one Markdown, HTML or JUnit document, however many AFTER
files were compared: a section (JUnit: a ``<testsuite>``) per candidate, then the Holm summary
lines (:func:`numeric_sections`); :func:`numeric_json_document` writes the same document from the
JSON, so that what renders it later (the GitHub Action) cannot disagree with it. User text (task ids, field and file names) is escaped with the report
renderers' helpers: :func:`ablation.render._format.single_line` for the terminal text (control
and bidi characters shown as escapes, a line per line),
:func:`ablation.render.markdown.md_cell` / ``md_table``,
:func:`ablation.render.html.esc` inside :func:`~ablation.render.html.html_page`, and the JUnit
writer of :mod:`ablation.render.junit` (one ``<testcase>`` per gate: a passing gate its evidence as
``<system-out>``, a failed or inconclusive gate
a ``<failure>``, a gate turned off a ``<skipped>``, so ``failures`` is non-zero exactly when the
verdict is ``"fail"`` and the command exits 2).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from ablation.analysis.numeric import NumericComparison, numeric_holm
from ablation.errors import ConfigError, InputError
from ablation.render._breakdowns import listed_ids
from ablation.render._ci_safe import no_workflow_commands
from ablation.render._format import fmt_p, single_line
from ablation.render._sections import TABLE_CAP
from ablation.render.html import esc, html_page
from ablation.render.junit import gate_case, junit_document
from ablation.render.markdown import md_cell, md_table
from ablation.report import REPORT_SCHEMA_VERSION, GateResult

__all__ = [
    "NUMERIC_FORMATS", "NumericSection", "gate_line", "holm_lines", "numeric_document", "numeric_json_document",
    "numeric_lines", "numeric_output", "numeric_sections", "render_numeric",
]  # fmt: skip

#: The ``--format`` values :func:`numeric_document` writes (``json`` and ``terminal``:
#: :func:`numeric_output`).
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
    raise ConfigError(f"no numeric document in format {fmt!r} (known: {', '.join(NUMERIC_FORMATS)})")


def numeric_sections(results: Sequence[NumericComparison], names: Sequence[str]) -> tuple[list[NumericSection], list[str]]:
    """Each comparison's section, named by its AFTER file in ``names``, and the Holm summary lines
    (empty for one comparison): what :func:`numeric_document` is given."""
    summary = holm_lines(numeric_holm(list(results), list(names))) if len(results) > 1 else []
    sections = [NumericSection(n, numeric_lines(r), r.gates, r.verdict) for r, n in zip(results, names, strict=True)]
    return sections, summary


def numeric_json_document(fmt: str, payload: dict[str, Any], names: Sequence[str]) -> str:
    """The ``fmt`` document (:func:`numeric_document`) of the comparisons in ``payload``, the JSON
    :func:`numeric_output` wrote for the AFTER files ``names`` (in their order: the JSON of one
    comparison holds no file name, and that of several keys them by name).

    Raises:
        ValueError: ``payload`` is not such a JSON document (or not of ``names``), or ``fmt`` is
            not in :data:`NUMERIC_FORMATS`.
    """
    kind, candidates = payload.get("document"), payload.get("candidates")
    if kind == "numeric" and len(names) == 1:
        docs = [{k: v for k, v in payload.items() if k not in ("document", "schema_version")}]
    elif kind == "numeric candidates" and len(names) > 1 and isinstance(candidates, dict) and set(names) == set(candidates):
        docs = [candidates[name] for name in names]
    else:
        raise InputError(f"not the numeric comparison JSON of {len(names)} AFTER file(s)")
    results = [NumericComparison.model_validate(doc) for doc in docs]  # a ValidationError is a ValueError
    return numeric_document(fmt, *numeric_sections(results, names))


def _listed(ids: Sequence[str], what: str, cap: int) -> str:
    """``ids`` listed (:func:`~ablation.render._breakdowns.listed_ids`); ``none`` when empty."""
    return listed_ids(ids, what, cap) or "none"


def numeric_lines(c: NumericComparison, cap: int = TABLE_CAP) -> list[str]:
    """The plain-text lines of a comparison before its gates (user text unescaped: a renderer
    escapes it for its format); each list of ids shows its first ``cap``."""
    ci = (
        f"{100 * c.confidence_level:g}% CI [{c.ci_low:.4g}, {c.ci_high:.4g}]"
        if c.ci_low is not None and c.ci_high is not None
        else str(c.ci_note)
    )
    worse, better = ("rise", "drop") if c.lower_is_better else ("drop", "rise")
    lines = [
        f"numeric field {c.field!r}{' (lower is better)' if c.lower_is_better else ''}: {c.n_pairs} paired tasks of {c.n_expected or c.n_pairs} expected",
        f"mean baseline {c.baseline_mean:.4g}, candidate {c.candidate_mean:.4g}, difference "
        f"{c.mean_difference:+.4g} ({ci}, "
        f"paired t {'undefined (zero variance)' if c.t_pvalue is None else f'p = {c.t_pvalue:.3g}'}; "
        f"Wilcoxon p = {c.wilcoxon_pvalue:.3g}; sign test p = "
        f"{c.sign_pvalue:.3g})",
        f"regressions ({worse} > {c.regression_delta:g}): {_listed(c.regressions, 'regressions', cap)}",
        f"improvements ({better} > {c.regression_delta:g}): {_listed(c.improvements, 'improvements', cap)}",
    ]
    if c.only_baseline or c.only_candidate:
        lines.append(f"unpaired: baseline only {_listed(c.only_baseline, 'ids', cap)}; "
                     f"candidate only {_listed(c.only_candidate, 'ids', cap)}")  # fmt: skip
    lacking = set(c.missing_candidate)
    neither = [t for t in c.missing_baseline if t in lacking]
    if neither:
        lines.append(f"no value in either arm: {_listed(neither, 'ids', cap)}")
    if c.unknown:
        lines.append(f"not in --expected-ids (not paired): {_listed(c.unknown, 'ids', cap)}")
    return lines


def gate_line(g: GateResult) -> str:
    """One gate as a line of text."""
    return f"gate {g.name}: {g.status.upper()}: {g.evidence}"


def render_numeric(c: NumericComparison) -> str:
    """A short plain-text report of a numeric comparison: its lines, gates and verdict, each line
    :func:`~ablation.render._format.single_line` (the text goes to a terminal as it is: an id's
    escape sequence, carriage return or newline is shown, never acted on)."""
    lines = [*numeric_lines(c), *map(gate_line, c.gates), f"verdict: {c.verdict.upper()}"]
    return "\n".join(map(single_line, lines))


def holm_lines(summary: dict[str, Any]) -> list[str]:
    """The lines of :func:`~ablation.analysis.numeric.numeric_holm`'s summary."""
    return [summary["note"]] + [f"  {row['name']}: p = {row['pvalue']:.3g}, Holm p = {row['holm_pvalue']:.3g}"
                                for row in summary["rows"]]  # fmt: skip


def numeric_output(results: list[NumericComparison], names: list[str], as_json: bool) -> str:
    """What ``compare --field`` prints as text or JSON: each comparison, and with several AFTER
    files the Holm summary (one JSON document with ``as_json``, its ``document`` naming its kind,
    every id listed)."""
    summary = numeric_holm(results, names) if len(results) > 1 else None
    if as_json:
        docs = [r.model_dump() for r in results]
        doc = {**docs[0], "document": "numeric", "schema_version": REPORT_SCHEMA_VERSION} if summary is None else {
            "document": "numeric candidates", "schema_version": REPORT_SCHEMA_VERSION,
            "candidates": dict(zip(names, docs, strict=True)), "summary": summary,
            "verdict": "pass" if all(r.verdict == "pass" for r in results) else "fail",
        }  # fmt: skip
        return json.dumps(doc, indent=2)
    parts = [(f"candidate: {single_line(name)}\n" if summary is not None else "") + render_numeric(r)
             for r, name in zip(results, names, strict=True)]  # fmt: skip
    if summary is not None:
        parts.append("\n".join(map(single_line, holm_lines(summary))))
    return "\n\n".join(parts)
