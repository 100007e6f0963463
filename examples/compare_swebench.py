"""Compare two real SWE-bench runs task by task, from their published per-task results.

Run from the repository root::

    python examples/compare_swebench.py

The files in ``examples/data/`` are real per-instance outcomes of public leaderboard runs (see
``examples/data/SOURCES.md`` for where they come from). :func:`ablation.compare_results` pairs
two result files by task id and builds the same report a campaign would:

1. gpt-5 -> gpt-5-mini on SWE-bench Verified (mini-SWE-agent): a real regression, exact McNemar
   p = 0.0054, at about an eighth of the cost;
2. claude-sonnet-4 -> claude-sonnet-4-5: a real improvement (p = 0.0015);
3. a SWE-bench Verified file against a SWE-Bench Pro file: different benchmarks share no task
   id, and the strict inventory says so (every id is counted and named as unpaired) instead of
   comparing two totals.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ablation import CampaignConfig, GatePolicy, compare_results, load_results

DATA = Path(__file__).resolve().parent / "data"
VERIFIED = "swebench-verified-mini__{}.jsonl"


def show_pair(before: str, after: str, config: CampaignConfig) -> int:
    """Compare two SWE-bench Verified runs and print what a reviewer needs first."""
    baseline = load_results(DATA / VERIFIED.format(before), key="id", field="passed")
    candidate = load_results(DATA / VERIFIED.format(after), key="id", field="passed")
    report = compare_results(baseline, candidate, config=config, names=(before, after))
    t = report.table
    print(f"== {before} -> {after}: {report.n_paired} paired tasks ==")
    print("                 after pass   after fail")
    print(f"  before pass   {t.both_pass:>11}  {t.regressions:>11}   ({t.regressions} regressions)")
    print(f"  before fail   {t.improvements:>11}  {t.both_fail:>11}   ({t.improvements} improvements)")
    print(f"  pass rate {report.baseline.pass_rate:.1%} -> {report.candidate.pass_rate:.1%}, "
          f"uplift {report.uplift.estimate:+.1%} "
          f"(95% CI [{report.uplift.ci.low:+.1%}, {report.uplift.ci.high:+.1%}])")
    print(f"  exact McNemar p = {report.mcnemar.pvalue:.4g} (b = {report.mcnemar.b}, "
          f"c = {report.mcnemar.c}; {report.mcnemar.method})")
    if report.cost is not None:
        print(f"  mean cost per task ${report.cost.baseline_mean:.4f} -> "
              f"${report.cost.candidate_mean:.4f}")
    shown = report.regressions[:8]
    more = len(report.regressions) - len(shown)
    print(f"  regressions ({len(report.regressions)}): {', '.join(shown)}"
          + (f" ... and {more} more" if more > 0 else ""))
    for gate in report.gates:
        print(f"  gate [{gate.status}] {gate.name}")
    print(f"  verdict: {report.verdict} (exit code {report.exit_code})\n")
    return report.exit_code


def show_inventory() -> None:
    """Pair files of two different benchmarks: nothing pairs, and the report says so."""
    verified = DATA / VERIFIED.format("gpt-5")
    pro = DATA / "swebench-pro-public__gpt-5.jsonl"
    before = load_results(verified, key="id", field="passed")
    after = load_results(pro, key="id", field="passed")
    report = compare_results(before, after, names=("verified/gpt-5", "pro/gpt-5"))
    before_ids = {r.task_id for r in before}
    only_before = [e.task_id for e in report.excluded if e.task_id in before_ids]
    only_after = [e.task_id for e in report.excluded if e.task_id not in before_ids]
    print("== SWE-bench Verified vs SWE-Bench Pro (different benchmarks) ==")
    print(f"  {report.n_tasks} task ids, {report.n_paired} paired, "
          f"{len(report.excluded)} excluded and named")
    print(f"  only in the Verified file: {len(only_before)} (e.g. {only_before[0]})")
    print(f"  only in the Pro file: {len(only_after)} (e.g. {only_after[0]})")
    print("  nothing to compare: results of different benchmarks must not be paired.")


def main() -> int:
    """Run the three comparisons."""
    config = CampaignConfig(
        seed=0,
        n_resamples=2000,
        gates=GatePolicy(no_significant_regression=True),  # fail on a significant regression
    )
    show_pair("gpt-5", "gpt-5-mini", config)
    show_pair("claude-sonnet-4", "claude-sonnet-4-5", config)
    show_inventory()
    return 0


if __name__ == "__main__":
    sys.exit(main())
