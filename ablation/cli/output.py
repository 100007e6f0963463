"""Writing reports in the chosen format, and the exit code they imply."""

from __future__ import annotations

import json
import os
import re
import stat
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
    "Named",
    "check_output",
    "config_inputs",
    "emit",
    "exit_code",
    "say_sandbox_unavailable",
    "spec_inputs",
    "store_inputs",
    "without_wall_clock",
    "write_output",
]

EXIT_OK, EXIT_ERROR, EXIT_GATE = 0, 1, 2

#: Suffixes of the files SQLite keeps beside a database while it writes: part of the store.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")

#: A file a command reads or writes, with how a refusal names it (``the run store``, ``--output``).
Named = tuple[str, "str | os.PathLike[str]"]


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
    # (standard output is guarded by cli.main; ``run``'s saved stdout is guarded here)
    out_stream: Any = sys.stdout if stream is None else ClosedPipeSafe(stream)
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
        pages = _html_pages(out, len(reports))
        for page, report in zip(pages, reports, strict=True):
            write_output(page, render(report, "html", details=details))
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
        write_output(out, text + "\n")
        print(f"report written to {out}", file=sys.stderr)
    else:
        out_stream.write(text + "\n")
        out_stream.flush()
    return exit_code(reports)


def check_output(s: dict[str, Any], inputs: Sequence[Named] = ()) -> None:
    """Refuse an ``--output`` that cannot be written, or any file the command writes that is one
    of its ``inputs`` or another of its outputs, before the command reads or runs anything (a
    campaign would otherwise spend every agent call and fail at the end, or write its report over
    the suite, a result file or the run store it read).

    Nothing is created or truncated: an existing report stays as it was until the new one is
    written in its place. Checked: the folder exists and a file can be created in it (an unnamed
    temporary file, gone when closed), and an existing target is not a folder and opens for
    appending (which changes nothing); a target that is not a regular file (a pipe, a device) is
    only checked for write permission, as opening a pipe would wait for its reader.
    ``--export-jsonl`` is written beside its target and renamed over it: its folder must take a
    new file, and an existing target must be a regular file.

    The files written (:func:`_written`) are ``--output`` (and, for HTML of several candidates,
    its pages), ``--export-jsonl`` and ``$GITHUB_STEP_SUMMARY``; each is compared with every input
    and with the others by identity (:func:`_identity`: symbolic and hard links to one file are
    one file). ``-`` is standard input or output, never a file of the check.

    Args:
        s: The merged settings (``output``, ``export_jsonl``, ``format``, ``n_candidates``).
        inputs: What the command reads, named: :func:`store_inputs`, :func:`spec_inputs`,
            :func:`config_inputs`, result files.

    Raises:
        UsageError: one line naming the flag, the path and what is wrong.
    """
    _refuse_clashes(_written(s), inputs)
    checks = [("--output", s.get("output"), "the report", False)]
    checks.append(("--export-jsonl", s.get("export_jsonl"), "the trials", True))
    for flag, target, what, replaced in checks:
        if target is None:
            continue
        path = Path(target)
        problem = _unwritable(path, replaced=replaced)
        if problem is not None:
            raise UsageError(f"argument {flag}: cannot write {what} to {path}: {problem}")


def write_output(path: Path, text: str, flag: str = "--output") -> None:
    """Write ``text`` to ``path`` (UTF-8).

    Raises:
        UsageError: the write failed (a full disk, a lost folder): one line naming ``flag``, the
            path and the system's reason, in place of a bare ``OSError``.
    """
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"argument {flag}: cannot write the report to {path}: {exc.strerror or exc}"
        ) from None


def store_inputs(store: str | os.PathLike[str]) -> list[Named]:
    """The run store and the side files SQLite keeps beside it (:data:`SQLITE_SIDE_FILES`)."""
    path = os.fspath(store)
    sides = [(f"the run store's {suffix} file", path + suffix) for suffix in SQLITE_SIDE_FILES]
    return [("the run store", path), *sides]


def config_inputs() -> list[Named]:
    """The ``pyproject.toml`` whose ``[tool.ablation]`` the command reads, if there is one."""
    from ablation.cli.settings import find_pyproject

    path = find_pyproject()
    return [] if path is None else [("the configuration file", path)]


def spec_inputs(what: str, spec: str | None) -> list[Named]:
    """The files a suite, agent or scorer spec names, as ``(what, path)``.

    ``file.py[:NAME]`` names the file; so does a ``.jsonl`` path, or any spec with a ``/`` or
    that exists (as :func:`~ablation.sources.suites.load_suite` reads it); ``cmd:COMMAND LINE``
    names the words of the command line that are existing files (its script). A module spec
    (``pkg.mod:NAME``, found only by importing), a URL and a built-in scorer name no file.
    """
    import shlex

    from ablation.sources.modules import split_py_attr

    if not spec or spec == "-" or spec.lower().startswith(("http://", "https://")):
        return []
    if spec.startswith("cmd:"):
        try:
            words = shlex.split(spec[4:])
        except ValueError:
            return []
        return [(f"{what}, in its command line", w) for w in words if os.path.isfile(w)]
    py_attr = split_py_attr(spec)
    if py_attr is not None:
        return [(what, py_attr[0])]
    if spec.lower().endswith((".py", ".jsonl")) or "/" in spec or os.sep in spec:
        return [(what, spec)]
    return [(what, spec)] if os.path.exists(spec) else []


