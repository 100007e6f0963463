"""The ``ablation`` command line: argument parsing and wiring only.

Exit codes: 0 every gate holds; 1 a usage, input or operational error (one line on stderr, no
traceback unless ``--debug``); 2 a release gate failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["main", "main_entry"]

FORMATS = ("terminal", "markdown", "json", "html")
EXIT_OK, EXIT_ERROR, EXIT_GATE = 0, 1, 2


class UsageError(Exception):
    """A command-line usage problem (exit 1)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _gate_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("analysis and release gates")
    g.add_argument("--alpha", type=float, help="significance level (default 0.05)")
    g.add_argument("--confidence", type=float, help="confidence level of intervals (default 0.95)")
    g.add_argument("--resamples", type=int, help="bootstrap resamples (default 10000)")
    g.add_argument("--seed", type=int, help="seed for arm order and resampling (default 0)")
    g.add_argument("--margin", type=float, help="non-inferiority margin on the pass rate, e.g. 0.02")
    g.add_argument(
        "--no-significant-regression", action="store_true", default=None,
        help="fail when the candidate is significantly worse at --alpha (Holm across metrics)",
    )
    g.add_argument("--max-latency-ratio", type=float, help="fail when latency grows beyond this ratio")
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = _Parser(
        prog="ablation",
        description="Paired ablation campaigns: run a baseline and a candidate agent on the same "
        "tasks and report what changed, whether it is real, and whether the release gates hold.",
        epilog="Exit codes: 0 gates pass, 1 usage/input/operational error, 2 a gate failed.",
    )
    parser.add_argument("--version", action="version", version=f"ablation {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

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
    run.add_argument("--runs", type=int, help="runs per task and arm (default 1)")
    run.add_argument("--concurrency", type=int, help="trials in flight (default 8)")
    run.add_argument("--timeout", type=float, help="seconds per trial (default 300)")
    run.add_argument("--on-error", choices=("fail", "exclude", "abort"),
                     help="how errors and timeouts count (default fail)")
    run.add_argument("--max-attempts", type=int, help="attempts per agent call (default 1)")
    run.add_argument("--retry-on", action="append", metavar="EXC",
                     help="exception type to retry (repeatable; default ConnectionError, TimeoutError)")
    run.add_argument("--rate-limit", type=float, help="max agent calls per second per arm")
    run.add_argument("--quality", action="append", metavar="SCORER",
                     help="quality scorer: code_quality, rubric, or file.py:attr (repeatable)")
    run.add_argument("--store", type=Path, help="run store (default .ablation/runs.db)")
    run.add_argument("--no-store", action="store_true", help="keep results in memory only")
    run.add_argument("--resume", nargs="?", const=True, default=False, metavar="CAMPAIGN",
                     help="run only the missing trials of the newest (or given) campaign")
    run.add_argument("--reuse-baseline", metavar="CAMPAIGN",
                     help="take baseline trials from a stored campaign on the same suite")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--dask-scheduler", metavar="ADDRESS", help="run sync agents on a Dask cluster")
    run.add_argument("--dask-local", type=int, metavar="N", help="start a local Dask cluster of N workers")
    _gate_options(run)
    _output_options(run)

    cmp_ = sub.add_parser(
        "compare", help="compare existing result files",
        description="Pair two (or more) JSONL/CSV result files by id and report. With several "
        "AFTER files, each is compared with BEFORE and a summary with Holm-adjusted p follows.",
        epilog="example: ablation compare runs/gpt-5.jsonl runs/gpt-5.1.jsonl --key id --field passed",
    )
    cmp_.add_argument("before", type=Path, help="baseline results (JSONL or CSV)")
    cmp_.add_argument("after", type=Path, nargs="+", help="candidate results (JSONL or CSV)")
    cmp_.add_argument("--key", default="id", help="id field (default id)")
    cmp_.add_argument("--field", default="passed", help="verdict field (default passed)")
    cmp_.add_argument("--expected-ids", type=Path, help="file of ids that must all be present")
    _gate_options(cmp_)
    _output_options(cmp_)

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

    plan = sub.add_parser(
        "plan", help="tasks needed for an effect, or the smallest effect a suite can see",
        description="Connor (1987) sample size for a paired binary comparison, or the minimum "
        "detectable effect of N tasks (or of an existing result pair).",
        epilog="example: ablation plan --discordance 0.10 --uplift 0.03 --alpha 0.05 --power 0.8",
    )
    plan.add_argument("--discordance", type=float, help="share of tasks expected to flip (psi)")
    plan.add_argument("--uplift", type=float, help="pass-rate change to detect (delta)")
    plan.add_argument("--tasks", type=int, help="suite size: print the minimum detectable effect")
    plan.add_argument("--results", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                      help="take the task count and discordance from two result files")
    plan.add_argument("--alpha", type=float, default=0.05)
    plan.add_argument("--power", type=float, default=0.8)
    plan.add_argument("--one-sided", action="store_true")
    plan.add_argument("--debug", action="store_true")

    init = sub.add_parser(
        "init", help="scaffold tasks/, agents/ and a config in a project",
        description="Create an example suite, two agents and [tool.ablation] defaults.",
        epilog="example: ablation init my-project",
    )
    init.add_argument("directory", nargs="?", type=Path, default=Path("."))
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.add_argument("--debug", action="store_true")
    return parser


def _version() -> str:
    from ablation import __version__

    return __version__


# --------------------------------------------------------------------------- settings
def _settings(args: argparse.Namespace) -> dict[str, Any]:
    from ablation.cli.settings import load_tool_settings

    merged = dict(load_tool_settings())
    for key, value in vars(args).items():
        if value is not None and value is not False and value != []:
            merged[key] = value
    return merged


def _config(s: dict[str, Any]) -> Any:
    from ablation.config import CampaignConfig
    from ablation.errors import ConfigError

    labels = dict(s.get("labels", {}))
    for item in s.get("label", []):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--label needs KEY=VALUE, got {item!r}")
        labels[key] = value
    fields: dict[str, Any] = {"labels": labels}
    simple = {
        "seed": "seed", "concurrency": "concurrency", "timeout": "timeout_s", "runs": "runs",
        "on_error": "on_error", "alpha": "alpha", "confidence": "confidence_level",
        "resamples": "n_resamples", "rate_limit": "rate_limit_per_s",
    }
    fields.update({dst: s[src] for src, dst in simple.items() if s.get(src) is not None})
    retry: dict[str, Any] = {}
    if s.get("max_attempts") is not None:
        retry["max_attempts"] = s["max_attempts"]
    if s.get("retry_on"):
        retry["retry_on"] = tuple(s["retry_on"])
    if retry:
        fields["retry"] = retry
    gates: dict[str, Any] = {}
    if s.get("margin") is not None:
        gates["noninferiority_margin"] = s["margin"]
    if s.get("no_significant_regression"):
        gates["no_significant_regression"] = True
    if s.get("max_latency_ratio") is not None:
        gates["max_latency_ratio"] = s["max_latency_ratio"]
    if s.get("critical_gate") is False:
        gates["critical_must_not_regress"] = False
    if gates:
        fields["gates"] = gates
    try:
        return CampaignConfig.model_validate(fields)
    except ValueError as exc:
        raise ConfigError(_one_line(exc)) from None


def _one_line(exc: BaseException) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors()
        ]
        return "invalid option: " + "; ".join(parts)
    return " ".join(str(exc).split())


