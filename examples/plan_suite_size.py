"""Plan a suite's size before running it: tasks needed, and the smallest effect a suite can see.

Run from the repository root::

    python examples/plan_suite_size.py

A paired comparison's power depends on the *discordance* psi - the share of tasks whose
outcome flips between the arms - not on the pass rates. :func:`ablation.stats.sample_size_paired`
gives the tasks needed to detect an uplift delta with McNemar's test (Connor 1987), and
:func:`ablation.stats.minimum_detectable_effect` the smallest uplift a suite of n tasks detects.
The last part takes psi from a real pair of SWE-bench runs bundled in ``examples/data/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ablation import compare_results, stats

DATA = Path(__file__).resolve().parent / "data"


def main() -> int:
    """Print a sample-size table, minimum detectable effects, and a plan from real data."""
    alpha, power = 0.05, 0.8
    print(f"Tasks needed (two-sided alpha {alpha}, power {power}; Connor 1987):")
    deltas = (0.02, 0.03, 0.05, 0.10)
    print("  discordance psi " + "".join(f"  uplift {d:>4.0%}" for d in deltas))
    for psi in (0.05, 0.10, 0.20, 0.30):
        cells = []
        for delta in deltas:
            if delta > psi:
                cells.append(f"{'-':>13}")
            else:
                n = stats.sample_size_paired(psi, delta, alpha=alpha, power=power).n
                cells.append(f"{n:>13,}")
        print(f"  {psi:>15.2f} " + "".join(cells))

    print("\nMinimum detectable uplift (psi = 0.10):")
    for n in (30, 100, 300, 500, 1000):
        mde = stats.minimum_detectable_effect(n, psi=0.10, alpha=alpha, power=power)
        print(f"  {n:>5} tasks: {mde:.1%}" if mde != float("inf") else f"  {n:>5} tasks: none")

    # From real data: gpt-5 -> gpt-5-mini on SWE-bench Verified.
    report = compare_results(
        DATA / "swebench-verified-mini__gpt-5.jsonl",
        DATA / "swebench-verified-mini__gpt-5-mini.jsonl",
    )
    n = report.n_paired
    psi = (report.table.regressions + report.table.improvements) / n
    observed = report.uplift.estimate
    mde = stats.minimum_detectable_effect(n, psi=psi, alpha=alpha, power=power)
    needed = stats.sample_size_paired(psi, observed, alpha=alpha, power=power)
    print(f"\nSWE-bench Verified, gpt-5 -> gpt-5-mini: {n} tasks, discordance {psi:.3f}, "
          f"observed uplift {observed:+.1%}")
    print(f"  minimum detectable uplift with {n} tasks: {mde:.1%}")
    print(f"  tasks needed to detect {observed:+.1%} with power {power}: {needed.n} "
          f"(n = {needed.n_exact:.1f})")
    half = stats.sample_size_paired(psi, observed / 2, alpha=alpha, power=power)
    print(f"  tasks needed to detect half of it ({observed / 2:+.1%}): {half.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
