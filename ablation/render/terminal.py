"""Terminal report (rich): readable at 80 columns, regressions first.

Order: headline and verdict, regressions (critical first), improvements, the paired table, arm
summaries, tests and intervals, paired metrics (latency, cost, quality), repeated runs and flaky
tasks, non-inferiority, excluded items, categories, gates, provenance; with ``details=True`` a
drill-down of every regressed and improved task.

Every piece of user text (task ids, outputs, errors, categories, agent names) enters rich as a
:class:`rich.text.Text`, never as markup, and passes through :func:`printable`, so neither rich
markup nor terminal escape sequences in an agent's output can act.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ablation.render import _drilldown as drill
from ablation.render import _sections as sections
from ablation.render._breakdowns import (
    category_cap_note,
    flaky_rows,
    repeated_rows,
    show_categories,
    shown_categories,
)
from ablation.render._ci_safe import no_workflow_commands
from ablation.render._drilldown import diff_markup, pair_type_note, run_lines, tool_lines
from ablation.render._errors import (
    error_lines,
    error_note,
    error_title,
    has_errors,
    regression_outcome,
)
from ablation.render._format import (
    DASH,
    cap_list,
    category_of,
    fmt_float,
    fmt_interval,
    fmt_noun,
    fmt_p,
    fmt_pct,
    fmt_pp,
    fmt_ratio,
    fmt_seconds,
    fmt_signed,
    fmt_signed_seconds,
    ordered_details,
    ordered_regressions,
    output_text,
    printable,
    summary_sentence,
    truncate,
    verdict_line,
)
from ablation.render._sequential import SEQUENTIAL_TITLE, sequential_note, sequential_rows
from ablation.report import AblationReport, PairDetail, TrialView

__all__ = ["build_renderables", "candidate_rule", "drilldown", "print_report", "render_terminal", "summary_renderables"]

REGRESSION_CAP = 25
IMPROVEMENT_CAP = 12
EXCLUDED_CAP = 8
OUTPUT_LIMIT = 600


def _text(value: object, style: str = "") -> Text:
    return Text(printable(str(value)), style=style)


def _table(*headers: str, title: str | None = None) -> Table:
    table = Table(box=box.ROUNDED, show_header=True, header_style="bold", title=title, expand=False)
    for header in headers:
        table.add_column(_text(header), overflow="fold")
    return table


def _rule(title: str) -> Rule:
    return Rule(_text(title, "bold"), align="left", style="dim")


def candidate_rule(name: str) -> Rule:
    """The rule heading one candidate's report among several: its name as text, never markup."""
    return Rule(_text(f"candidate: {name}"), characters="=")


def _heading(report: AblationReport) -> Panel:
    ok = report.verdict == "pass"
    body = _text(verdict_line(report), "bold green" if ok else "bold red")  # notes name tools, scorers
    body.append_text(_text("\n" + summary_sentence(report)))
    for note in report.notes:
        body.append_text(_text("\n" + note, "yellow"))
    title = _text(
        f"ablation: {report.provenance.candidate_agent or 'candidate'} vs "
        f"{report.provenance.baseline_agent or 'baseline'}"
    )
    return Panel(body, title=title, title_align="left", border_style="green" if ok else "red")


def _regressions(report: AblationReport, details: bool) -> list[RenderableType]:
    ids = ordered_regressions(report)
    crit = set(report.critical_regressions)
    out: list[RenderableType] = [_rule(sections.regressions_title(report))]
    if not ids:
        return [*out, _text(sections.no_regression_text(report), "green")]
    cats = category_of(report)
    errs = set(report.errored_regressions)
    shown, more = cap_list(ids, 0 if details else REGRESSION_CAP)
    cat = show_categories(report)  # no column of "default" when tasks have no categories
    table = _table("#", "task", *(["category"] if cat else []), *([""] if crit else []),
                   *(["candidate"] if errs else []))
    for i, tid in enumerate(shown, 1):
        mark = [_text("CRITICAL", "bold red") if tid in crit else _text("")] if crit else []
        err = [_text(regression_outcome(errs, tid), "bold yellow")] if errs else []
        where = [_text(cats.get(tid, DASH))] if cat else []
        table.add_row(_text(i), _text(drill.task_label(tid), "red"), *where, *mark, *err)
    out.append(table)
    if more:
        out.append(_text(f"... and {more} more regressions ({len(ids)} in all)", "red"))
    return out


