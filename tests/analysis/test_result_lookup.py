"""``ResultLookup`` finds each task's first-run trial as a plain dict index of the rows would."""

from __future__ import annotations

import random

import pytest

from ablation.analysis.in_memory import ResultLookup, records_to_columns, results_to_columns
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


def _first_runs(rows: list[TaskResult]) -> dict[str, TaskResult]:
    reference: dict[str, TaskResult] = {}
    for r in rows:  # a dict over every row, the smallest run kept
        if r.task_id not in reference or r.run < reference[r.task_id].run:
            reference[r.task_id] = r
    return reference


@pytest.mark.parametrize(("seed", "ordered"), [(3, False), (4, False), (5, True)])
def test_the_pairings_lookup_finds_what_a_dict_index_finds(seed: int, ordered: bool) -> None:
    """``pair_columns`` hands the lookup its own sorted keys; the rows found must not change."""
    from ablation.analysis.pair_arms import pair_columns

    arms = {"baseline": _rows(seed), "candidate": [r.model_copy(update={"arm": "candidate"}) for r in _rows(seed + 10)]}
    if ordered:  # rows already in (task, run) order: the keys are not sorted again
        arms = {arm: sorted(rows, key=lambda r: (r.task_id, r.run)) for arm, rows in arms.items()}
    columns = {arm: (rows, results_to_columns(rows, arm)) for arm, rows in arms.items()}
    own = ResultLookup(columns)
    data = pair_columns(columns["baseline"][1], columns["candidate"][1], trial_lookup=own)
    assert data.trials is not own
    for arm, rows in arms.items():
        reference = _first_runs(rows)
        for tid, expected in reference.items():
            assert data.trials[(tid, arm)] == expected
            assert own[(tid, arm)] == expected
        for tid in {f"t{i}" for i in range(500)} - reference.keys() | {"t", "u9"}:
            assert data.trials.get((tid, arm)) is None
    assert data.trials.get(("t1", "other")) is None


def test_a_lookup_over_other_columns_keeps_its_own_index() -> None:
    """Columns equal to but not the ones paired: their rows may differ, so nothing is shared."""
    from ablation.analysis.pair_arms import pair_columns

    rows = {arm: [TaskResult(task_id=t, arm=arm) for t in ("a", "b")] for arm in ("baseline", "candidate")}
    lookup = ResultLookup({arm: (r[::-1], results_to_columns(r[::-1], arm)) for arm, r in rows.items()})
    data = pair_columns(*(results_to_columns(r, arm) for arm, r in rows.items()), trial_lookup=lookup)
    assert data.trials is lookup
    assert data.trials[("a", "candidate")] == rows["candidate"][0]


@pytest.mark.parametrize(("seed", "ordered"), [(6, False), (7, True)])
def test_many_finds_what_one_lookup_at_a_time_finds(seed: int, ordered: bool) -> None:
    """``many`` (the drill-downs' one search per arm) returns exactly the trials that single
    look-ups find, absent keys left out, with the pairing's keys and with the lookup's own index."""
    from ablation.analysis.pair_arms import pair_columns

    arms = {"baseline": _rows(seed), "candidate": [r.model_copy(update={"arm": "candidate"}) for r in _rows(seed + 10)]}
    if ordered:
        arms = {arm: sorted(rows, key=lambda r: (r.task_id, r.run)) for arm, rows in arms.items()}
    columns = {arm: (rows, results_to_columns(rows, arm)) for arm, rows in arms.items()}
    own = ResultLookup(columns)
    data = pair_columns(columns["baseline"][1], columns["candidate"][1], trial_lookup=own)
    keys = [(f"t{i}", arm) for i in range(0, 520, 3) for arm in ("candidate", "baseline", "other")]
    keys += [("", "baseline"), ("t1", "baseline"), ("zzz", "candidate")]
    for lookup in (data.trials, own):
        assert isinstance(lookup, ResultLookup)
        expected = {k: v for k in keys if (v := lookup.get(k)) is not None}
        assert lookup.many(keys) == expected
        assert len(expected) > 50 and any(k[1] == "candidate" for k in expected)
