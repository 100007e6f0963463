"""The commands: ``run``, ``compare``, ``report``, ``plan`` and ``init`` (wiring only)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ablation.cli import user_code
from ablation.cli.options import campaign_config, merged_settings
from ablation.cli.output import EXIT_ERROR, EXIT_OK, emit, say_sandbox_unavailable
from ablation.cli.parser import UsageError
from ablation.cli.user_io import stdin_for_user_code, user_output_to_stderr
from ablation.process_hooks import during_large_work

__all__ = ["COMMANDS", "resume_command"]


def _cmd_run(args: argparse.Namespace) -> int:
    """``ablation run``: the suite, agents and scorers run with their stdout sent to stderr, so
    stdout holds the report alone, and with ``/dev/null`` as stdin unless it is a terminal
    (:mod:`ablation.cli.user_io`). Processes its agents started and left running are killed at
    the end (:mod:`ablation.cli.descendants`)."""
    from ablation.cli.descendants import descendants_killed

    with user_output_to_stderr() as stream, stdin_for_user_code(), descendants_killed():
        return _run(args, stream)


def _run(args: argparse.Namespace, stream: TextIO) -> int:
    from ablation.run.campaign import CampaignRun, run_ablation_campaign
    from ablation.run.failfast import BrokenArm
    from ablation.run.progress import NullProgress, default_progress
    from ablation.sources.suites import open_suite

    s = _run_settings(args)
    config = campaign_config(s)
    tasks = open_suite(args.suite)  # a JSONL suite is streamed, pass by pass
    # Agents are named by their spec, so a resume from the same command line matches.
    baseline, *candidates = user_code.load_agents([args.baseline, *args.candidate], s)
    scorers = user_code.scorers(s.get("quality") or [])
    if s.get("no_store") and (args.resume or args.reuse_baseline):
        raise UsageError("--resume and --reuse-baseline need a store (drop --no-store)")
    import tempfile

    tmp = tempfile.TemporaryDirectory() if s.get("no_store") else None
    store = Path(tmp.name) / "runs.db" if tmp else s["store"]
    reports: list[Any] = []
    names: list[str] = []
    info, current = CampaignRun(), 0
    try:
        with user_code.executor(s) as executor:
            for i, (spec, candidate) in enumerate(zip(args.candidate, candidates, strict=True)):
                progress = NullProgress() if s.get("no_progress") else default_progress()
                info, current = CampaignRun(), i
                report = run_ablation_campaign(
                    baseline, candidate, tasks, config=config, quality_scorers=scorers,
                    store=store, progress=progress, executor=executor,
                    resume=args.resume if i == 0 else False,
                    reuse_baseline=args.reuse_baseline if i == 0 else reports[0].provenance.campaign_id,
                    run_info=info, fail_fast=_fail_fast(s),
                    allow_changed_agent=bool(getattr(args, "allow_changed_agent", False)),
                )
                reports.append(report)
                names.append(spec)
    except BrokenArm as exc:
        resume = _resume_hint(args, current, store, info, tmp is not None)
        hint = (
            f"; the stored campaign is marked aborted; after fixing the agent, resume with: {resume}"
            if resume else ""
        )
        print(f"ablation: error: {exc.summary}{hint}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        resume = _resume_hint(args, current, store, info, tmp is not None)
        print(
            "ablation: interrupted; finished trials are saved. Resume with: "
            + (resume or "(no store: nothing to resume)"),
            file=sys.stderr,
        )
        return EXIT_ERROR
    finally:
        if tmp is not None:
            tmp.cleanup()
    say_sandbox_unavailable(reports)
    return emit(reports, names, s, stream)


def _run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of ``run``, with the store and ``--output`` as absolute paths.

    They are fixed before any user code runs: an agent sharing the process may change the
    working directory (a coding agent that cds into a checkout), which must not move the files
    the run reopens or writes.
    """
    from ablation.store.run_store import DEFAULT_STORE_PATH

    s = merged_settings(args)
    s["n_candidates"] = len(args.candidate)
    s["store"] = Path(s.get("store") or DEFAULT_STORE_PATH).absolute()
    if s.get("output") is not None:
        s["output"] = Path(s["output"]).absolute()
    if args.resume and s.get("sequential") and not s.get("no_store"):
        s["n_candidates"] = _stored_candidates(s["store"], args.resume) or s["n_candidates"]
    return s


def _resume_hint(
    args: argparse.Namespace, current: int, store: Path, info: Any, no_store: bool
) -> str | None:
    """The command that resumes the interrupted campaign, or ``None`` when nothing is stored."""
    if not info.campaign_id or no_store:
        return None
    return resume_command(sys.argv[1:], args.candidate[:current], store, info.campaign_id)