def _improvements(report: AblationReport, details: bool) -> list[RenderableType]:
    ids = list(report.improvements)
    out: list[RenderableType] = [_rule(f"Improvements ({len(ids)})")]
    if not ids:
        return [*out, _text("No task improved.")]
    shown, more = cap_list(ids, 0 if details else IMPROVEMENT_CAP)
    text = _text(", ".join(map(drill.task_label, shown)), "green")
    if more:
        text.append(f" ... and {more} more ({len(ids)} in all)")
    return [*out, text]


def _rows_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    table = _table(*headers)
    for row in rows:
        table.add_row(*map(_text, row))
    return table


def _paired_table(report: AblationReport) -> list[RenderableType]:
    table = _rows_table(["", "candidate pass", "candidate fail", "total"], sections.paired_rows(report))
    return [_rule("Paired outcomes"), table, _text(sections.paired_note(report))]


def _arms(report: AblationReport) -> list[RenderableType]:
    return [_rule("Arms"), _rows_table(["", "baseline", "candidate"], sections.arm_rows(report))]


def _tests(report: AblationReport) -> list[RenderableType]:
    headers = ["quantity", "estimate", "interval / counts", "method"]
    return [_rule("Tests and intervals"), _rows_table(headers, sections.test_rows(report))]


def _metrics(report: AblationReport) -> list[RenderableType]:
    rows = sections.continuous_rows(report)
    if not rows:
        return []
    table = _table("metric", "pairs", "baseline", "candidate", "difference (CI)", "Wilcoxon p")
    methods: dict[str, list[str]] = {}
    for label, comp in rows:
        seconds = comp is report.latency
        fmt = fmt_seconds if seconds else fmt_float
        diff = (
            fmt_signed_seconds(comp.mean_difference)
            if seconds
            else fmt_signed(comp.mean_difference)
        )
        ci = fmt_interval(comp.ci, "s" if seconds else "float", with_level=False)
        table.add_row(
            _text(label),
            _text(comp.n_pairs),
            _text(fmt(comp.baseline_mean)),
            _text(fmt(comp.candidate_mean)),
            _text(f"{diff}\n{ci}"),
            _text(fmt_p(comp.wilcoxon_pvalue)),
        )
        if comp.ci is not None:
            methods.setdefault(f"CI: {comp.ci.method}", []).append(label)
        if comp.wilcoxon_method:
            methods.setdefault(f"p: {comp.wilcoxon_method}", []).append(label)
    notes = [f"{m} ({', '.join(labels)})" for m, labels in methods.items()]
    lat = report.latency
    if lat is not None and lat.geometric_mean_ratio is not None:
        ratio = fmt_interval(lat.ratio_ci, "ratio")
        method = lat.ratio_ci.method if lat.ratio_ci else ""
        notes.insert(
            0,
            f"latency ratio (geometric mean): {fmt_ratio(lat.geometric_mean_ratio)} "
            f"{ratio}, p = {fmt_p(lat.ratio_pvalue)} ({method}); median ratio "
            f"{fmt_ratio(lat.median_ratio)}; faster on {fmt_pct(lat.share_faster)} "
            "of pairs",
        )
    notes += sections.metric_notes(report)
    return [
        _rule("Paired metrics (only pairs where both trials completed)"),
        table,
        *(_text("- " + n, "dim") for n in notes),
    ]


