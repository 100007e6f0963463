"""A release gate for CI: run the support-policy suite and exit with the report's code.

Run from the repository root::

    python examples/ci_gate.py; echo "exit code $?"

In a CI job the exit code is the gate: 0 when every release gate holds, 2 when one fails (1 is
left for errors). The candidate support bot in ``agents/support_policy.py`` passes more tickets
than the baseline, but approves a refund above the enterprise limit for a loyal customer: a
regression on a ``critical`` task of the ``permissions`` category. That gate fails whatever the
pass rate and the p-value say, so this script exits with 2 and names the task first.

The gates used here:

- critical tasks must not regress (always on by default);
- no significant regression: the candidate must not be significantly worse (exact McNemar);
- non-inferiority within 5 pass-rate points (Tango score test).

With ``--markdown PATH`` the full Markdown report (for a pull-request comment) is also
written to PATH.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ablation import CampaignConfig, GatePolicy, load_agent, load_suite, run_ablation_campaign
from ablation.quality import RubricScorer
from ablation.render import render

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    """Run the gated campaign; return 0 (ship) or 2 (a gate failed)."""
    parser = argparse.ArgumentParser(description="release gate for the support bot")
    parser.add_argument("--markdown", type=Path, help="also write a Markdown report here")
    args = parser.parse_args(argv)

    tasks = load_suite(ROOT / "tasks" / "support_policy.py")
    baseline = load_agent(f"{ROOT / 'agents' / 'support_policy.py'}:baseline")
    candidate = load_agent(f"{ROOT / 'agents' / 'support_policy.py'}:candidate")
    config = CampaignConfig(
        seed=2024,
        n_resamples=2000,
        gates=GatePolicy(
            critical_must_not_regress=True,
            no_significant_regression=True,
            noninferiority_margin=0.05,
        ),
        labels={"pipeline": "example-ci"},
    )
    report = run_ablation_campaign(
        baseline, candidate, tasks, config=config, quality_scorers=[RubricScorer()]
    )

    print(f"{report.n_paired} tickets: pass rate {report.baseline.pass_rate:.1%} -> "
          f"{report.candidate.pass_rate:.1%}, {report.table.regressions} regressions, "
          f"{report.table.improvements} improvements")
    rubric = report.quality.get("rubric")
    if rubric is not None and rubric.mean_difference is not None:
        print(f"reply quality (rubric): {rubric.baseline_mean:.1f} -> {rubric.candidate_mean:.1f}")
    if report.critical_regressions:
        print("CRITICAL regressions: " + ", ".join(report.critical_regressions))
    others = [t for t in report.regressions if t not in report.critical_regressions]
    if others:
        print("other regressions: " + ", ".join(others))
    print("gates:")
    for gate in report.gates:
        print(f"  [{gate.status.upper():<4}] {gate.name}: {gate.evidence}")
    print(f"verdict: {report.verdict.upper()} -> exit code {report.exit_code}")
    if args.markdown is not None:
        args.markdown.write_text(render(report, "markdown", details=True), encoding="utf-8")
        print(f"markdown report written to {args.markdown}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
