"""The ``ablation`` argument parser: one function per command, shared option groups."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ablation.cli.flag_types import flag_type
from ablation.render import FORMATS  # the registered report formats

__all__ = ["FORMATS", "UsageError", "build_parser", "command_of"]


def resamples_flag(text: str) -> int:
    """argparse type of ``--resamples`` (:func:`ablation.cli.tool_settings.resamples_flag`).

    Imported when a flag is given: that module builds a pydantic model, which ``--help`` does
    not need. The name is argparse's in "invalid resamples_flag value" messages.
    """
    from ablation.cli import tool_settings

    return tool_settings.resamples_flag(text)


def rate_limit_flag(text: str) -> float:
    """argparse type of ``--rate-limit`` (:func:`ablation.cli.tool_settings.rate_limit_flag`)."""
    from ablation.cli import tool_settings

    return tool_settings.rate_limit_flag(text)


class UsageError(Exception):
    """A command-line usage problem (exit 1)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """``ablation: error: ablation run: ...`` from ``main``: a command's parser names itself
        (the top-level parser, ``ablation``, is already named by ``main``)."""
        raise UsageError(message if self.prog == "ablation" else f"{self.prog}: {message}")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse, but a command's unknown options are reported in the command's name:
        argparse reports them from the top-level parser, as ``ablation: unrecognized arguments``."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            where, see = (f"ablation {command}: ", f" (see ablation {command} --help)") if command else ("", "")
            raise UsageError(f"{where}unrecognized arguments: {' '.join(extras)}{see}")
        return parsed


def _gate_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("analysis and release gates")
    g.add_argument("--alpha", type=flag_type("--alpha"), help="significance level (default 0.05)")
    g.add_argument("--confidence", type=flag_type("--confidence"), help="confidence level of intervals (default 0.95)")
    g.add_argument("--resamples", type=resamples_flag, help="bootstrap resamples (default 10000)")
    g.add_argument("--seed", type=flag_type("--seed"), help="seed for arm order and resampling (default 0)")
    g.add_argument("--margin", type=flag_type("--margin"), help="non-inferiority margin on the pass rate, e.g. 0.02")
    g.add_argument(
        "--no-significant-regression", action="store_true", default=None,
        help="fail when the candidate is significantly worse at --alpha (one-sided, unadjusted; "
        "the default, accepted for explicitness)",
    )
    g.add_argument(
        "--allow-significant-regression", action="store_true", default=None,
        help="turn the significant-regression gate off (the report lists it as off)",
    )
    g.add_argument(
        "--min-completed", type=flag_type("--min-completed"), metavar="SHARE",
        help="least share of each arm's trials that must complete (default 0.95)",
    )
    g.add_argument(
        "--allow-incomplete", action="store_true", default=None,
        help="turn the completeness gate off (missing pairs, errored arms; listed as off)",
    )
    g.add_argument(
        "--metric-margin", action="append", default=[], metavar="NAME=VALUE",
        help="non-inferiority gate on a numeric metric or quality score, margin in its units "
        "(latency_s, cost, tokens: lower is better; repeatable)",
    )
    g.add_argument("--max-latency-ratio", type=flag_type("--max-latency-ratio"), help="fail when latency grows beyond this ratio")
    g.add_argument(
        "--no-critical-gate", dest="critical_gate", action="store_false", default=None,
        help="do not fail on regressions of critical tasks",
    )
    g.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="label kept in provenance (repeatable)")


def _output_options(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=FORMATS, help="report format (default terminal)")
    o.add_argument("--output", "-o", type=Path, help="write the report to this file")
    o.add_argument("--details", action="store_true", help="show both outputs of each flipped task")
    o.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    o.add_argument(
        "--timestamps", action="store_true",
        help="show wall-clock start and finish times (default: none, or SOURCE_DATE_EPOCH)",
    )
    o.add_argument("--verbose", "-v", action="store_true",
                   help="log diagnostics (formats detected, rows read) to stderr")
    o.add_argument("--quiet", "-q", action="store_true",
                   help="print no report on stdout (errors still go to stderr; --output still "
                   "writes); the exit code carries the verdict")


