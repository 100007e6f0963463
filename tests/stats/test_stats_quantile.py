"""``ablation.stats._quantile.linear_quantiles`` against ``numpy.quantile``, to the bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ablation.stats._quantile import linear_quantiles

values = hnp.arrays(
    np.float64,
    st.integers(min_value=1, max_value=300),
    elements=st.one_of(
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5]),  # ties and signed zeros
        st.floats(allow_nan=True, allow_infinity=True, width=64),
    ),
)
probs = hnp.arrays(
    np.float64, st.integers(min_value=1, max_value=4), elements=st.floats(min_value=0.0, max_value=1.0)
)


@settings(max_examples=400, deadline=None)
@given(values, probs)
def test_same_bits_as_numpy_quantile(data: np.ndarray, q: np.ndarray) -> None:
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: NaN, as numpy warns
        expected = np.quantile(data, q)  # numpy.quantile(data, q), method="linear"
        got = linear_quantiles(data, q)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    finite = ~np.isnan(expected)
    assert got[finite].tobytes() == expected[finite].tobytes()  # signed zeros too


def test_bootstrap_levels_on_a_large_distribution() -> None:
    rng = np.random.default_rng(7)
    theta = np.round(rng.normal(size=10_000), 3)  # many ties, as a bootstrap of counts has
    q = np.array([0.025, 0.975, 0.0, 1.0, 0.5, 0.31337])
    assert linear_quantiles(theta, q).tobytes() == np.quantile(theta, q).tobytes()