def _repeated(report: AblationReport) -> list[RenderableType]:
    out: list[RenderableType] = []
    if report.repeated is not None:
        table = _rows_table(["repeated runs", "value"], repeated_rows(report))
        out += [_rule("Repeated runs (task is the unit)"), table]
    if report.flaky:
        table = _rows_table(
            ["task", "baseline", "candidate", "flaky in", "p"], flaky_rows(report)
        )
        out += [_rule(f"Flaky tasks ({len(report.flaky)})"), table]
    return out


def _noninferiority(report: AblationReport) -> list[RenderableType]:
    ni, text = report.noninferiority, sections.noninferiority_text(report)
    if ni is None or text is None:
        return []
    style = {"non-inferior": "green", "regression": "red", "inferior": "red"}.get(sections.noninferiority_decision(report) or "", "yellow")
    return [_rule("Non-inferiority (H0: uplift <= -margin)"), _text(text, style)]


def _errors(report: AblationReport) -> list[RenderableType]:
    if not has_errors(report):
        return []
    return [
        _rule(error_title(report)),
        *(_text(line, "yellow") for line in error_lines(report)),
        _text(error_note(report), "yellow"),
    ]
def _sequential(report: AblationReport) -> list[RenderableType]:
    if report.sequential is None:
        return []
    table = _rows_table(["sequential", "value"], sequential_rows(report))
    return [_rule(SEQUENTIAL_TITLE), table, _text(sequential_note(report), "dim")]


def _excluded(report: AblationReport, details: bool) -> list[RenderableType]:
    if not report.excluded:
        return []
    rows = sections.excluded_rows(report, 0 if details else EXCLUDED_CAP)
    return [
        _rule(f"Excluded from the paired analysis ({len(report.excluded)})"),
        _rows_table(["reason", "count", "tasks"], rows),
    ]


def _categories(report: AblationReport) -> list[RenderableType]:
    if not show_categories(report):
        return []
    table = _table("category", "n", "base", "cand", "uplift (CI)", "b / c", "p (adj.)")
    for cat in shown_categories(report):
        table.add_row(
            _text(cat.category),
            _text(cat.n),
            _text(fmt_pct(cat.baseline_pass_rate, 0)),
            _text(fmt_pct(cat.candidate_pass_rate, 0)),
            _text(f"{fmt_pp(cat.uplift)} {fmt_interval(cat.ci, 'pp', with_level=False)}"),
            _text(f"{cat.table.regressions} / {cat.table.improvements}"),
            _text(f"{fmt_p(cat.mcnemar_pvalue)} ({fmt_p(cat.adjusted_pvalue)})"),
        )
    methods = ", ".join(sorted({c.ci.method for c in report.categories if c.ci is not None}))
    note = f"uplift CI: {methods or DASH}; p: McNemar, adjusted across categories"
    cap = category_cap_note(report)
    return [_rule("Categories"), table, _text(note, "dim"), *([_text(cap, "dim")] if cap else [])]


def _gates(report: AblationReport) -> list[RenderableType]:
    out: list[RenderableType] = [_rule("Release gates")]
    if report.gates:
        table = _table("gate", "status", "evidence")
        for g in report.gates:
            style = {"pass": "green", "fail": "bold red", "off": "dim"}.get(g.status, "yellow")
            table.add_row(_text(g.name), _text(g.status.upper(), style), _text(g.evidence))
        out.append(table)
    style = "bold green" if report.verdict == "pass" else "bold red"
    return [*out, _text(verdict_line(report), style)]


def _trial_cell(trial: TrialView | None) -> Text:
    if trial is None:
        return _text("(no trial)", "dim")
    text = _text(sections.trial_facts(trial), "bold")
    if trial.error:
        text.append("\nerror: " + printable(truncate(trial.error, OUTPUT_LIMIT)), style="red")
    if trial.note:
        text.append("\nverifier: " + printable(truncate(trial.note, OUTPUT_LIMIT)), style="yellow")
    output = output_text(trial.output)
    if output:
        text.append("\noutput:", style="dim")
        text.append("\n" + printable(truncate(output, OUTPUT_LIMIT)))
    return text


