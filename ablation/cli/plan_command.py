"""``ablation plan``: tasks needed for a target effect, or the smallest effect a suite can detect."""

from __future__ import annotations

import argparse
import math

from ablation.cli.output import EXIT_OK
from ablation.cli.parser import UsageError

__all__ = ["READING", "cmd_plan"]


#: The options that say how ``--results`` files are read, as ``compare`` reads them.
READING = ("key", "field", "run_field", "from_format", "where", "baseline_where", "pass_values")


def cmd_plan(args: argparse.Namespace) -> int:
    """``ablation plan``; a value the statistics refuse becomes one line naming the flags, a
    ``--results`` pair that cannot be read or pairs no task one line naming the files.

    ``alpha`` and ``margin`` not given as flags come from ``[tool.ablation]``, as for ``run`` and
    ``compare`` (:func:`~ablation.cli.options.over_file`)."""
    from ablation.cli.options import over_file

    names = over_file(args, "plan")
    _refuse_conflicts(args)
    observed = _observed(args) if args.results else None
    try:
        return _plan_command(args, observed)
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        given = " ".join(
            f"{names.get(name, '--' + name.replace('_', '-'))} {getattr(args, name)}"
            for name in ("discordance", "uplift", "tasks", "alpha", "power", "margin")
            if getattr(args, name, None) is not None
        )
        raise UsageError(f"ablation plan: cannot plan for {given}: {exc}") from None


def _refuse_conflicts(args: argparse.Namespace) -> None:
    """A reading flag (``--key``, ``--where``, ...) with no ``--results`` files is a usage error,
    and so is ``--tasks`` or ``--discordance`` with them (the files give both: the flag would be
    left unused)."""
    from ablation.cli.option_table import flags_of

    if args.results:
        for name in ("tasks", "discordance"):
            if getattr(args, name) is not None:
                raise UsageError(f"ablation plan: {flags_of(name)[0]} and --results: the files give the "
                                 "tasks and the discordance; give one or the other")  # fmt: skip
        return
    for name in READING:
        if getattr(args, name, None) not in (None, []):
            raise UsageError(f"ablation plan: {flags_of(name)[0]} says how --results files are read: "
                             "give --results BEFORE AFTER")  # fmt: skip


def _observed(args: argparse.Namespace) -> tuple[int, float]:
    """The paired tasks and the discordance of ``compare BEFORE AFTER``, printed with the tasks
    the pairing left out (an id in one file only, ...: ``ablation compare`` lists them).

    The files are read as ``compare`` reads them, with its reading flags (``--key``, ``--field``,
    ``--run-field``, ``--from``, ``--where``, ``--baseline-where``, ``--pass-values``,
    ``--max-input-bytes``), which a reader's error may name.

    Raises:
        UsageError: a file cannot be read, holds numbers or repeated runs (the plan is of the
            exact McNemar test of one pass/fail verdict per task), or no task is paired or none
            flipped (nothing to plan from).
    """
    from ablation.analysis.build import compare_results
    from ablation.cli.options import read_options
    from ablation.errors import AblationError
    from ablation.render._format import fmt_excluded
    from ablation.sources.readers.rows import NumericVerdict
    from ablation.sources.result_files import load_results

    results = args.results
    try:
        before = load_results(results[0], arm="baseline", **read_options(args, baseline=True))
        after = load_results(results[1], arm="candidate", **read_options(args))
        report = compare_results(before, after)
    except NumericVerdict as exc:
        raise UsageError(f"ablation plan: --results: {exc}: plan sizes a suite for pass/fail verdicts "
                         "(the exact McNemar test), not a numeric field") from None  # fmt: skip
    except (AblationError, ValueError, OSError) as exc:
        raise UsageError(f"ablation plan: --results: {exc}") from None
    n, table = report.n_paired, report.table
    files = f"ablation plan: --results {results[0]} {results[1]}"
    if report.runs > 1:
        keep = f"--where {args.run_field}=0" if args.run_field else "--where"
        raise UsageError(f"{files}: {report.runs} runs per task: plan sizes a suite for the exact McNemar "
                         f"test of one run per task ({keep} keeps one run)")  # fmt: skip
    left_out = f"; {fmt_excluded(report)}, listed by ablation compare" if report.excluded else ""
    if n == 0:
        raise UsageError(f"{files}: no task is paired{left_out}: nothing to plan from")
    psi = (table.regressions + table.improvements) / n
    if psi == 0:
        raise UsageError(
            f"{files}: no task flipped in {n} paired tasks{left_out} (discordance 0): nothing to plan "
            "from; give --discordance P, the share of tasks you expect to flip"
        )
    print(f"observed: {n} paired tasks{left_out}; discordance {psi:.4f} "
          f"({table.regressions} regressions + {table.improvements} improvements)")
    return n, psi