def _run_parser(sub: Any) -> None:
    """``ablation run``."""
    run = sub.add_parser(
        "run", help="run a campaign",
        description="Run baseline and candidate agents on every task of SUITE and report.",
        epilog="example: ablation run tasks/arithmetic.py --baseline agents/arithmetic.py:baseline "
        "--candidate agents/arithmetic.py:candidate --runs 3",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("suite", help="suite: tasks/x.py, tasks/x.jsonl or pkg.mod:attr")
    run.add_argument("--baseline", required=True, metavar="SPEC",
                     help="agent: file.py:attr, pkg.mod:attr, 'cmd:node agent.js' or http://...")
    run.add_argument("--candidate", required=True, action="append", metavar="SPEC",
                     help="candidate agent (repeat to compare several against one baseline)")
    run.add_argument("--runs", type=flag_type("--runs"), help="runs per task and arm (default 1)")
    run.add_argument("--concurrency", type=flag_type("--concurrency"), help="trials in flight (default 8)")
    run.add_argument("--timeout", type=flag_type("--timeout"), help="seconds per trial (default 300)")
    run.add_argument("--on-error", choices=("fail", "exclude", "abort"),
                     help="how errors and timeouts count (default fail)")
    run.add_argument("--max-attempts", type=flag_type("--max-attempts"), help="attempts per agent call (default 1)")
    run.add_argument("--retry-on", action="append", metavar="EXC",
                     help="exception type to retry (repeatable; default ConnectionError, TimeoutError; "
                     "transient errors of the common SDKs, 408, 429 and 5xx are retried too)")
    run.add_argument("--rate-limit", type=rate_limit_flag, help="max agent calls per second per arm")
    run.add_argument(
        "--fail-fast", type=flag_type("--fail-fast"), metavar="K",
        help="stop (exit 1) when an arm's first K trials all fail with the same infrastructure "
        "error (default 10; 0 disables)",
    )
    run.add_argument("--quality", action="append", metavar="SCORER",
                     help="quality scorer: code_quality, rubric, or file.py:attr (repeatable)")
    run.add_argument("--store", type=Path, help="run store (default .ablation/runs.db)")
    run.add_argument("--no-store", action="store_true", help="keep results in memory only")
    run.add_argument("--resume", nargs="?", const=True, default=False, metavar="CAMPAIGN",
                     help="run only the missing trials of the newest (or given) campaign")
    run.add_argument("--allow-changed-agent", action="store_true",
                     help="with --resume: continue even if an agent's code changed since the "
                     "campaign started (the report then mixes two versions of it)")
    run.add_argument("--max-output-bytes", type=flag_type("--max-output-bytes"), metavar="N",
                     help="cap on a command agent's stdout, bytes (default 8 MiB); more is that "
                     "trial's error")
    run.add_argument("--agent-env", action="append", default=[], metavar="NAME",
                     help="environment variable a cmd: agent inherits besides PATH, HOME, locale "
                     "and temp-dir variables (repeatable; shell patterns such as OPENAI_*; '*' "
                     "inherits everything)")
    run.add_argument("--reuse-baseline", metavar="CAMPAIGN",
                     help="take baseline trials from a stored campaign on the same suite")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--sequential", action="store_true", default=None,
                     help="seeded random task order; stop as soon as the gates are decided "
                     "(anytime-valid; alpha split across candidates)")
    run.add_argument("--stop-when-inconclusive-after", type=flag_type("--stop-when-inconclusive-after"), metavar="N",
                     help="with --sequential: stop as inconclusive after N pairs")
    run.add_argument("--suite-claim", action="store_true", default=None,
                     help="with --sequential: non-inferiority about this suite only (sampling "
                     "without replacement), not the default population claim")
    _where_options(run)
    _gate_options(run)
    _output_options(run)


def _where_options(run: Any) -> None:
    """Where ``run`` executes agents and agent-written code: isolation, sandbox, Dask."""
    run.add_argument("--isolation", choices=("thread", "process"),
                     help="where Python agents run: thread (default) or process (worker processes: "
                     "an agent that crashes, calls os._exit or times out costs one trial)")
    run.add_argument("--sandbox", choices=("bubblewrap", "process"),
                     help="how code_tests confines agent-written code: bubblewrap (default; "
                     "a trial is an error where it cannot run) or process (weaker: resource "
                     "limits only, named in the report)")
    run.add_argument("--worker-memory-mb", type=flag_type("--worker-memory-mb"), metavar="MB",
                     help="with --isolation process: address-space limit of each worker (MiB)")
    run.add_argument("--traces", choices=("auto", "on", "off"),
                     help="collect each trial's OpenTelemetry spans: auto (default: when "
                     "opentelemetry-sdk is installed), on (required) or off")
    run.add_argument("--dask-scheduler", metavar="ADDRESS", help="run sync agents on a Dask cluster")
    run.add_argument("--dask-local", type=flag_type("--dask-local"), metavar="N", help="start a local Dask cluster of N workers")


