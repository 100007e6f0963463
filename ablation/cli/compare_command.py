"""``ablation compare``: pair result files by id, as pass/fail verdicts or as a numeric field.

The mode is decided from every file: the field is numeric when any file holds a number other
than a verdict (``1``/``0``, ``true``/``false``) there, whatever the order of the files; a text
that spells a decimal number (a CSV cell) is that number
(:func:`~ablation.sources.readers.rows.text_number`). The files are read as verdicts first, and
read again as numbers when one holds such a number.
Standard input and pipes can be read only once, so each is read first, once, into a private
temporary file (:func:`rereadable`); errors still name the source as given. Standard input named
twice is a usage error.

One rule for the options a mode has no use for (:func:`refuse_unused`): given as a flag, such an
option is a usage error naming the flag and why; set in ``[tool.ablation]`` (where it serves the
other mode, or another command) it is ignored, named in one note on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ablation.cli.option_table import OPTIONS
from ablation.cli.options import (
    FROM_FILE,
    campaign_config,
    merged_settings,
    paths_from_file,
    read_options,
    setting_names,
    where_set,
)
from ablation.cli.output import Named, check_output, config_inputs, emit, write_output
from ablation.cli.parser import UsageError
from ablation.process_hooks import during_large_work, memory_freed

__all__ = ["NUMERIC_ONLY", "VERDICT_ONLY", "cmd_compare", "refuse_unused", "rereadable"]

#: Options with no effect on a numeric ``--field``: a margin on a pass rate, metric margins, the
#: latency ratio, the critical-task gate, resampling, labels, prices, sequential replay,
#: drill-downs and wall-clock times (the numeric comparison shows neither).
VERDICT_ONLY = (
    "margin", "metric_margin", "metric_margins", "max_latency_ratio", "critical_gate", "resamples",
    "seed", "label", "labels", "prices", "sequential_replay", "stop_when_inconclusive_after",
    "suite_claim", "details", "timestamps",
)  # fmt: skip
#: Options with no effect on a pass/fail field.
NUMERIC_ONLY = ("regression_delta",)

#: The distinct verdict texts an unmatched ``--pass-values`` error names (:func:`_refuse_unmatched`).
_SHOWN = 6
#: Settings keys whose ``False`` is a value given (``--no-critical-gate``), not "not given".
_FALSE_IS_GIVEN = frozenset(o.target for o in OPTIONS if o.kind == "off")


def refuse_unused(keys: Sequence[str], s: dict[str, Any], mode: str) -> None:
    """Refuse the options of ``keys`` that were set, as they have no effect in ``mode``.

    Args:
        keys: Settings keys with no effect in this mode.
        s: The merged settings (:func:`~ablation.cli.options.merged_settings`).
        mode: What the comparison is, for the messages: ``a numeric --field (score)``.

    Raises:
        UsageError: for the first of them given as a flag, naming it.
    """
    from_file = s.get(FROM_FILE, {})
    unused = [
        k for k in keys
        if s.get(k) not in (None, [], {}) and (s.get(k) is not False or k in _FALSE_IS_GIVEN)
    ]  # fmt: skip
    for key in unused:
        if key not in from_file:
            raise UsageError(f"argument {where_set(key, s)}: does not apply to {mode}")
    if unused:
        print(f"ablation: note: ignored, as they do not apply to {mode}: "
              + ", ".join(where_set(k, s) for k in unused), file=sys.stderr)  # fmt: skip


@contextlib.contextmanager
def rereadable(paths: Sequence[Path], max_bytes: int | None) -> Iterator[dict[str, str]]:
    """``{source as given: path to read}``: a source that cannot be read twice (``-``, a pipe,
    a device) is read now, once, into a private temporary file (gzip decompressed, within
    ``max_bytes`` as every read is), removed when the block ends; a regular file is itself."""
    sources: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        folder: str | None = None
        for i, path in enumerate(paths):
            given = os.fspath(path)
            if given != "-" and _regular(path):
                sources[given] = given
                continue
            import tempfile

            from ablation.sources.text import MAX_BYTES, read_source

            if folder is None:
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="ablation-compare-"))
            _, data = read_source(path, given, max_bytes=max_bytes or MAX_BYTES)
            copy = Path(folder) / str(i)
            copy.write_bytes(data)
            del data
            sources[given] = str(copy)
        yield sources


def _regular(path: Path) -> bool:
    """Whether ``path`` can be read again as it was (a regular file, or nothing there: the read
    then says what is missing)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _refuse_stdin_twice(paths: Sequence[Path]) -> None:
    if sum(os.fspath(p) == "-" for p in paths) > 1:
        raise UsageError(
            "ablation compare: standard input (-) is named more than once: it can be read only "
            "once; give the other results as files"
        )


