"""Task-id codes equal ``np.unique(..., return_inverse=True)`` (the reference they replace)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.analysis.factorize import (
    code_adders,
    first_occurrences,
    object_codes,
    sorted_codes,
    trial_keys,
)
from ablation.columns import filled

_IDS = st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=6)


def _reference(arms: list[list[str]]) -> tuple[list[str], list[list[int]]]:
    joined = np.asarray([t for arm in arms for t in arm], dtype=str)
    uniq, inverse = np.unique(joined, return_inverse=True)
    cut = len(arms[0])
    return uniq.tolist(), [inverse[:cut].tolist(), inverse[cut:].tolist()]


@settings(max_examples=200, deadline=None)
@given(st.lists(_IDS, max_size=30), st.lists(_IDS, max_size=30), st.booleans())
def test_codes_equal_numpy_unique(baseline: list[str], candidate: list[str], same: bool) -> None:
    if same:  # the common case of the fast path: the same sorted ids in both arms
        baseline = candidate = sorted(set(candidate))
    uniq, codes = sorted_codes([np.array(baseline, dtype=object), np.array(candidate, dtype=object)])
    want_uniq, want_codes = _reference([baseline, candidate])
    assert uniq.tolist() == want_uniq
    assert [c.tolist() for c in codes] == want_codes
    assert all(c.dtype == np.int64 for c in codes)


def test_same_sorted_ids_take_positions() -> None:
    ids = np.array([f"task-{i:04d}" for i in range(50)], dtype=object)
    uniq, codes = sorted_codes([ids, ids.copy()])
    assert uniq.tolist() == ids.tolist()
    assert codes[0].tolist() == codes[1].tolist() == list(range(50))


@settings(max_examples=100, deadline=None)
@given(st.lists(_IDS, max_size=30), st.lists(_IDS, max_size=30), st.booleans())
def test_object_codes_are_sorted_codes_with_the_arms_strings(
    baseline: list[str], candidate: list[str], same: bool
) -> None:
    if same:
        baseline = candidate = sorted(set(candidate))
    arms = [np.array(baseline, dtype=object), np.array(candidate, dtype=object)]
    distinct, codes = object_codes(arms)
    uniq, want = sorted_codes(arms)
    assert distinct.dtype == object and all(type(t) is str for t in distinct.tolist())
    assert distinct.tolist() == uniq.tolist()
    assert [c.tolist() for c in codes] == [c.tolist() for c in want]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("identity", [True, False])
def test_code_adders_equal_bincount_to_the_bit(seed: int, identity: bool) -> None:
    """Reference: ``np.bincount(code[mask], weights=values[mask], minlength=size)``."""
    rng = np.random.default_rng(seed)
    size = 500
    code = np.arange(size) if identity else np.sort(rng.integers(0, size, 800))
    values = rng.normal(size=len(code))
    values[rng.random(len(code)) < 0.1] = -0.0  # bincount's sum from 0.0 gives +0.0
    mask = rng.random(len(code)) < 0.7
    count, total = code_adders(code, size)
    np.testing.assert_array_equal(count(mask), np.bincount(code[mask], minlength=size))
    expected = np.bincount(code[mask], weights=values[mask], minlength=size)
    got = total(values, mask)
    assert got.tobytes() == expected.tobytes()  # the same bits, signs of zeros included


@pytest.mark.parametrize("seed", [3, 4, 5])
@pytest.mark.parametrize("ordered", [True, False])
def test_trial_keys_sort_like_a_stable_argsort_and_find_first_runs(seed: int, ordered: bool) -> None:
    rng = np.random.default_rng(seed)
    code, run = rng.integers(0, 300, 1000), rng.integers(0, 4, 1000)
    if ordered:  # distinct (code, run) in order: no sort is done
        pairs = np.unique(code * 4 + run)
        code, run = pairs // 4, pairs % 4
    keys = trial_keys(code, run, 4)
    order = np.argsort(code * 4 + run, kind="stable")
    np.testing.assert_array_equal(keys.sorted, (code * 4 + run)[order])
    np.testing.assert_array_equal(keys.rows(np.arange(len(code))), order)
    assert (keys.order is None) == ordered
    expected = []
    for c in range(302):
        rows = np.flatnonzero(code == c)
        expected.append(int(rows[np.argmin(run[rows])]) if rows.size else -1)  # lowest run, first row
    assert keys.first_rows(np.arange(302)).tolist() == expected
    assert keys.first_rows(np.arange(301, -1, -1)).tolist() == expected[::-1]  # any order of codes


@pytest.mark.parametrize("constant", [True, False])
def test_one_run_keys_are_the_codes_themselves(constant: bool) -> None:
    """Width 1 and every run 0: the keys are ``code * 1 + 0`` (reference), held in no new array."""
    rng = np.random.default_rng(6)
    code = np.sort(rng.integers(0, 50, 80))
    run = filled(0, np.int64, 80) if constant else np.zeros(80, np.int64)
    keys = trial_keys(code, run, 1)
    order = np.argsort(code * 1 + run, kind="stable")
    np.testing.assert_array_equal(keys.sorted, (code * 1 + run)[order])
    assert keys.sorted.dtype == np.int64 and keys.order is not None  # repeated codes: sorted
    distinct = np.unique(code)
    assert np.shares_memory(trial_keys(distinct, run[: len(distinct)], 1).sorted, distinct)
    negative = trial_keys(distinct, -np.ones(len(distinct), np.int64), 1)  # not every run 0
    np.testing.assert_array_equal(negative.sorted, distinct - 1)


@pytest.mark.parametrize("seed", [7, 8, 9, 10])
def test_first_repeat_is_the_first_row_repeating_an_earlier_key(seed: int) -> None:
    rng = np.random.default_rng(seed)
    code, run = rng.integers(0, 40, 60), rng.integers(0, 2, 60)
    if seed == 10:  # distinct keys: no repeat
        pairs = rng.permutation(80)[:60]
        code, run = pairs // 2, pairs % 2
    keys = trial_keys(code, run, 2)
    key = (code * 2 + run).tolist()
    # reference: scan the rows in order, remembering the row where each key was first seen
    first: dict[int, int] = {}
    expected = None
    for row, k in enumerate(key):
        if k in first:
            expected = (row, first[k])
            break
        first[k] = row
    assert keys.first_repeat() == expected
    assert (expected is None) == (seed == 10)


def test_counts_of_a_constant_mask_equal_bincount() -> None:
    for code, size in ((np.arange(30), 30), (np.array([0, 0, 2, 5, 5, 5]), 7)):
        count, _ = code_adders(code, size)
        got = count(filled(True, np.bool_, len(code)))
        np.testing.assert_array_equal(got, np.bincount(code, minlength=size))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=40), st.sampled_from(["as-is", "sorted", "distinct"]))
def test_first_occurrences_equal_numpy_unique(values: list[int], order: str) -> None:
    """Codes in any order, non-decreasing (a file in (task, run) order) or strictly increasing
    (one run per task): the distinct codes and first indices of ``np.unique``."""
    if order == "sorted":
        values = sorted(values)
    elif order == "distinct":
        values = sorted(set(values))
    codes = np.array(values, dtype=np.int64)
    distinct, first = first_occurrences(codes)
    want_distinct, want_first = np.unique(codes, return_index=True)
    assert np.asarray(distinct).tolist() == want_distinct.tolist()
    assert np.arange(len(codes))[first].tolist() == want_first.tolist()