def _compare_parser(sub: Any) -> None:
    """``ablation compare``."""
    cmp_ = sub.add_parser(
        "compare", help="compare existing result files",
        description="Pair two (or more) JSONL/CSV result files by id and report. With several "
        "AFTER files, each is compared with BEFORE and a summary with Holm-adjusted p follows.",
        epilog="example: ablation compare runs/gpt-5.jsonl runs/gpt-5.1.jsonl --key id --field passed",
    )
    cmp_.add_argument("before", type=Path,
                      help="baseline results (a file of any supported format, - for stdin)")
    cmp_.add_argument("after", type=Path, nargs="+", help="candidate results (likewise)")
    cmp_.add_argument("--key", help="dotted path of the id (default id, or the tool's own id)")
    cmp_.add_argument("--field", help="dotted path of the verdict, or the scorer/evaluator/metric "
                      "of a tool format (default passed, or the tool's default)")
    cmp_.add_argument("--run-field", help="dotted path of the run index (repeated runs)")
    cmp_.add_argument("--from", dest="from_format", metavar="FORMAT",
                      choices=("inspect", "pydantic-evals", "lm-eval", "promptfoo", "openai-evals",
                               "jsonl", "csv"),
                      help="read the files as this format instead of detecting it")
    cmp_.add_argument("--where", action="append", default=[], metavar="PATH=VALUE",
                      help="keep only rows whose dotted PATH reads VALUE (repeatable), e.g. "
                      "filter=strict-match or promptIdx=1")
    cmp_.add_argument("--baseline-where", action="append", default=[], metavar="PATH=VALUE",
                      help="filters for BEFORE only, replacing --where there (e.g. promptIdx=0 to "
                      "compare two prompts of one promptfoo file)")
    cmp_.add_argument("--regression-delta", type=flag_type("--regression-delta"), metavar="D",
                      help="numeric --field: a task regressed when its value fell by more than D, "
                      "and the gate fails on a significant mean drop beyond D (default 0)")
    cmp_.add_argument("--pass-values", metavar="V1,V2",
                      help="verdict values that count as a pass, e.g. C,P for Inspect")
    cmp_.add_argument("--expected-ids", type=Path, help="file of ids that must all be present")
    cmp_.add_argument("--max-input-bytes", type=flag_type("--max-input-bytes"), metavar="N",
                      help="largest result file read, after gzip decompression (default 256 MiB)")
    cmp_.add_argument("--sequential-replay", action="store_true", default=None,
                      help="replay the pairs in seeded order: what a sequential campaign would "
                      "have decided and spent")
    cmp_.add_argument("--stop-when-inconclusive-after", type=flag_type("--stop-when-inconclusive-after"), metavar="N",
                      help="with --sequential-replay: stop as inconclusive after N pairs")
    cmp_.add_argument("--suite-claim", action="store_true", default=None,
                      help="with --sequential-replay: non-inferiority about this suite only")
    _gate_options(cmp_)
    _output_options(cmp_)


def _report_parser(sub: Any) -> None:
    """``ablation report``."""
    rep = sub.add_parser(
        "report", help="re-render a stored campaign",
        description="Rebuild the report of a stored campaign (from its trials) in any format.",
        epilog="example: ablation report latest --format html -o report.html",
    )
    rep.add_argument("campaign", nargs="?", default="latest", help="campaign id or 'latest'")
    rep.add_argument("--store", type=Path, help="run store (default .ablation/runs.db)")
    rep.add_argument("--export-jsonl", type=Path, help="also export the trials as JSONL")
    _gate_options(rep)
    _output_options(rep)