@during_large_work
def cmd_compare(args: argparse.Namespace) -> int:
    """``ablation compare`` (module docstring); the report's times, with ``--timestamps``, are
    when the comparison started and finished."""
    from ablation.sources.readers.rows import NumericVerdict
    from ablation.sources.result_files import load_expected_ids

    _refuse_stdin_twice([args.before, *args.after])
    started = _now()
    s = merged_settings(args)
    s["n_candidates"] = len(args.after)
    check_output(s, _inputs(args))
    from ablation.analysis.latency_censoring import time_limit_of_files

    given = campaign_config(s)  # its time limit, when unset, is the files' (_compare_verdicts)
    config = time_limit_of_files(given)
    limit = getattr(args, "max_input_bytes", None)
    expected = load_expected_ids(args.expected_ids, max_bytes=limit) if args.expected_ids else None
    field = args.field or "passed"
    with rereadable([args.before, *args.after], getattr(args, "max_input_bytes", None)) as sources:
        reason = None
        try:
            reports, rows = _compare_verdicts(args, (given, setting_names(s), paths_from_file(s)), expected, sources)
        except NumericVerdict as why:
            reason = str(why)
        if reason is not None:
            return _compare_numeric(args, s, reason, (config, expected), sources)
    refuse_unused(NUMERIC_ONLY, s, f"a pass/fail --field ({field})")
    from ablation.analysis.background import LARGE

    if rows >= LARGE:
        memory_freed()
    if s.get("timestamps"):
        finished = _now()
        reports = [
            r.model_copy(update={"provenance": r.provenance.model_copy(
                update={"started_at": started, "finished_at": finished})})
            for r in reports
        ]  # fmt: skip
    return emit(reports, [p.name for p in args.after], s)


def _inputs(args: argparse.Namespace) -> list[Named]:
    """The files ``compare`` reads, named for :func:`~ablation.cli.output.check_output`."""
    named: list[Named] = [("the BEFORE results", args.before)]
    named += [("the AFTER results", path) for path in args.after]
    if args.expected_ids:
        named.append(("the --expected-ids file", args.expected_ids))
    return [*named, *config_inputs()]


def _compare_verdicts(
    args: argparse.Namespace, settings: tuple[Any, dict[str, str], set[str]], expected: list[str] | None,
    sources: dict[str, str],
) -> tuple[list[Any], int]:
    """The reports of a pass/fail comparison and the most rows of a file.

    ``settings``: the configuration as the settings give it, how the user named each
    configuration field (:func:`~ablation.cli.options.setting_names`) and the fields set in
    ``[tool.ablation]`` (:func:`~ablation.cli.options.paths_from_file`). Each comparison counts its
    timeouts at the limit :func:`~ablation.analysis.latency_censoring.time_limit_of_files` finds
    from it and the files, and the export of one campaign is judged as the campaign is
    (:func:`~ablation.analysis.export_campaign.campaign_settings`).

    Raises:
        NumericVerdict: a file holds a number for the field (the comparison is numeric).
        InputError: ``--pass-values`` that no verdict of either file matches
            (:func:`_refuse_unmatched`), timeouts under different limits, or a comparison that
            cannot replay a sequential export's stop.
        ConfigError: a setting that decided a sequential export's stop, given another value.
    """
    from ablation.analysis.build import compare_columns
    from ablation.analysis.candidates import holm_claims
    from ablation.analysis.export_campaign import campaign_settings
    from ablation.analysis.latency_censoring import time_limit_of_files
    from ablation.cli.common_ids import refuse_same_rows, require_common_ids, with_look_alikes
    from ablation.columns import share_ids
    from ablation.sources.readers.columnar import FileTrials

    config, names, from_file = settings
    read, read_before = read_options(args), read_options(args, baseline=True)
    name = str(args.before)
    for path in args.after:
        refuse_same_rows((sources[name], sources[str(path)]), (read_before, read), (name, str(path)))
    before, before_notes = _noted_read(sources[name], arm="baseline", display=name, **read_before)
    reports, rows = [], len(before.columns)
    for path in args.after:
        shown = str(path)
        after, after_notes = _noted_read(sources[shown], arm="candidate", ids_like=before.columns.task_id,
                                         display=shown, **read)  # fmt: skip
        rows = max(rows, len(after.columns))
        require_common_ids(before.columns, after.columns, (name, shown))
        _refuse_unmatched(args, ((name, before, before_notes), (shown, after, after_notes)), sources)
        campaigns = [(name, _campaign(name, before_notes)), (shown, _campaign(shown, after_notes))]
        judged = campaign_settings(
            config, campaigns, expected_ids=expected, names=names, from_file=from_file,
            filters=[list(read_before["where"]), list(read["where"])],
        )  # fmt: skip
        if judged.note:
            print(judged.note, file=sys.stderr)
        limits = [(n, c and c.time_limit, _timed_out(r)) for (n, c), r in zip(campaigns, (before, after), strict=True)]
        after = dataclasses.replace(after, columns=share_ids(before.columns, after.columns))
        reports.append(
            compare_columns(
                before.columns, after.columns, expected_ids=judged.expected_ids,
                config=time_limit_of_files(judged.config, limits), names=(name, shown),
                trial_lookup=FileTrials({"baseline": before, "candidate": after}),
            )
        )
        ids = (str(args.expected_ids), (before.columns.task_id, after.columns.task_id)) if args.expected_ids else None
        reports[-1] = with_look_alikes(reports[-1], (name, shown), ids)
        if judged.family_size > 1:  # the run's other candidates are not in the files: p = 1 each
            reports[-1:] = holm_claims(reports[-1:], [1.0] * (judged.family_size - 1))
    # The reports hold what they show: the files' columns are garbage once this returns, before
    # the output, whose serialisation (24 MB of JSON at 1e6 tasks) would otherwise stack on them.
    return reports, rows


