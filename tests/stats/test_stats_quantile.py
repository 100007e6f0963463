"""``ablation.stats.median`` and ``linear_quantiles`` (public names) are numpy's, with
``median``'s ``overwrite`` flag leaving the caller's array alone unless asked."""

from __future__ import annotations

import numpy as np
import pytest

from ablation import stats


def test_the_public_names_give_numpys_figures() -> None:
    data = np.array([3.0, -1.0, 2.0, 0.5, 7.25])
    # by hand: sorted -1, 0.5, 2, 3, 7.25; median 2; the 0.9 quantile 3 + 0.6 * 4.25
    assert stats.median(data) == 2.0
    got = stats.linear_quantiles(data, np.array([0.0, 0.9, 1.0]))
    assert got.tolist() == pytest.approx([-1.0, 5.55, 7.25], rel=1e-15)


def test_median_leaves_its_input_alone_unless_told() -> None:
    data = np.array([3.0, 1.0, 2.0, 0.5])
    assert stats.median(data) == 1.5 and data.tolist() == [3.0, 1.0, 2.0, 0.5]
    assert stats.median(data, overwrite=True) == 1.5
