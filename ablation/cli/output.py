"""Writing reports in the chosen format, and the exit code they imply."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ablation.cli.parser import UsageError
from ablation.cli.user_io import ClosedPipeSafe

__all__ = [
    "EXIT_ERROR",
    "EXIT_GATE",
    "EXIT_OK",
    "check_output",
    "emit",
    "exit_code",
    "say_sandbox_unavailable",
    "without_wall_clock",
]

EXIT_OK, EXIT_ERROR, EXIT_GATE = 0, 1, 2


def emit(
    reports: list[Any], names: list[str], s: dict[str, Any], stream: TextIO | None = None
) -> int:
    """Write the reports (and, for several candidates, the summary); return the exit code.

    With several candidates every report is written after
    :func:`~ablation.render._summary.holm_claims` (claims of improvement Holm-adjusted across
    them), so each one's sentence, its JSON and the summary state the same claim.

    ``stream``: where a report without ``--output`` goes (default ``sys.stdout``; ``run`` passes
    the stream of :func:`ablation.cli.user_io.user_output_to_stderr`).
    """
    from ablation.cli.metric_names import check_metric_names
    from ablation.render import render, render_summary, report_format
    from ablation.render._summary import candidates_document, holm_claims

    check_metric_names(reports, s)
    # a reader that goes away early (``| head``) ends the output quietly, the exit code kept
    out_stream: Any = ClosedPipeSafe(sys.stdout if stream is None else stream)
    reports = holm_claims(reports)

    if not s.get("timestamps"):
        reports = [without_wall_clock(r) for r in reports]
    fmt = s.get("format") or "terminal"
    details = bool(s.get("details"))
    out: Path | None = s.get("output")
    _github_step_summary(reports)
    if s.get("quiet") and out is None:
        return exit_code(reports)  # --quiet: the exit code is the whole answer
    several = len(reports) > 1
    if fmt == "json" and several:
        text = json.dumps(candidates_document(reports, names), indent=2)
    elif fmt == "html" and several:
        if out is None:
            raise UsageError("HTML for several candidates needs --output FILE.html (one page each)")
        pages = []
        for i, report in enumerate(reports, start=1):
            page = out.with_name(f"{out.stem}.candidate-{i}{out.suffix or '.html'}")
            page.write_text(render(report, "html", details=details), encoding="utf-8")
            pages.append(page)
        text = render_summary(reports, names, "html")
        print("candidate pages: " + ", ".join(str(p) for p in pages), file=sys.stderr)
    elif fmt == "terminal" and out is None:
        _print_terminal(reports, names, details, out_stream)
        return exit_code(reports)
    elif several and (spec := report_format(fmt)).several is not None:
        text = spec.several(reports, names)  # one document (JUnit XML has one root)
    else:
        parts = [render(r, fmt, details=details) for r in reports]
        if several and report_format(fmt).summary is not None:
            parts.append(render_summary(reports, names, fmt))
        text = "\n\n".join(parts)
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
        print(f"report written to {out}", file=sys.stderr)
    else:
        out_stream.write(text + "\n")
        out_stream.flush()
    return exit_code(reports)


def check_output(s: dict[str, Any]) -> None:
    """Refuse an ``--output`` that cannot be written, before the command reads or runs anything
    (a campaign would otherwise spend every agent call and fail at the end).

    Nothing is created or truncated: an existing report stays as it was until the new one is
    written in its place. Checked: the folder exists and a file can be created in it (an unnamed
    temporary file, gone when closed), and an existing target is not a folder and opens for
    appending (which changes nothing); a target that is not a regular file (a pipe, a device) is
    only checked for write permission, as opening a pipe would wait for its reader.

    Raises:
        UsageError: one line naming the flag, the path and what is wrong.
    """
    out = s.get("output")
    if out is None:
        return
    path = Path(out)
    problem = _unwritable(path)
    if problem is not None:
        raise UsageError(f"argument --output: cannot write the report to {path}: {problem}")


def _unwritable(path: Path) -> str | None:
    """Why a report cannot be written to ``path`` (see :func:`check_output`), or ``None``."""
    import stat
    import tempfile

    folder = path.absolute().parent
    try:
        if path.exists():
            mode = path.stat().st_mode
            if stat.S_ISDIR(mode):
                return "it is a folder"
            if not stat.S_ISREG(mode):
                return None if os.access(path, os.W_OK) else "permission denied"
            with open(path, "ab"):
                return None
        if not folder.is_dir():
            return f"no folder {folder}" if not folder.exists() else f"{folder} is not a folder"
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def without_wall_clock(report: Any) -> Any:
    """The report with its start and finish times replaced by ``SOURCE_DATE_EPOCH`` (or none).

    Wall-clock times change from one invocation to the next; without ``--timestamps`` the same
    inputs and seed must give the same bytes in every format.
    """
    from ablation.analysis.build import source_date

    prov = report.provenance
    if prov.started_at is None and prov.finished_at is None:
        return report
    epoch = source_date()
    times = {
        "started_at": epoch if prov.started_at else None,
        "finished_at": epoch if prov.finished_at else None,
    }
    return report.model_copy(update={"provenance": prov.model_copy(update=times)})
def _print_terminal(
    reports: list[Any], names: list[str], details: bool, stream: TextIO
) -> None:
    """The terminal report(s) on ``stream``, in colour when it is a terminal.

    The text passes through :class:`~ablation.render._ci_safe.CommandSafeStream`, so no line is
    a CI workflow command however the console wraps an agent's text.
    """
    from rich.console import Console

    from ablation.render import print_report, render_summary
    from ablation.render._ci_safe import CommandSafeStream

    safe = CommandSafeStream(stream)
    console = Console(file=safe)  # type: ignore[arg-type]
    for name, report in zip(names, reports, strict=True):
        if len(reports) > 1:
            console.rule(f"candidate: {name}", characters="=")
        print_report(report, console, details=details)
    if len(reports) > 1:
        safe.write(render_summary(reports, names, "terminal", width=console.width) + "\n")
    safe.finish()


def _github_step_summary(reports: list[Any]) -> None:
    """Append the Markdown reports to ``$GITHUB_STEP_SUMMARY`` when GitHub Actions sets it."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from ablation.render import render

    with open(target, "a", encoding="utf-8") as fh:
        for report in reports:
            fh.write(render(report, "markdown") + "\n\n")


def exit_code(reports: list[Any]) -> int:
    return EXIT_OK if all(r.verdict == "pass" for r in reports) else EXIT_GATE


def say_sandbox_unavailable(reports: Sequence[Any]) -> None:
    """One line on stderr when ``code_tests`` could not run code here: its cause and fix."""
    from ablation.evaluate.sandbox_confinement import CONFINEMENTS, DEFAULT_CONFINEMENT

    for report in reports:
        for group in report.errors.groups if report.errors else ():
            if group.error_type == "SandboxUnavailable" and group.example:
                cause = CONFINEMENTS[DEFAULT_CONFINEMENT].unavailable() or group.example
                print(
                    f"ablation: error: {group.count} trial(s) are errors because code_tests "
                    f"could not run agent-written code: {cause}",
                    file=sys.stderr,
                )
                return