# --------------------------------------------------------------------------- output
def _emit(reports: list[Any], names: list[str], s: dict[str, Any]) -> int:
    """Write the reports (and, for several candidates, the summary); return the exit code."""
    from ablation.render import print_report, render, render_summary

    fmt = s.get("format") or "terminal"
    details = bool(s.get("details"))
    out: Path | None = s.get("output")
    several = len(reports) > 1
    if fmt == "json" and several:
        payload = {
            "candidates": [
                {"name": n, "report": json.loads(r.model_dump_json())}
                for n, r in zip(names, reports, strict=True)
            ],
            "summary": json.loads(render_summary(reports, names, "json")),
        }
        text = json.dumps(payload, indent=2)
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
        from rich.console import Console

        console = Console()
        for name, report in zip(names, reports, strict=True):
            if several:
                console.rule(f"candidate: {name}", characters="=")
            print_report(report, console, details=details)
        if several:
            sys.stdout.write(render_summary(reports, names, "terminal", width=console.width) + "\n")
        return _exit_code(reports)
    else:
        parts = [render(r, fmt, details=details) for r in reports]
        if several:
            parts.append(render_summary(reports, names, fmt))
        text = "\n\n".join(parts)
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
        print(f"report written to {out}", file=sys.stderr)
    else:
        sys.stdout.write(text + "\n")
    return _exit_code(reports)


def _exit_code(reports: list[Any]) -> int:
    return EXIT_OK if all(r.verdict == "pass" for r in reports) else EXIT_GATE


