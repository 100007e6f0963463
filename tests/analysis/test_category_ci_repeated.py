"""With repeated runs each category gets the headline's interval on its own tasks.

The category table showed "—" for every category's uplift interval when tasks ran several times
(only the one-run Tango interval was computed per category). Now each category gets the fixed-n
betting interval of its tasks' pass-fraction differences, as the headline does; the reference is
that interval evaluated on every point of its grid (tests/helpers/betting_oracle.py), with the
task order the report's seeded stream gives.
"""

from __future__ import annotations

import numpy as np

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.analysis.seeding import stream
from ablation.stats import task_means
from tests.helpers.betting_oracle import grid_interval

RUNS = 3


def _results(n: int, cats: list[str]) -> tuple[list[TaskResult], list[TaskResult], dict[str, list[float]]]:
    """Tasks t000.. in id order; each task's pass counts drawn per arm; the differences by category."""
    rng = np.random.default_rng(5)
    before, after = [], []
    diffs: dict[str, list[float]] = {c: [] for c in cats}
    for i in range(n):
        cat = cats[i % len(cats)]
        pb, pc = rng.integers(0, RUNS + 1, 2) if i % 4 == 0 else (RUNS, RUNS)
        for r in range(RUNS):
            before.append(TaskResult(task_id=f"t{i:03d}", arm="baseline", run=r, passed=bool(r < pb), category=cat))
            after.append(TaskResult(task_id=f"t{i:03d}", arm="candidate", run=r, passed=bool(r < pc), category=cat))
        diffs[cat].append((int(pc) - int(pb)) / RUNS)
    return before, after, diffs


def _reference(d: list[float], seed: int, level: float) -> tuple[float, float]:
    ordered = task_means._ordered(np.asarray(d), stream(seed, "uplift-betting"))
    low, high, _, _ = grid_interval(ordered, 1.0 - level)
    return low, high


def test_each_category_gets_the_betting_interval_of_its_tasks() -> None:
    before, after, diffs = _results(120, ["code", "math", "prose"])
    config = CampaignConfig(n_resamples=200, seed=9)
    report = compare_results(before, after, config=config)
    assert report.runs == RUNS and len(report.categories) == 3
    for cat in report.categories:
        assert cat.ci is not None, cat.category
        assert "betting" in cat.ci.method
        assert (cat.ci.low, cat.ci.high) == _reference(diffs[cat.category], 9, 0.95)
        assert cat.ci.low <= cat.uplift <= cat.ci.high


def test_one_category_is_the_headline() -> None:
    before, after, _ = _results(60, ["default"])
    report = compare_results(before, after, config=CampaignConfig(n_resamples=200, seed=4))
    (only,) = report.categories
    assert only.ci is not None and (only.ci.low, only.ci.high) == (report.uplift.ci.low, report.uplift.ci.high)