def _pair_facts(d: PairDetail) -> list[RenderableType]:
    """Input, expected output, every run, tool sequences and the word diff of one pair."""
    def shown(value: object) -> str:
        return printable(truncate(output_text(value), OUTPUT_LIMIT))

    lines = [f"input: {shown(d.input)}"] if d.input is not None else []
    lines += [f"expected: {shown(d.expected_output)}"] if d.expected_output is not None else []
    lines += [printable(line) for line in (*run_lines(d), *tool_lines(d))]
    out: list[RenderableType] = [_text(line, "dim") for line in lines]
    out += [_text(note, "yellow")] if (note := pair_type_note(d)) else []
    if d.diff and any(s.op != "equal" for s in d.diff):
        text = diff_markup(d, printable, ("[-", "-]"), ("{+", "+}"), OUTPUT_LIMIT)
        out.append(_text("diff (baseline -> candidate, [-deleted-] {+inserted+}): " + text))
    return out


def drilldown(details: Iterable[PairDetail]) -> list[RenderableType]:
    """One two-column table per regressed or improved task: baseline | candidate."""
    out: list[RenderableType] = []
    for d in details:
        head = "CRITICAL REGRESSION" if d.critical and d.kind == "regression" else d.kind.upper()
        title = f"{head}: {drill.pair_subject(d)}"
        table = Table(
            box=box.ROUNDED,
            title=_text(title, "bold red" if d.kind == "regression" else "bold green"),
            title_justify="left",
            expand=True,
        )
        table.add_column(_text("baseline"), ratio=1, overflow="fold")
        table.add_column(_text("candidate"), ratio=1, overflow="fold")
        table.add_row(_trial_cell(d.baseline), _trial_cell(d.candidate))
        out += [table, *_pair_facts(d)]
    return out


def build_renderables(report: AblationReport, *, details: bool = False) -> list[RenderableType]:
    """Every section of the terminal report, in order."""
    parts: list[RenderableType] = [
        _heading(report),
        *_regressions(report, details),
        *_improvements(report, details),
        *_errors(report),
        *_sequential(report),
        *_paired_table(report),
        *_arms(report),
        *_tests(report),
        *_metrics(report),
        *_repeated(report),
        *_noninferiority(report),
        *_excluded(report, details),
        *_categories(report),
        *_gates(report),
        _rule("Provenance"),
        *(_text(line, "dim") for line in sections.provenance_lines(report)),
    ]
    if details:
        parts.append(_rule(f"Drill-down ({fmt_noun(len(report.details), 'task')})"))
        if report.details:
            parts += drilldown(ordered_details(report))
        else:
            parts.append(_text("The report carries no per-task details."))
    return parts


def print_report(report: AblationReport, console: Console, details: bool = False) -> None:
    """Print the report on ``console`` (colours when the console supports them)."""
    console.print(Group(*build_renderables(report, details=details)))


def render_terminal(
    report: AblationReport, *, details: bool = False, width: int | None = None
) -> str:
    """The terminal report as plain text (no colour codes), ``width`` columns wide (default 100).

    No line of it is a CI workflow command (:mod:`ablation.render._ci_safe`).
    """
    console = Console(
        width=width or 100, record=True, file=io.StringIO(), force_terminal=False, color_system=None
    )
    print_report(report, console, details=details)
    text = console.export_text(styles=False)
    text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    return no_workflow_commands(text, markup=False)


def summary_renderables(
    headers: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str]
) -> list[RenderableType]:
    """The several-candidates summary: one table and its notes."""
    return [
        _rule("Candidates vs baseline"),
        _rows_table(headers, rows),
        *(_text(n, "dim") for n in notes),
    ]
