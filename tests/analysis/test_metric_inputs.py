"""The latency and continuous comparisons read the paired columns without copying or changing them.

When every pair has a value, the statistics get the columns themselves (no two 8 MB copies at
10⁶ pairs); that is safe only because none of them writes to its inputs, which is checked here on
data with ties, zeros and NaN (where the pairs are selected, and so copied).
"""

from __future__ import annotations

import numpy as np
import pytest

from ablation import stats
from ablation.analysis import metrics
from ablation.config import CampaignConfig, GatePolicy

CONFIG = CampaignConfig(n_resamples=200, gates=GatePolicy(max_latency_ratio=1.2))


def _columns(seed: int, n: int, missing: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.round(rng.gamma(2.0, 1.0, n), 1)  # rounded: ties and equal pairs
    y = np.round(x * rng.uniform(0.5, 1.5, n), 1)
    y[:5] = x[:5]
    x[5] = 0.0  # not positive: left out of the ratio statistics
    if missing:
        x[7::11] = np.nan
        y[9::13] = np.nan
    return x, y


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("n", [12, 40, 3000])
def test_the_comparisons_leave_their_inputs_unchanged(n: int, missing: bool) -> None:
    x, y = _columns(n, n, missing)
    x0, y0 = x.copy(), y.copy()
    latency = metrics.compare_latency(x, y, config=CONFIG)
    cost = metrics.compare_continuous("cost", x, y, config=CONFIG, left_out_reason="none")
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    # the same figures as from copies of the columns
    assert metrics.compare_latency(x0.copy(), y0.copy(), config=CONFIG) == latency
    assert cost.hodges_lehmann is not None and cost.n_pairs == int((~np.isnan(x0 + y0)).sum())


def test_complete_columns_reach_the_statistics_uncopied(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    real = stats.signed_rank_and_estimate

    def spy(x: np.ndarray, y: np.ndarray) -> tuple[stats.TestResult, float]:
        seen.append((x, y))
        return real(x, y)

    monkeypatch.setattr(stats, "signed_rank_and_estimate", spy)
    x, y = _columns(1, 500, missing=False)
    metrics.compare_continuous("cost", x, y, config=CONFIG, left_out_reason="none")
    assert seen[0][0] is x and seen[0][1] is y
    x[3] = np.nan  # a pair without a value: the kept pairs are selected (a copy)
    metrics.compare_continuous("cost", x, y, config=CONFIG, left_out_reason="none")
    assert seen[1][0].size == 499 and seen[1][0] is not x
