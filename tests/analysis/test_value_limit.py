"""Numbers near and past ``VALUE_LIMIT`` in the paired metric comparisons.

``TaskResult`` and every reader refuse a number of magnitude 1e100 or more
(tests/sources/test_number_limits.py), because the statistics square and sum them: at 1e301
the variance of the differences overflowed and the paired t test said p = 1, and the
Hodges-Lehmann estimate was ``-inf``. Below the limit every figure is finite, which the
property here checks. A latency *ratio* can still leave the float range (1e-300 s against
1e99 s): ``math.exp`` raised ``OverflowError`` there, which ended ``compare`` with no file
named; now the report leaves the ratio out with a note, the JSON stays valid, and an opted-in
latency gate does not pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ablation import AblationReport, compare_results, stats
from ablation.analysis import metrics
from ablation.config import CampaignConfig, GatePolicy
from ablation.outputs import VALUE_LIMIT

CONFIG = CampaignConfig(n_resamples=200)
_VALUES = st.floats(-0.999 * VALUE_LIMIT, 0.999 * VALUE_LIMIT, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_VALUES, _VALUES), min_size=2, max_size=40))
def test_every_figure_is_finite_below_the_limit(pairs: list[tuple[float, float]]) -> None:
    x, y = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
    comp = metrics.compare_continuous("cost", x, y, config=CONFIG, left_out_reason="none")
    figures = [comp.baseline_mean, comp.candidate_mean, comp.mean_difference, comp.t_pvalue,
               comp.wilcoxon_pvalue, comp.hodges_lehmann]  # fmt: skip
    assert all(v is not None and math.isfinite(v) for v in figures), comp
    assert comp.t_pvalue is not None and 0 <= comp.t_pvalue <= 1


def test_a_ratio_past_the_float_range_is_inf_not_an_error() -> None:
    base, cand = np.array([1e-300, 2e-300, 3e-300]), np.array([1e99, 3e99, 2e99])
    res = stats.log_ratio_interval(base, cand)
    r = np.log(cand) - np.log(base)
    ref = sps.ttest_1samp(r, 0.0)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert res.estimate == math.inf and res.confidence_interval.high == math.inf
    low = ref.confidence_interval(0.95).low
    assert res.confidence_interval.low == (math.exp(low) if low < 709 else math.inf)
    flipped = stats.log_ratio_interval(cand, base)
    assert flipped.estimate == 0.0 and flipped.confidence_interval.low == 0.0


def _records(latency: float, n: int = 30) -> list[dict[str, object]]:
    return [{"task_id": f"t{i}", "passed": True, "latency_s": latency * (1 + i % 3)} for i in range(n)]


def test_a_latency_ratio_past_the_float_range_is_a_note_and_the_gate_does_not_pass() -> None:
    config = CampaignConfig(gates=GatePolicy(max_latency_ratio=1.5))
    report = compare_results(_records(1e-300), _records(1e99), config=config)
    lat = report.latency
    assert lat is not None and lat.n_pairs == 30
    assert lat.geometric_mean_ratio is None and lat.ratio_ci is None and lat.median_ratio is None
    assert lat.ratio_note is not None and "past the float range" in lat.ratio_note
    gate = next(g for g in report.gates if g.name == "no significant latency regression")
    assert gate.status == "inconclusive" and lat.ratio_note in gate.evidence
    assert report.verdict == "fail"
    again = AblationReport.model_validate_json(report.model_dump_json())
    assert again.latency is not None and again.latency.ratio_note == lat.ratio_note
    assert math.isfinite(lat.mean_difference or math.nan) and lat.t_pvalue is not None