def _plan_parser(sub: Any) -> None:
    """``ablation plan``."""
    plan = sub.add_parser(
        "plan", help="tasks needed for an effect, or the smallest effect a suite can see",
        description="Connor (1987) sample size for a paired binary comparison, or the minimum "
        "detectable effect of N tasks (or of an existing result pair).",
        epilog="example: ablation plan --discordance 0.10 --uplift 0.03 --alpha 0.05 --power 0.8",
    )
    plan.add_argument("--discordance", type=flag_type("--discordance"), help="share of tasks expected to flip (psi)")
    plan.add_argument("--uplift", type=flag_type("--uplift"), help="pass-rate change to detect (delta)")
    plan.add_argument("--tasks", type=flag_type("--tasks"), help="suite size: print the minimum detectable effect")
    plan.add_argument("--results", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                      help="take the task count and discordance from two result files")
    plan.add_argument("--alpha", type=flag_type("--alpha"), default=0.05)
    plan.add_argument("--power", type=flag_type("--power"), default=0.8)
    plan.add_argument("--one-sided", action="store_true")
    plan.add_argument("--sequential", action="store_true",
                      help="also simulate a sequential campaign: expected agent calls (mean, 90th "
                      "percentile)")
    plan.add_argument("--margin", type=flag_type("--margin"), help="with --sequential: non-inferiority margin")
    plan.add_argument("--simulations", type=flag_type("--simulations"), default=2000,
                      help="with --sequential: simulated campaigns (default 2000)")
    plan.add_argument("--debug", action="store_true")


def _init_parser(sub: Any) -> None:
    """``ablation init``."""
    init = sub.add_parser(
        "init", help="scaffold tasks/, agents/ and a config in a project",
        description="Create an example suite, two agents and [tool.ablation] defaults.",
        epilog="example: ablation init my-project",
    )
    init.add_argument("directory", nargs="?", type=Path, default=Path("."))
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.add_argument("--debug", action="store_true")


def _list_parser(sub: Any) -> None:
    """``ablation list``."""
    lst = sub.add_parser(
        "list", help="list the campaigns of a run store",
        description="List the campaigns of a run store, newest first: id, time, status, suite, "
        "agents, verdict and stored trials.",
        epilog="example: ablation list .ablation/runs.db --format json",
    )
    lst.add_argument("store", nargs="?", type=Path,
                     help="run store (default [tool.ablation] store, else .ablation/runs.db)")
    lst.add_argument("--format", choices=("terminal", "json"), default="terminal",
                     help="a text table (default) or a JSON array")
    lst.add_argument("--debug", action="store_true")


def _view_parser(sub: Any) -> None:
    """``ablation view``."""
    view = sub.add_parser(
        "view", help="browse campaigns, tasks and history in the browser",
        description="Serve a local web app over a run store (read-only; needs ablation[view]).",
        epilog="example: ablation view .ablation/runs.db --no-browser",
    )
    view.add_argument("store", nargs="?", type=Path, help="run store (default .ablation/runs.db)")
    view.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    view.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    view.add_argument("--no-browser", action="store_true", help="do not open a browser")
    view.add_argument("--suite", help="suite whose task inputs and expected outputs to show")
    view.add_argument("--debug", action="store_true")


_COMMAND_PARSERS: dict[str, Callable[[Any], None]] = {
    "run": _run_parser,
    "compare": _compare_parser,
    "report": _report_parser,
    "plan": _plan_parser,
    "init": _init_parser,
    "list": _list_parser,
    "view": _view_parser,
}


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if it is one with options.

    The top-level parser has no option that takes a value, so the first such word is the command.
    """
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in _COMMAND_PARSERS else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every command.

    Args:
        command: Build the options of this command only (:func:`command_of` of the arguments about
            to be parsed); the other commands stay known by name, without options, which saves
            building about a hundred options at every start. ``None`` builds every command whole
            (top-level ``--help`` lists them all).
    """
    parser = _Parser(
        prog="ablation",
        description="Paired ablation campaigns: run a baseline and a candidate agent on the same "
        "tasks and report what changed, whether it is real, and whether the release gates hold.",
        epilog="Exit codes: 0 gates pass, 1 usage/input/operational error, 2 a gate failed.",
    )
    parser.add_argument("--version", action="version", version=f"ablation {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for name, add in _COMMAND_PARSERS.items():
        if command in (None, name):
            add(sub)
        else:
            sub.add_parser(name)
    sub.add_parser("schema", help="print the JSON Schema of the JSON report",
                   description="Print the JSON Schema of `--format json` reports (AblationReport).")
    return parser


def _version() -> str:
    from ablation import __version__

    return __version__
