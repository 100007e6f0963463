"""A report's Wilcoxon test and Hodges-Lehmann estimate of one metric share one computation of
the differences (``stats.signed_rank_and_estimate``), and equal the two functions called apart,
which are themselves checked against ``scipy.stats.wilcoxon`` and the brute-force Walsh median
(``test_stats_edge_fixes.py``, ``test_stats_walsh.py``). The inputs are left as they were.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import stats

VALUES = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.integers(-5, 5).map(float),  # ties and zero differences
    st.sampled_from([0.1, 0.2, 0.30000000000000004, 1e-300]),
)


@given(st.lists(st.tuples(VALUES, VALUES), min_size=1, max_size=80))
@settings(max_examples=75, deadline=None)
def test_equals_the_two_functions_apart(pairs: list[tuple[float, float]]) -> None:
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    before = (x.copy(), y.copy())
    test, estimate = stats.signed_rank_and_estimate(x, y)
    assert test == stats.wilcoxon_signed_rank(x, y)
    assert estimate == stats.hodges_lehmann(x, y)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(y, before[1])


def test_a_large_sample_takes_the_selection_path() -> None:
    """Past the brute-force size the estimate is the exact selection's (``_walsh``)."""
    rng = np.random.default_rng(7)
    x = np.round(rng.lognormal(0, 1, 5000), 3)
    y = np.round(rng.lognormal(0, 1, 5000), 3)
    test, estimate = stats.signed_rank_and_estimate(x, y)
    assert test == stats.wilcoxon_signed_rank(x, y) and "normal approximation" in test.method
    assert estimate == stats.hodges_lehmann(x, y)


def test_no_pairs_is_refused_as_the_estimate_is() -> None:
    with pytest.raises(ValueError, match="no pairs"):
        stats.signed_rank_and_estimate(np.array([]), np.array([]))
