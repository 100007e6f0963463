"""Renderers of an :class:`~ablation.report.AblationReport`: terminal, Markdown, JSON, HTML, JUnit.

Usage::

    from ablation.render import render, render_summary
    text = render(report, "markdown", details=True)       # a pull-request comment
    page = render(report, "html")                         # one self-contained page
    table = render_summary([r1, r2], ["v2", "v3"], "terminal")

Only the HTML renderer touches matplotlib (lazily, for its plots); terminal, Markdown and JSON
output never import it. The terminal renderer returns plain text; the command line prints in colour
with :func:`print_report`. The formats live in one registry (:mod:`ablation.render.formats`);
:data:`FORMATS` lists its names and :func:`register_format` adds one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ablation.errors import ConfigError
from ablation.render.formats import FORMATS, ReportFormat, register_format, report_format

if TYPE_CHECKING:
    from rich.console import Console

    from ablation.report import AblationReport

__all__ = [
    "FORMATS",
    "ReportFormat",
    "print_report",
    "register_format",
    "render",
    "render_summary",
    "report_format",
]


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
        fmt: A name of :data:`FORMATS` (built in: ``"terminal"``, ``"markdown"``, ``"json"``,
            ``"html"``, ``"junit"``; more with :func:`register_format`).
        details: Add the drill-down of regressed and improved tasks (terminal and Markdown; the
            HTML page always has it).
        width: Terminal width in columns (terminal only; default 100).

    Raises:
        ValueError: on an unknown format.
    """
    return report_format(fmt).render(report, details=details, width=width)


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
        fmt: A name of :data:`FORMATS` whose format has a summary (built in: ``"terminal"``,
            ``"markdown"``, ``"json"``, ``"html"``; ``"junit"`` has none).
        width: Terminal width in columns (terminal only).

    Raises:
        ValueError: on an unknown format or one without a summary, no reports, or a
            names/reports length mismatch.
    """
    from ablation.render._summary import summary_data

    summary = report_format(fmt).summary
    if summary is None:
        raise ConfigError(f"format {fmt!r} has no several-candidates summary")
    return summary(summary_data(reports, names), width)


def print_report(report: AblationReport, console: Console, details: bool = False) -> None:
    """Print the terminal report on a :class:`rich.console.Console` (with colours if it has them)."""
    from ablation.render.terminal import print_report as _print

    _print(report, console, details=details)