# --------------------------------------------------------------------------- commands
@contextlib.contextmanager
def _executor(s: dict[str, Any]) -> Iterator[Any]:
    if s.get("dask_scheduler") or s.get("dask_local"):
        from ablation.run.scaleout import dask_executor

        with dask_executor(scheduler=s.get("dask_scheduler"), local_workers=s.get("dask_local")) as ex:
            yield ex
    else:
        yield None


def _scorers(specs: Sequence[str]) -> list[Any]:
    from ablation.evaluate import quality
    from ablation.sources.agent_specs import load_agent

    builtin = {"code_quality": quality.CodeQualityScorer, "rubric": quality.RubricScorer}
    out = []
    for spec in specs:
        if spec in builtin:
            out.append(builtin[spec]())
        else:
            obj = load_agent(spec)
            out.append(obj() if isinstance(obj, type) else obj)
    return out


def _agent_name(spec: str) -> str:
    """``file.py:attr`` specs are named by their path relative to the working directory."""
    path, sep, attr = spec.rpartition(":")
    if sep and path.endswith(".py") and not spec.startswith(("cmd:", "http:", "https:")):
        with contextlib.suppress(ValueError):
            relative = os.path.relpath(Path(path).resolve(), Path.cwd())
            path = path if relative.startswith("..") else relative
        return f"{Path(path).as_posix()}:{attr}"
    return spec