def _noted_read(source: str, **read: Any) -> tuple[Any, dict[str, Any]]:
    """``(load_result_columns(source, **read), what the read noted)``: the verdict texts met
    with ``--pass-values`` and an export's campaign header
    (:data:`~ablation.sources.readers.rows.READ_NOTES`)."""
    from ablation.sources.readers.rows import READ_NOTES
    from ablation.sources.result_files import load_result_columns

    notes: dict[str, Any] = {}
    token = READ_NOTES.set(notes)
    try:
        return load_result_columns(source, **read), notes
    finally:
        READ_NOTES.reset(token)


def _campaign(name: str, notes: dict[str, Any]) -> Any:
    """The :class:`~ablation.analysis.export_campaign.ExportCampaign` of a file read as an export
    (its header noted by the read), else ``None``."""
    from ablation.analysis.export_campaign import export_campaign

    header = notes.get("campaign")
    return None if header is None else export_campaign(name, header)


def _timed_out(read: Any) -> bool:
    """Whether a file's columns hold a timed-out trial."""
    from ablation.columns import STATUS_CODES

    return bool((read.columns.status == STATUS_CODES["timeout"]).any())


def _refuse_unmatched(args: argparse.Namespace, files: Sequence[tuple[str, Any, dict[str, Any]]],
                      sources: dict[str, str]) -> None:  # fmt: skip
    """Refuse ``--pass-values`` when none of its values matches a verdict of either file.

    Every completed trial of both files would then be a fail, and the comparison would say the
    arms agree (exit 0): almost always a misspelt value (``True`` where JSON ``true`` reads as
    the text ``true``). The check is over the comparison, not one file: a candidate that fails
    every task is real data. A value that matches nothing while another matches is left alone
    (``C,P`` for Inspect logs, where a run may hold no partial answer). Files with no completed
    trial (no verdict read) are never refused. One line naming the values, both files, the field
    and the distinct verdict texts seen (the first few, sorted).

    ``files``: ``(name, read, notes)`` of BEFORE and an AFTER (:func:`_noted_read`); a file
    with completed trials but no verdict texts noted was read as bare JSON-lines verdicts
    (:mod:`~ablation.sources.readers.columnar`): booleans, read again without the values to
    name them.
    """
    from ablation.columns import STATUS_CODES
    from ablation.errors import InputError
    from ablation.sources.result_files import load_result_columns
    from ablation.sources.text import short_repr

    if not args.pass_values or any(bool(read.columns.passed.any()) for _, read, _ in files):
        return
    seen: set[str] = set()
    for name, read, notes in files:
        if not bool((read.columns.status == STATUS_CODES["completed"]).any()):
            continue
        if "verdicts" not in notes:
            plain = {**read_options(args, baseline=read.columns.arm == "baseline"), "pass_values": None}
            raw = load_result_columns(sources[name], arm=read.columns.arm, display=name, **plain).columns.passed
            notes["verdicts"] = {text for text, there in (("true", raw.any()), ("false", not raw.all())) if there}
        seen |= notes["verdicts"]
    if not seen:
        return
    values = sorted({v.strip() for v in args.pass_values.split(",")})
    texts = [v if v.isprintable() and len(v) <= 40 else short_repr(v) for v in sorted(seen)[:_SHOWN]]
    more = f", ... ({len(seen)} distinct)" if len(seen) > _SHOWN else ""
    raise InputError(
        f"--pass-values {','.join(values)}: no verdict of {files[0][0]} or {files[1][0]} is one of "
        f"these, so every trial would count as a fail (their {args.field or 'passed'!r} values: "
        f"{', '.join(texts)}{more})"
    )


