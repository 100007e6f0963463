"""Quickstart: a suite written in Python, two agents, one paired campaign, one report.

Run from the repository root::

    python examples/quickstart.py

The baseline converts units with a few over-rounded factors; the candidate uses exact factors
but forgets that Fahrenheit needs an offset. Its pass rate is higher, the difference is not
significant on twelve tasks, and the one task it broke is still named first: the report lists
the tasks that regressed and improved before any summary number, then gives the exact McNemar
test and the intervals. The script exits with the report's exit code (0: every release gate
holds).
"""

from __future__ import annotations

import sys

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.render import render
from ablation.verifiers import numeric

# 1. A suite: each task has an id, an input, an expected output and a verifier.
_CONVERSIONS = [
    # (task id, value, from unit, to unit, expected)
    ("length-km-mi", 10.0, "km", "mi", 6.21371),
    ("length-mi-km", 26.2, "mi", "km", 42.1648),
    ("length-in-cm", 12.0, "in", "cm", 30.48),
    ("length-ft-m", 100.0, "ft", "m", 30.48),
    ("mass-kg-lb", 5.0, "kg", "lb", 11.0231),
    ("mass-lb-kg", 150.0, "lb", "kg", 68.0389),
    ("mass-oz-g", 8.0, "oz", "g", 226.796),
    ("temperature-c-f", 100.0, "C", "F", 212.0),
    ("temperature-f-c", 98.6, "F", "C", 37.0),
    ("volume-gal-l", 3.0, "gal", "l", 11.3562),
    ("volume-l-gal", 20.0, "l", "gal", 5.28344),
    ("volume-cup-ml", 2.0, "cup", "ml", 473.176),
]

tasks = [
    AblationTask(
        task_id=task_id,
        category=task_id.split("-")[0],
        input_data={"value": value, "from": src, "to": dst},
        expected_output=expected,
        verifier=numeric(rel_tol=1e-3),  # within 0.1 %
    )
    for task_id, value, src, dst, expected in _CONVERSIONS
]

# 2. Two agents: any callable taking the task input works (sync or async).
_ROUNDED = {"km": 1000, "mi": 1609, "in": 0.0254, "cm": 0.01, "ft": 0.3, "m": 1.0,
            "kg": 1.0, "lb": 0.4536, "oz": 0.0283, "g": 0.001,
            "gal": 3.785, "l": 1.0, "cup": 0.24, "ml": 0.001}
_EXACT = {"km": 1000, "mi": 1609.344, "in": 0.0254, "cm": 0.01, "ft": 0.3048, "m": 1.0,
          "kg": 1.0, "lb": 0.45359237, "oz": 0.028349523125, "g": 0.001,
          "gal": 3.785411784, "l": 1.0, "cup": 0.2365882365, "ml": 0.001}


def baseline(task: dict) -> float:
    """Some over-rounded conversion factors; temperatures done right."""
    value, src, dst = task["value"], task["from"], task["to"]
    if src == "C":
        return value * 9 / 5 + 32
    if src == "F":
        return (value - 32) * 5 / 9
    return value * _ROUNDED[src] / _ROUNDED[dst]


def candidate(task: dict) -> float:
    """Exact conversion factors; Fahrenheit to Celsius forgets the offset."""
    value, src, dst = task["value"], task["from"], task["to"]
    if src == "C":
        return value * 9 / 5 + 32
    if src == "F":
        return value * 5 / 9
    return value * _EXACT[src] / _EXACT[dst]


def main() -> int:
    """Run the campaign and print the terminal report."""
    # 3. Run both arms on every task, paired by task id, with a fixed seed.
    report = run_ablation_campaign(
        baseline, candidate, tasks, config=CampaignConfig(seed=7, n_resamples=2000)
    )
    # 4. Read it: regressions first, then the paired table, tests and intervals.
    print(render(report, "terminal"))
    print(f"regressions: {', '.join(report.regressions) or 'none'}")
    print(f"improvements: {', '.join(report.improvements) or 'none'}")
    print(f"exact McNemar p = {report.mcnemar.pvalue:.4g}; verdict: {report.verdict}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