def _plan_command(args: argparse.Namespace, observed: tuple[int, float] | None) -> int:
    """Plan for the report's regression gate by default: its one-sided exact McNemar test (H1
    candidate worse) at ``--alpha`` unadjusted, whose MDE at 80% power the report prints as the
    smallest regression the gate could detect (:func:`ablation.analysis.headline.minimum_detectable`,
    the same :func:`ablation.stats.exact_minimum_detectable_effect`); ``--two-sided`` plans for a
    two-sided test."""
    from ablation import stats

    if args.one_sided and args.two_sided:
        raise UsageError("ablation plan: --one-sided and --two-sided: give one (the default is one-sided)")
    alternative = "two-sided" if args.two_sided else "one-sided"
    psi, n = args.discordance, args.tasks
    if observed is not None:
        n, psi = observed
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
    if args.uplift is not None and not args.sequential:
        given = "--tasks" if args.tasks is not None else "--results"
        raise UsageError(
            f"ablation plan: --uplift (the tasks an uplift needs) and {given} (the smallest uplift "
            f"a suite can detect) ask two questions: give one (with --sequential, --uplift is the "
            f"true uplift simulated over the {given} tasks)"
        )
    mde = stats.minimum_detectable_effect(n, psi=psi, alpha=args.alpha, power=args.power,
                                          alternative=_exact_alternative(alternative))
    exact = stats.exact_minimum_detectable_effect(
        n, psi, alpha=args.alpha, power=args.power, alternative=_exact_alternative(alternative)
    ) if psi > 0 else float("inf")
    tasks = f"{n} task{'s' if n != 1 else ''}"
    gate = " (H1 candidate worse, the regression gate's test)" if alternative == "one-sided" else ""
    design = f"discordance {psi:.4f}, alpha {args.alpha} {alternative}{gate}, power {args.power}"
    if math.isinf(mde) and math.isinf(exact):
        print(f"no uplift is detectable with {tasks}: even an uplift as large as the discordance "
              f"(every discordant task an improvement) has less than {args.power:.0%} power, by "
              f"Connor 1987 and by the exact McNemar test the report runs ({design}); --uplift D "
              "gives the tasks an uplift D needs")
    else:
        print(f"minimum detectable uplift with {tasks}: {_effect(mde, psi, args.power)}; "
              f"Connor 1987, {design})")
        print(f"with the exact McNemar test the report runs: {_effect(exact, psi, args.power)}; "
              f"exact power by enumeration{_as_report(alternative, args.power)})")
    if args.sequential:
        if args.uplift is None:
            raise UsageError("ablation plan --sequential: give --uplift (the true uplift to simulate)")
        _plan_sequential(args, psi, n)
    return EXIT_OK


def _effect(mde: float, psi: float, power: float) -> str:
    """An MDE and the opening of its note: ``0.0395 (3.95 points``; ``inf`` (not even an uplift
    equal to the discordance is detectable) is said in words."""
    if math.isinf(mde):
        return f"none (even an uplift equal to the discordance {psi:.4g} has less than {power:.0%} power"
    return f"{mde:.4f} ({mde * 100:.2f} points"


def _as_report(alternative: str, power: float) -> str:
    """What the report calls the one-sided exact MDE at 80% power (it prints no other)."""
    if alternative == "one-sided" and power == 0.8:
        return "; the report's 'smallest regression the gate could detect at 80% power'"
    return ""


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
    else:
        from ablation.stats.power import EXACT_POWER_MAX_N

        print(f"exact McNemar power not computed above {EXACT_POWER_MAX_N} tasks")
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