def _written(s: dict[str, Any]) -> list[Named]:
    """The files the command writes, named by the flag (or variable) that chose each."""
    files: list[Named] = []
    out = s.get("output")
    if out is not None:
        files.append(("--output", out))
        several = int(s.get("n_candidates") or 1)
        if (s.get("format") or "terminal") == "html" and several > 1:
            files += [("the --output page", page) for page in _html_pages(Path(out), several)]
    if s.get("export_jsonl"):
        files.append(("--export-jsonl", s["export_jsonl"]))
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        files.append(("$GITHUB_STEP_SUMMARY", os.environ["GITHUB_STEP_SUMMARY"]))
    return files


def _html_pages(out: Path, n: int) -> list[Path]:
    """The page of each of ``n`` candidates beside the HTML summary ``out``."""
    return [out.with_name(f"{out.stem}.candidate-{i}{out.suffix or '.html'}") for i in range(1, n + 1)]


def _refuse_clashes(outputs: Sequence[Named], inputs: Sequence[Named]) -> None:
    """Refuse an output that is one of the ``inputs``, or the same file as an earlier output.

    Raises:
        UsageError: ``--output PATH is also an input (the run store): refusing to overwrite it``.
    """
    seen: list[tuple[str, str, tuple[Any, ...]]] = []
    for flag, given in outputs:
        path = os.fspath(given)
        key = _identity(path)
        if key is None:
            continue
        for what, other in inputs:
            other_path = os.fspath(other)
            if _identity(other_path) == key:
                named = what if other_path == path else f"{what}, {other_path}"
                raise UsageError(f"{flag} {path} is also an input ({named}): refusing to overwrite it")
        for other_flag, other_path, other_key in seen:
            if other_key == key:
                named = other_flag if other_path == path else f"{other_flag} {other_path}"
                raise UsageError(
                    f"{flag} {path} is also the file of {named}: refusing to write two outputs "
                    "to one file"
                )
        seen.append((flag, path, key))


def _identity(path: str) -> tuple[Any, ...] | None:
    """What makes two paths one file: an existing file's device and inode (a symbolic or hard
    link to it is the same file), else the path with every link resolved (the file it would
    create); ``None`` for ``-`` and for a device, pipe or socket, which writing does not erase.
    """
    if path == "-":
        return None
    try:
        info = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    except ValueError:  # a NUL in the path: no file has that name
        return ("path", path)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return None
    return ("file", info.st_dev, info.st_ino)


def _unwritable(path: Path, *, replaced: bool = False) -> str | None:
    """Why a report cannot be written to ``path`` (see :func:`check_output`), or ``None``.

    ``replaced``: the file is written beside ``path`` and renamed over it (``--export-jsonl``),
    so the folder must take a new file, and an existing target must be a regular file: a device
    or pipe would be replaced by a file, not written to.
    """
    import tempfile

    folder = path.absolute().parent
    try:
        if path.exists():
            mode = path.stat().st_mode
            if stat.S_ISDIR(mode):
                return "it is a folder"
            if replaced and not stat.S_ISREG(mode):
                return "it is not a regular file (the export would replace it, not write to it)"
            if not stat.S_ISREG(mode):
                return None if os.access(path, os.W_OK) else "permission denied"
            if not replaced:
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
    from ablation.render.terminal import candidate_rule

    safe = CommandSafeStream(stream)
    console = Console(file=safe)  # type: ignore[arg-type]
    for name, report in zip(names, reports, strict=True):
        if len(reports) > 1:
            console.print(candidate_rule(name))
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


#: The fix for a sandbox that did not start or could not be trusted, by its result's ``kind``.
_SANDBOX_FIXES = {
    "sandbox_start": "check that bubblewrap (bwrap on PATH) starts here, or use --sandbox process",
    "sandbox_check": "use a bubblewrap and kernel that give every protection the self-check "
    "requires (docs/SECURITY.md), or the weaker --sandbox process",
}


def say_sandbox_unavailable(reports: Sequence[Any]) -> None:
    """One line on stderr when ``code_tests`` could not judge agent-written code: cause and fix.

    From the first report with ``SandboxUnavailable`` or ``SandboxError`` groups, counting their
    trials in every arm. ``SandboxUnavailable``: the confinement's own cause and fix (else the
    recorded example). ``SandboxError`` (it did not start, its self-check failed, the test process
    ended without a result): the example's ``KIND: REASON`` (the verifier writes ``task 'ID':
    KIND: REASON``) and the fix in :data:`_SANDBOX_FIXES` when one is known.
    """
    from ablation.evaluate.sandbox_confinement import CONFINEMENTS, DEFAULT_CONFINEMENT
    from ablation.evaluate.sandbox_outcome import ERROR_KINDS

    for report in reports:
        kinds = ("SandboxUnavailable", "SandboxError")
        found = report.errors.groups if report.errors else ()
        groups = [g for g in found if g.error_type in kinds and g.example]
        if not groups:
            continue
        unavailable = [str(g.example) for g in groups if g.error_type == "SandboxUnavailable"]
        example, verb = str(groups[0].example), "judge"
        if unavailable:
            cause, verb = CONFINEMENTS[DEFAULT_CONFINEMENT].unavailable() or unavailable[0], "run"
        else:
            kind = "|".join(sorted(ERROR_KINDS))
            quoted = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
            at = re.match(rf"(?:SandboxError: )?task (?:{quoted}): (?=(?:{kind}): )", example)
            cause = example[at.end() :] if at else example.removeprefix("SandboxError: ")
            fix = _SANDBOX_FIXES.get(cause.split(":", 1)[0]) if at else None
            cause += f"; to fix: {fix}" if fix else ""
        print(
            f"ablation: error: {sum(g.count for g in groups)} trial(s) are errors because "
            f"code_tests could not {verb} agent-written code: {cause}",
            file=sys.stderr,
        )
        return