def _compare_numeric(
    args: argparse.Namespace, s: dict[str, Any], why: str, given: tuple[Any, list[str] | None],
    sources: dict[str, str],
) -> int:
    """``compare`` of a numeric ``--field``: see :mod:`ablation.analysis.numeric`.

    ``why``: where a file holds a number, named in any error of a file read as numbers (another
    file's ``true`` is otherwise "not a number" with no word of the file that decided it). The
    options of :data:`VERDICT_ONLY` are refused or noted (:func:`refuse_unused`). The output is
    the text, JSON, or one Markdown, HTML or JUnit document (:mod:`ablation.render.numeric_doc`)
    for every AFTER file. ``given``: the configuration and the expected ids.
    """
    from ablation.analysis import numeric as num
    from ablation.analysis.export_campaign import campaign_settings
    from ablation.cli.common_ids import numeric_look_alike_note
    from ablation.errors import InputError
    from ablation.render import numeric_doc as doc
    from ablation.render._ci_safe import no_workflow_commands
    field, fmt = args.field or "passed", s.get("format") or "terminal"
    refuse_unused(VERDICT_ONLY, s, f"a numeric --field ({field})")
    if fmt not in ("terminal", "json", *doc.NUMERIC_FORMATS):
        raise UsageError(f"argument --format: {fmt} cannot show a numeric --field ({field})")

    def numbers(path: Any, arm: str, **read: Any) -> Any:
        try:  # the columns alone: each file's task means and runs are all that is kept
            read_cols, notes = _noted_read(sources[str(path)], arm=arm, numeric=True, display=str(path), **read)
        except InputError as exc:
            # the file with the number comes first: often one odd value in a file of verdicts
            raise type(exc)(f"{why}, so the field is compared as a number, but {exc}") from None
        campaign = _campaign(str(path), notes)
        if campaign is not None and campaign.sequential:
            raise InputError(
                f"{path} is an export of sequential campaign {campaign.campaign_id or '(no id)'}: it holds "
                "trials past the campaign's stop, and a numeric --field comparison does not replay a "
                "stop; compare its verdicts (--field passed), which replays it"
            )
        cols = read_cols.columns
        return num.task_means(cols, field), num.arm_runs(cols, field), (str(path), campaign)

    given_config, expected = given
    read_before = read_options(args, baseline=True)
    base, base_runs, base_file = numbers(args.before, "baseline", **read_before)
    results, names = [], [str(p) for p in args.after]
    for path in args.after:
        read = read_options(args)
        after, after_runs, after_file = numbers(path, "candidate", **read)
        judged = campaign_settings(given_config, [base_file, after_file], expected_ids=expected,
                                   filters=[list(read_before["where"]), list(read["where"])], names=setting_names(s),
                                   from_file=paths_from_file(s))  # fmt: skip
        config = judged.config
        try:
            results.append(num.compare_numeric(
                base, after, field=field, regression_delta=args.regression_delta or 0.0,
                alpha=config.alpha, confidence_level=config.confidence_level, expected_ids=judged.expected_ids,
                runs=(base_runs, after_runs), policy=config.gates,
            ))  # fmt: skip
        except ValueError as exc:  # too few paired values: say why the field was read as numbers
            raise InputError(f"{why}, so the field is compared as a number, but {exc}") from None
        if (note := numeric_look_alike_note(results[-1], (str(args.before), str(path)), (str(args.expected_ids), (base_runs.tasks, after_runs.tasks)) if args.expected_ids else None)):
            print(f"ablation: note: {note}", file=sys.stderr)
    if fmt in ("terminal", "json"):  # JSON escapes its own strings
        text = doc.numeric_output(results, names, fmt == "json")
        text = text if fmt == "json" else no_workflow_commands(text, markup=False)
    else:
        text = doc.numeric_document(fmt, *doc.numeric_sections(results, names))
    if s.get("output") is not None:
        write_output(Path(s["output"]), text + "\n")
        print(f"report written to {s['output']}", file=sys.stderr)
    elif not s.get("quiet"):
        sys.stdout.write(text + "\n")  # a closed pipe ends it quietly (cli.main)
    return max(r.exit_code for r in results)