def _fail_fast(s: dict[str, Any]) -> int:
    from ablation.run.failfast import DEFAULT_FAIL_FAST

    value = s.get("fail_fast")
    if value is None:
        return DEFAULT_FAIL_FAST
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"--fail-fast needs a whole number >= 0 (0 disables), got {value!r}")
    return value
def _stored_candidates(store: Path, resume: bool | str) -> int | None:
    """How many candidates a stored sequential campaign split alpha over (a resume keeps it).

    The resume hint of a several-candidate run leaves out the candidates already done, so the
    command line alone would count fewer candidates than the campaign was started with.
    """
    from ablation.store.run_store import RunStore

    if not store.exists():
        return None
    with RunStore(store) as run_store:
        record = (
            run_store.get_campaign(resume) if isinstance(resume, str) else run_store.latest_campaign()
        )
    policy = record.config.sequential if record is not None else None
    return policy.candidates if policy is not None else None


def resume_command(argv: Sequence[str], done: Sequence[str], store: Path, campaign_id: str) -> str:
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
    import shlex

    return shlex.join(["ablation", *out, "--store", str(store), "--resume", campaign_id])


@during_large_work
def _cmd_compare(args: argparse.Namespace) -> int:
    from ablation.analysis.build import compare_columns
    from ablation.cli.common_ids import require_common_ids
    from ablation.cli.options import read_options
    from ablation.sources.readers.columnar import FileTrials
    from ablation.sources.readers.rows import NumericVerdict
    from ablation.sources.result_files import load_expected_ids, load_result_columns

    s = merged_settings(args)
    s["n_candidates"] = len(args.after)
    config = campaign_config(s)
    expected = load_expected_ids(args.expected_ids) if args.expected_ids else None
    read = read_options(args)
    try:
        before = load_result_columns(args.before, arm="baseline", **read_options(args, baseline=True))
    except NumericVerdict as why:
        return _compare_numeric(args, s, str(why))
    reports = []
    for path in args.after:
        after = load_result_columns(path, arm="candidate", **read)
        require_common_ids(before.columns, after.columns, (str(args.before), str(path)))
        reports.append(
            compare_columns(
                before.columns, after.columns, expected_ids=expected, config=config,
                names=(str(args.before), str(path)),
                trial_lookup=FileTrials({"baseline": before, "candidate": after}),
            )
        )
    return emit(reports, [p.name for p in args.after], s)


def _compare_numeric(args: argparse.Namespace, s: dict[str, Any], why: str) -> int:
    """``compare`` of a numeric ``--field``: see :mod:`ablation.analysis.numeric`.

    ``why``: where the baseline holds a number, named in any error of a file read as numbers (a
    candidate's ``true`` is otherwise "not a number" with no word of the file that decided it).
    """
    from ablation.analysis.numeric import compare_numeric, numeric_output, task_means
    from ablation.cli.options import read_options
    from ablation.errors import InputError
    from ablation.sources.result_files import load_results

    def numbers(path: Any, arm: str, **read: Any) -> Any:
        try:
            return load_results(path, arm=arm, numeric=True, **read)
        except InputError as exc:
            raise type(exc)(f"{exc}; the field is compared as a number because {why}") from None

    field = args.field or "passed"
    before = numbers(args.before, "baseline", **read_options(args, baseline=True))
    base = task_means(before, field)
    results = []
    for path in args.after:
        after = numbers(path, "candidate", **read_options(args))
        results.append(compare_numeric(
            base, task_means(after, field), field=field,
            regression_delta=args.regression_delta or 0.0, alpha=s.get("alpha") or 0.05,
            confidence_level=s.get("confidence") or 0.95,
        ))  # fmt: skip
    if not s.get("quiet"):
        print(numeric_output(results, [str(p) for p in args.after], s.get("format") == "json"))
    return max(r.exit_code for r in results)


def _cmd_report(args: argparse.Namespace) -> int:
    from ablation.analysis.stored import report_stored_campaign
    from ablation.errors import ConfigError
    from ablation.store.run_store import DEFAULT_STORE_PATH, RunStore

    s = merged_settings(args)
    path = Path(s.get("store") or DEFAULT_STORE_PATH)
    if not path.exists():
        raise ConfigError(f"{path}: no run store here (run a campaign first, or pass --store)")
    overrides = campaign_config(s)  # only the options given on the command line change the stored ones
    changed = {k: getattr(overrides, k) for k in overrides.model_fields_set if k != "labels"}
    with RunStore(path, read_only=True) as store:  # reading needs no write access
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
    return emit([report], [record.candidate_agent], s)


def _cmd_plan(args: argparse.Namespace) -> int:
    """``ablation plan``; a value the statistics refuse becomes one line naming the flags."""
    try:
        return _plan_command(args)
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        given = " ".join(
            f"--{name.replace('_', '-')} {getattr(args, name)}"
            for name in ("discordance", "uplift", "tasks", "alpha", "power", "margin")
            if getattr(args, name, None) is not None
        )
        raise UsageError(f"ablation plan: cannot plan for {given}: {exc}") from None


