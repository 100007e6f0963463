"""The repeated-runs block lists its stable regressions and improvements capped, with a count.

Every other id list of the rendered reports is capped (``TABLE_CAP``, the full list in
``--format json``); the stable regressions and improvements were joined whole, so a suite of
3,000 tasks that all regressed on every run printed 3,000 ids in the terminal report's one row.
"""

from __future__ import annotations

import pytest

from ablation import TaskResult, compare_results
from ablation.render import render
from ablation.render._sections import TABLE_CAP

N = 3 * TABLE_CAP


def _rows(arm: str) -> list[TaskResult]:
    return [TaskResult(task_id=f"task-{i:05d}", arm=arm, run=r, passed=arm == "baseline")  # type: ignore[arg-type]
            for i in range(N) for r in range(2)]


@pytest.mark.parametrize("fmt", ["terminal", "markdown"])
def test_stable_regressions_are_listed_capped_with_a_count(fmt: str) -> None:
    report = compare_results(_rows("baseline"), _rows("candidate"))
    assert report.repeated is not None and len(report.repeated.stable_regressions) == N
    text = render(report, fmt, width=5000)  # one line per row
    [line] = [ln for ln in text.splitlines() if "stable regressions" in ln and "task-" in ln]
    assert line.count("task-") == TABLE_CAP
    assert f"... and {N - TABLE_CAP} more stable regressions ({N} in all" in line
