"""Renderers of an :class:`~ablation.report.AblationReport`: terminal, Markdown, JSON and HTML.

Usage::

    from ablation.render import render, render_summary
    text = render(report, "markdown", details=True)       # a pull-request comment
    page = render(report, "html")                         # one self-contained page
    table = render_summary([r1, r2], ["v2", "v3"], "terminal")

Only the HTML renderer touches matplotlib (lazily, for its plots); terminal, Markdown and JSON
output never import it. The terminal renderer returns plain text; the command line prints in colour
with :func:`print_report`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from ablation.report import AblationReport

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["FORMATS", "print_report", "render", "render_summary"]

Format = Literal["terminal", "markdown", "json", "html"]
FORMATS: tuple[str, ...] = ("terminal", "markdown", "json", "html", "junit")


def render(
    report: AblationReport,
    fmt: str,
    *,
    details: bool = False,
    width: int | None = None,
) -> str:
    """Render ``report`` as text in ``fmt``.

    Args:
        report: The report.
        fmt: ``"terminal"``, ``"markdown"``, ``"json"``, ``"html"`` or ``"junit"``.
        details: Add the drill-down of regressed and improved tasks (terminal and Markdown; the
            HTML page always has it).
        width: Terminal width in columns (terminal only; default 100).

    Raises:
        ValueError: on an unknown format.
    """
    if fmt == "terminal":
        from ablation.render.terminal import render_terminal

        return render_terminal(report, details=details, width=width)
    if fmt == "markdown":
        from ablation.render.markdown import render_markdown

        return render_markdown(report, details=details)
    if fmt == "json":
        from ablation.render._json import render_json

        return render_json(report)
    if fmt == "html":
        from ablation.render.html import render_html

        return render_html(report)
    if fmt == "junit":
        from ablation.render._ci_safe import no_workflow_commands
        from ablation.render.junit import render_junit

        return no_workflow_commands(render_junit(report), markup=True)
    raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def render_summary(
    reports: Sequence[AblationReport],
    names: Sequence[str],
    fmt: str,
    *,
    width: int | None = None,
) -> str:
    """One row per candidate (all against the same baseline), with each candidate's one-sided p for
    improvement, Holm-adjusted across the candidates.

    Args:
        reports: One report per candidate, each against the same baseline.
        names: The candidates' names, in the same order.
        fmt: ``"terminal"``, ``"markdown"``, ``"json"``, ``"html"`` or ``"junit"``.
        width: Terminal width in columns (terminal only).

    Raises:
        ValueError: on an unknown format, no reports, or a names/reports length mismatch.
    """
    from ablation.render._summary import summary_data, summary_text

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    return summary_text(summary_data(reports, names), fmt, width)


def print_report(report: AblationReport, console: Console, details: bool = False) -> None:
    """Print the terminal report on a :class:`rich.console.Console` (with colours if it has them)."""
    from ablation.render.terminal import print_report as _print

    _print(report, console, details=details)
