"""``ResultLookup`` finds each task's first-run trial as a plain dict index of the rows would."""

from __future__ import annotations

import random

import pytest

from ablation.analysis.tocolumns import ResultLookup, records_to_columns, results_to_columns
from ablation.schema import TaskResult


def _rows(seed: int) -> list[TaskResult]:
    rng = random.Random(seed)
    rows = [
        TaskResult(task_id=f"t{i}", arm="baseline", run=run, passed=rng.random() < 0.5)
        for i in rng.sample(range(500), 300)
        for run in rng.sample(range(4), rng.randint(1, 3))
    ]
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lookup_returns_the_smallest_run_of_each_task(seed: int) -> None:
    rows = _rows(seed)
    reference: dict[str, TaskResult] = {}
    for r in rows:  # reference: a dict over every row, the smallest run kept
        if r.task_id not in reference or r.run < reference[r.task_id].run:
            reference[r.task_id] = r
    lookup = ResultLookup({"baseline": (rows, results_to_columns(rows, "baseline"))})
    for tid, expected in reference.items():
        assert lookup[(tid, "baseline")] == expected
    assert sorted(lookup) == sorted((tid, "baseline") for tid in reference)
    assert len(lookup) == len(reference)
    for missing in [("t999", "baseline"), ("t1", "candidate"), (1, "baseline")]:
        assert missing not in lookup
        assert lookup.get(missing) is None  # type: ignore[call-overload]


def test_lookup_of_dict_records_validates_the_row_it_returns() -> None:
    rows = [{"task_id": "a", "passed": True, "run": 1}, {"task_id": "a", "passed": False}]
    lookup = ResultLookup({"candidate": (rows, records_to_columns(rows, "candidate"))})
    assert lookup[("a", "candidate")] == TaskResult(task_id="a", arm="candidate", passed=False)
    assert not ResultLookup({"baseline": ([], results_to_columns([], "baseline"))})
