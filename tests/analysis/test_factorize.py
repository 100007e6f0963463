"""Task-id codes equal ``np.unique(..., return_inverse=True)`` (the reference they replace)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.analysis.factorize import object_codes, sorted_codes

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