def _cmd_run(args: argparse.Namespace) -> int:
    from ablation.agents.callables import as_agent
    from ablation.run.campaign import CampaignRun, run_ablation_campaign
    from ablation.run.progress import NullProgress, default_progress
    from ablation.sources.agent_specs import load_agent
    from ablation.sources.suites import load_suite
    from ablation.store.run_store import DEFAULT_STORE_PATH

    s = _settings(args)
    config = _config(s)
    tasks = load_suite(args.suite)
    # Agents are named by their spec, so a resume from the same command line matches.
    baseline = as_agent(load_agent(args.baseline), name=_agent_name(args.baseline))
    candidates = [as_agent(load_agent(spec), name=_agent_name(spec)) for spec in args.candidate]
    scorers = _scorers(s.get("quality") or [])
    if s.get("no_store") and (args.resume or args.reuse_baseline):
        raise UsageError("--resume and --reuse-baseline need a store (drop --no-store)")
    tmp = tempfile.TemporaryDirectory() if s.get("no_store") else None
    store = Path(tmp.name) / "runs.db" if tmp else Path(s.get("store") or DEFAULT_STORE_PATH)
    reports: list[Any] = []
    names: list[str] = []
    info, current = CampaignRun(), 0
    try:
        with _executor(s) as executor:
            for i, (spec, candidate) in enumerate(zip(args.candidate, candidates, strict=True)):
                progress = NullProgress() if s.get("no_progress") else default_progress()
                info, current = CampaignRun(), i
                report = run_ablation_campaign(
                    baseline, candidate, tasks, config=config, quality_scorers=scorers,
                    store=store, progress=progress, executor=executor,
                    resume=args.resume if i == 0 else False,
                    reuse_baseline=args.reuse_baseline if i == 0 else reports[0].provenance.campaign_id,
                    run_info=info,
                )
                reports.append(report)
                names.append(spec)
    except KeyboardInterrupt:
        hint = (
            _resume_command(sys.argv[1:], args.candidate[:current], store, info.campaign_id)
            if info.campaign_id and not tmp
            else "(no store: nothing to resume)"
        )
        print(f"ablation: interrupted; finished trials are saved. Resume with: {hint}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if tmp is not None:
            tmp.cleanup()
    return _emit(reports, names, s)


def _resume_command(argv: Sequence[str], done: Sequence[str], store: Path, campaign_id: str) -> str:
    """The shell command that resumes an interrupted ``run`` (``argv`` without the program name).

    Candidates whose campaigns already completed (``done``) are left out, so the first candidate
    of the command is the one whose campaign ``campaign_id`` was interrupted; ``--store``,
    ``--resume`` and ``--reuse-baseline`` are replaced by the store and campaign to resume.
    """
    with_value = {"--store", "--reuse-baseline"}
    skip_candidates = list(done)
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        name, eq, value = item.partition("=")
        if name == "--candidate" and skip_candidates:
            candidate = value if eq else (items[i + 1] if i + 1 < len(items) else "")
            if candidate == skip_candidates[0]:
                skip_candidates.pop(0)
                i += 1 if eq else 2
                continue
        if name in with_value:
            i += 1 if eq else 2
            continue
        if name == "--resume":
            has_value = not eq and i + 1 < len(items) and not items[i + 1].startswith("-")
            i += 2 if has_value else 1  # argparse takes the next word as the campaign id
            continue
        out.append(item)
        i += 1
    return shlex.join(["ablation", *out, "--store", str(store), "--resume", campaign_id])


def _cmd_compare(args: argparse.Namespace) -> int:
    from ablation.analysis.build import compare_results
    from ablation.sources.result_files import load_expected_ids, load_results

    s = _settings(args)
    config = _config(s)
    expected = load_expected_ids(args.expected_ids) if args.expected_ids else None
    before = load_results(args.before, key=args.key, field=args.field, arm="baseline")
    reports = []
    for path in args.after:
        after = load_results(path, key=args.key, field=args.field, arm="candidate")
        reports.append(
            compare_results(
                before, after, expected_ids=expected, config=config,
                names=(str(args.before), str(path)),
            )
        )
    return _emit(reports, [p.name for p in args.after], s)


def _cmd_report(args: argparse.Namespace) -> int:
    from ablation.errors import ConfigError
    from ablation.run.campaign import report_stored_campaign
    from ablation.store.run_store import DEFAULT_STORE_PATH, RunStore

    s = _settings(args)
    path = Path(s.get("store") or DEFAULT_STORE_PATH)
    if not path.exists():
        raise ConfigError(f"{path}: no run store here (run a campaign first, or pass --store)")
    overrides = _config(s)  # only the options given on the command line change the stored ones
    changed = {k: getattr(overrides, k) for k in overrides.model_fields_set if k != "labels"}
    with RunStore(path) as store:
        campaign = None if args.campaign == "latest" else args.campaign
        report, record = report_stored_campaign(store, campaign, config_update=changed)
        if args.export_jsonl:
            store.export_jsonl(record.campaign_id, args.export_jsonl)
        if record.status != "complete":
            print(
                f"ablation: campaign {record.campaign_id} is {record.status}: "
                f"{record.n_trials} trial(s) stored; tasks without results are listed as missing",
                file=sys.stderr,
            )
    return _emit([report], [record.candidate_agent], s)


def _cmd_plan(args: argparse.Namespace) -> int:
    from ablation import stats

    alternative = "one-sided" if args.one_sided else "two-sided"
    psi, n = args.discordance, args.tasks
    if args.results:
        from ablation.analysis.build import compare_results

        report = compare_results(args.results[0], args.results[1])
        n = report.n_paired
        psi = (report.table.regressions + report.table.improvements) / n if n else 0.0
        print(f"observed: {n} paired tasks, discordance {psi:.4f} "
              f"({report.table.regressions} regressions + {report.table.improvements} improvements)")
    if psi is None:
        raise UsageError("ablation plan: give --discordance (or --results BEFORE AFTER)")
    if args.uplift is not None and n is None:
        result = stats.sample_size_paired(psi, args.uplift, alpha=args.alpha, power=args.power,
                                          alternative=alternative)
        print(f"tasks needed: {result.n} (Connor 1987; n = {result.n_exact:.2f} for discordance "
              f"{psi}, uplift {args.uplift}, alpha {args.alpha} {alternative}, power {args.power})")
        return EXIT_OK
    if n is None:
        raise UsageError("ablation plan: give --uplift (tasks needed) or --tasks/--results (MDE)")
    mde = stats.minimum_detectable_effect(n, psi=psi, alpha=args.alpha, power=args.power,
                                          alternative=alternative)
    print(f"minimum detectable uplift with {n} tasks: {mde:.4f} ({mde * 100:.2f} points; "
          f"Connor 1987, discordance {psi:.4f}, alpha {args.alpha} {alternative}, power {args.power})")
    return EXIT_OK


def _cmd_init(args: argparse.Namespace) -> int:
    from ablation.cli.scaffold import scaffold

    created, command = scaffold(args.directory, force=args.force)
    for path in created:
        print(f"created {path}")
    print(f"\nrun it with:\n  {command}")
    return EXIT_OK


COMMANDS = {
    "run": _cmd_run, "compare": _cmd_compare, "report": _cmd_report,
    "plan": _cmd_plan, "init": _cmd_init,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code (0 pass, 1 error, 2 gate failed)."""
    parser = build_parser()
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_ERROR
        return COMMANDS[args.command](args)
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print("ablation: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:
        if debug:
            traceback.print_exc()
        print(f"ablation: error: {_describe(exc)}", file=sys.stderr)
        return EXIT_ERROR


def _describe(exc: BaseException) -> str:
    from ablation.errors import AblationError

    if isinstance(exc, UsageError | AblationError):
        return " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    return f"{type(exc).__name__}: {_one_line(exc)}"


def main_entry() -> None:
    """Console-script entry point."""
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    sys.exit(main())
