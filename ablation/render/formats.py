"""The registry of report formats: one entry per format, the only list of their names.

Every format is a :class:`ReportFormat` of one shape: a name, a function that renders one report,
optionally a function that renders the several-candidates summary, and the media type and file
suffix of what it writes. :func:`ablation.render.render` and
:func:`ablation.render.render_summary` look the format up here; :data:`ablation.render.FORMATS`
(the command line's ``--format`` choices and the ``format`` key of ``[tool.ablation]``) is a live
view of the registry's names, so a format registered with :func:`register_format` is usable
everywhere at once::

    register_format(ReportFormat("tsv", render_tsv, media_type="text/tab-separated-values",
                                 suffix=".tsv"))

Assumptions: a renderer is a pure function of the report and its options (no I/O); the built-in
renderers import their modules when first called, so importing this registry stays cheap (no
rich, no matplotlib, no pydantic models) and the command line can read the names at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from ablation.errors import ConfigError

if TYPE_CHECKING:
    from ablation.report import AblationReport

__all__ = [
    "FORMATS",
    "REPORT_FORMATS",
    "ReportFormat",
    "ReportRenderer",
    "SeveralRenderer",
    "SummaryRenderer",
    "register_format",
    "report_format",
]

#: ``renderer(report, details=..., width=...) -> text``: one report in one format.
ReportRenderer = Callable[..., str]
#: ``summary(data, width) -> text``: the rows and notes of :func:`~ablation.render._summary.summary_data`.
SummaryRenderer = Callable[[Mapping[str, Any], "int | None"], str]
#: ``several(reports, names) -> text``: several candidates' reports (one baseline) as one document.
SeveralRenderer = Callable[[Sequence["AblationReport"], Sequence[str]], str]


class ReportFormat(NamedTuple):
    """One report format (an immutable record: a named tuple, cheap to import at start-up).

    Attributes:
        name: What ``--format`` and :func:`ablation.render.render` call it.
        render: ``render(report, *, details, width) -> str``; a format without a drill-down or a
            width ignores those options.
        media_type: The media type of the text (for a CI upload or an HTTP response).
        suffix: The file suffix a report in this format is written with.
        summary: ``summary(data, width) -> str`` for several candidates against one baseline, or
            ``None`` when the format has no summary (then several reports are written one after
            the other without it).
        several: ``several(reports, names) -> str``: several candidates' reports as one
            document, for a format whose documents cannot follow one another (JUnit XML has one
            root: one ``<testsuite>`` per candidate); ``None``: the reports one after the
            other, then the summary.
    """

    name: str
    render: ReportRenderer
    media_type: str = "text/plain"
    suffix: str = ".txt"
    summary: SummaryRenderer | None = None
    several: SeveralRenderer | None = None


#: Name -> format, in the order the names are listed to the user.
REPORT_FORMATS: dict[str, ReportFormat] = {}


def register_format(fmt: ReportFormat) -> ReportFormat:
    """Add ``fmt`` to the registry (replacing a format of the same name) and return it."""
    REPORT_FORMATS[fmt.name] = fmt
    return fmt


def report_format(name: str) -> ReportFormat:
    """The registered format called ``name``.

    Raises:
        ValueError: when no format has that name (the message lists the names).
    """
    try:
        return REPORT_FORMATS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r}: use one of {', '.join(FORMATS)}") from None


class _FormatNames(Sequence[str]):
    """The registered format names, always current (a tuple-like view of :data:`REPORT_FORMATS`)."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return tuple(REPORT_FORMATS)[index]

    def __len__(self) -> int:
        return len(REPORT_FORMATS)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(REPORT_FORMATS))

    def __contains__(self, name: object) -> bool:
        return name in REPORT_FORMATS

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


#: The names of the registered report formats (a live view: registering a format adds its name).
FORMATS: Sequence[str] = _FormatNames()


def _terminal(report: AblationReport, *, details: bool = False, width: int | None = None) -> str:
    from ablation.render.terminal import render_terminal

    return render_terminal(report, details=details, width=width)


def _markdown(report: AblationReport, *, details: bool = False, width: int | None = None) -> str:
    from ablation.render.markdown import render_markdown

    return render_markdown(report, details=details)


def _json(report: AblationReport, *, details: bool = False, width: int | None = None) -> str:
    from ablation.render._json import render_json

    return render_json(report)


def _html(report: AblationReport, *, details: bool = False, width: int | None = None) -> str:
    from ablation.render.html import render_html

    return render_html(report)  # a page always has room for the drill-down


def _junit(report: AblationReport, *, details: bool = False, width: int | None = None) -> str:
    from ablation.render._ci_safe import no_workflow_commands
    from ablation.render.junit import render_junit

    return no_workflow_commands(render_junit(report), markup=True)


def _junit_several(reports: Sequence[AblationReport], names: Sequence[str]) -> str:
    from ablation.render._ci_safe import no_workflow_commands
    from ablation.render.junit import render_junit_candidates

    return no_workflow_commands(render_junit_candidates(reports, names), markup=True)


def _summary(fmt: str) -> SummaryRenderer:
    """The summary renderer ``summary_<fmt>`` of :mod:`ablation.render._summary`, imported when called."""

    def summary(data: Mapping[str, Any], width: int | None) -> str:
        from ablation.render import _summary

        return getattr(_summary, f"summary_{fmt}")(data, width)  # type: ignore[no-any-return]

    return summary


register_format(ReportFormat("terminal", _terminal, "text/plain", ".txt", _summary("terminal")))
register_format(ReportFormat("markdown", _markdown, "text/markdown", ".md", _summary("markdown")))
register_format(ReportFormat("json", _json, "application/json", ".json", _summary("json")))
register_format(ReportFormat("html", _html, "text/html", ".html", _summary("html")))
register_format(ReportFormat("junit", _junit, "application/xml", ".xml", several=_junit_several))
