"""A numeric comparison's id lists and trial counts are the task-by-task oracle's.

:func:`~ablation.analysis.numeric.compare_numeric` builds its lists with C-level passes and skips
a pass when a set comparison shows it would find nothing; ``helpers.numeric_oracle`` writes the
same lists one task at a time. Random arms share some ids, hold ids of their own, repeat runs
(seen with or without a value), and are judged with and without expected ids (some of them in
neither file) and with either direction of the field.
"""

from __future__ import annotations

from typing import Any

from helpers.numeric_oracle import as_arm_runs, numeric_lists
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.analysis.numeric import compare_numeric

IDS = [f"t{i}" for i in range(12)]
runs_of = st.frozensets(st.integers(0, 3), max_size=3)
# built once: a strategy made inside the composite is built and validated again at every draw
tasks_of = st.lists(st.sampled_from(IDS), unique=True, max_size=len(IDS))
flags = st.booleans()
values_of = st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 1))
expected_of = st.none() | st.lists(st.sampled_from([*IDS, "x1", "x2"]), unique=True).map(lambda e: [*IDS[:2], *e])
fields, deltas = st.sampled_from(["score", "cost"]), st.sampled_from([0.0, 0.5])


@st.composite
def arms(draw: Any) -> dict[str, Any]:
    def arm() -> tuple[dict[str, float], dict[str, tuple[frozenset[int], frozenset[int]]]]:
        tasks = draw(tasks_of)
        runs, values = {}, {}
        for task in tasks:
            seen = draw(runs_of)
            valued = frozenset(r for r in seen if draw(flags))
            runs[task] = (seen, valued)
            if valued:
                values[task] = draw(values_of)
        return values, runs

    (base, runs_b), (cand, runs_c) = arm(), arm()
    shared = [t for t in base if t in cand]
    for task in IDS[:2]:  # at least two pairs: the comparison's own minimum
        if task not in shared:
            base[task], cand[task] = 1.0, 0.5
            runs_b.setdefault(task, (frozenset({0}), frozenset({0})))
            runs_c.setdefault(task, (frozenset({0}), frozenset({0})))
    expected = draw(expected_of)
    return {
        "base": base, "cand": cand, "runs": draw(st.sampled_from([None, (runs_b, runs_c)])),
        "expected": expected, "field": draw(fields), "delta": draw(deltas),
    }


@settings(max_examples=300, deadline=None)
@given(arms())
def test_lists_and_counts_are_the_oracles(case: dict[str, Any]) -> None:
    runs = case["runs"] and (as_arm_runs(case["runs"][0]), as_arm_runs(case["runs"][1]))
    got = compare_numeric(
        case["base"], case["cand"], field=case["field"], regression_delta=case["delta"],
        expected_ids=case["expected"], runs=runs,
    )  # fmt: skip
    want = numeric_lists(
        case["base"], case["cand"], lower=case["field"] == "cost", delta=case["delta"],
        expected_ids=case["expected"], runs=case["runs"],
    )  # fmt: skip
    assert {name: getattr(got, name) for name in want} == want
