"""A small demo store for the viewer's tests and screenshots: real campaigns, fast agents.

Suite ``arith`` (14 tasks, three categories, two critical) is run three times with the same
baseline and three candidates, so the history has three points and some tasks flip between
campaigns; task ``t05`` gets a hostile output from the candidate (markup, a ``javascript:`` link,
ANSI escapes) and ``t07`` an error whose message is hostile too. A second suite (``other``, 5
tasks, one with a hostile id and category) gets one campaign, so the suite filter has two values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ablation import AblationTask, CampaignConfig, run_ablation_campaign

HOSTILE = (
    '<img src=x onerror=alert(1)> </script><script>alert(2)</script> '
    '<a href="javascript:alert(3)">click me</a> \x1b[31mred\x1b[0m'
)
CONFIG = CampaignConfig(n_resamples=200, seed=7)


#: A task id and a category that are markup (in the ``other`` suite).
HOSTILE_ID = '<svg onload=alert(4)>"&/?#'
HOSTILE_CATEGORY = "<b onclick=alert(5)>cat</b>"


def suite(name: str = "arith", n: int = 14) -> list[AblationTask]:
    """``n`` arithmetic tasks: the expected output is twice the input (``other``: plus one task
    whose id and category are markup)."""
    cats = ("algebra", "geometry", "logic")
    extra = [
        AblationTask(task_id=HOSTILE_ID, input_data={"n": 1}, expected_output=2,
                     category=HOSTILE_CATEGORY)
    ] if name == "other" else []  # fmt: skip
    return extra + [
        AblationTask(task_id=f"{name}-t{i:02d}" if name != "arith" else f"t{i:02d}",
                     input_data={"n": i}, expected_output=2 * i, category=cats[i % 3],
                     critical=i in (3, 9))
        for i in range(n)
    ]


def baseline(task: dict[str, Any]) -> Any:
    """Right except on multiples of 4."""
    n = task["n"]
    return 2 * n if n % 4 else f"the answer is {2 * n + 1}"


def candidate_a(task: dict[str, Any]) -> Any:
    """Right except on 3, 5 and 7 (7 raises with a hostile message; 5 answers hostile markup)."""
    n = task["n"]
    if n == 5:
        return HOSTILE
    if n == 7:
        raise ValueError(HOSTILE)
    return f"the answer is {2 * n + 1}" if n == 3 else 2 * n


def candidate_b(task: dict[str, Any]) -> Any:
    """Right except on 2 and 4."""
    n = task["n"]
    return f"maybe {2 * n} or so" if n in (2, 4) else 2 * n


def candidate_c(task: dict[str, Any]) -> Any:
    """Right except on 3 and 8."""
    n = task["n"]
    return 0 if n in (3, 8) else 2 * n


def build(path: Path) -> Path:
    """Write the demo store at ``path`` and return it."""
    tasks = suite()
    for candidate in (candidate_a, candidate_b, candidate_c):
        run_ablation_campaign(baseline, candidate, tasks, config=CONFIG, store=path)
    run_ablation_campaign(baseline, candidate_b, suite("other", 4), config=CONFIG, store=path)
    return path