def _plan_command(args: argparse.Namespace) -> int:
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
    if args.uplift is not None and not 1e-6 <= abs(args.uplift) <= psi:
        raise UsageError(
            f"ablation plan: --uplift {args.uplift} must be at least 1e-06 in size and cannot "
            f"exceed the discordance {psi:.4g} (--discordance or --results)"
        )
    if args.uplift is not None and n is None:
        needed = _print_sample_size(psi, args.uplift, args.alpha, args.power, alternative)
        if args.sequential:
            _plan_sequential(args, psi, needed)
        return EXIT_OK
    if n is None:
        raise UsageError("ablation plan: give --uplift (tasks needed) or --tasks/--results (MDE)")
    mde = stats.minimum_detectable_effect(n, psi=psi, alpha=args.alpha, power=args.power,
                                          alternative=_exact_alternative(alternative))
    exact = stats.exact_minimum_detectable_effect(
        n, psi, alpha=args.alpha, power=args.power, alternative=_exact_alternative(alternative)
    ) if psi > 0 else float("inf")
    print(f"minimum detectable uplift with {n} tasks: {mde:.4f} ({mde * 100:.2f} points; "
          f"Connor 1987, discordance {psi:.4f}, alpha {args.alpha} {alternative}, power {args.power})")
    print(f"with the exact McNemar test the report runs: {exact:.4f} ({exact * 100:.2f} points; "
          "exact power by enumeration)")
    if args.sequential:
        if args.uplift is None:
            raise UsageError("ablation plan --sequential: give --uplift (the true uplift to simulate)")
        _plan_sequential(args, psi, n)
    return EXIT_OK


def _exact_alternative(alternative: str) -> str:
    # One-sided planning is for the release gate's direction: candidate worse.
    return "less" if alternative == "one-sided" else "two-sided"


def _print_sample_size(psi: float, uplift: float, alpha: float, power: float, alternative: str) -> int:
    """Print Connor's n, the exact test's power there and the exact test's n; return Connor's n."""
    from ablation import stats

    result = stats.sample_size_paired(
        psi, uplift, alpha=alpha, power=power, alternative=_exact_alternative(alternative)
    )
    print(f"tasks needed: {result.n} (Connor 1987; n = {result.n_exact:.2f} for discordance "
          f"{psi}, uplift {uplift}, alpha {alpha} {alternative}, power {power})")
    if result.exact_power is not None:
        print(f"exact McNemar test (what the report runs) at {result.n} tasks: power "
              f"{100 * result.exact_power:.1f}%")
    if result.n_exact_test is not None:
        print(f"tasks needed for {100 * power:g}% power with the exact McNemar test: "
              f"{result.n_exact_test}")
    return result.n


def _plan_sequential(args: argparse.Namespace, psi: float, n: int) -> None:
    """Print the simulated cost of a sequential campaign beside the fixed-n one."""
    from ablation import stats

    sim = stats.simulate_sequential(
        psi, args.uplift, n_max=n, alpha=args.alpha, margin=args.margin, n_sim=args.simulations
    )
    rates = ", ".join(f"{gate} {100 * rate:.1f}%" for gate, rate in sim.rates if rate > 0)
    if args.margin is not None:
        print(stats.noninferiority_design_text(psi, args.uplift, args.margin, args.alpha, args.power))
    print(
        f"sequential campaign over {n} tasks (simulated, {sim.n_sim} campaigns, seed {sim.seed}; "
        f"true uplift {args.uplift:+g}, margin {args.margin}): expected agent calls "
        f"{sim.expected_agent_calls:.0f} (mean; {sim.expected_pairs:.1f} pairs, MCSE "
        f"{sim.mcse_expected_pairs:.1f}), 90th percentile {sim.agent_calls_p90}, vs {2 * n} "
        f"for the fixed-n test of the uplift above; decided by: {rates}"
    )


def _cmd_init(args: argparse.Namespace) -> int:
    from ablation.cli.scaffold import scaffold

    created, command = scaffold(args.directory, force=args.force)
    for path in created:
        print(f"created {path}")
    print(f"\nrun it with:\n  {command}")
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from ablation.report import AblationReport

    print(json.dumps(AblationReport.model_json_schema(), indent=2))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from ablation.cli.listing import cmd_list

    return cmd_list(args)


def _cmd_view(args: argparse.Namespace) -> int:
    from ablation.cli.view_command import run_view

    return run_view(args)


COMMANDS = {
    "run": _cmd_run, "compare": _cmd_compare, "report": _cmd_report,
    "plan": _cmd_plan, "init": _cmd_init, "schema": _cmd_schema, "list": _cmd_list,
    "view": _cmd_view,
}
