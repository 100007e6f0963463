"""The confidence sequence's non-inferiority decision and the interval it shows tell one story.

The grid's uplifts were written as ``2k/(G - 1) - 1``, two roundings that read ``-1/50`` as
``-0.020000000000000018``, while the decision compared the grid point with the binary value of
the margin (a little above 1/50) in exact arithmetic and called ``-1/50`` above ``-0.02``: a
sequential campaign with margin 0.02 stopped "non-inferior" saying "the lower bound ...
-0.020000000000000018, is above -margin = -0.02" (0.05 likewise). A grid point whose uplift is
``-margin`` as a float is now at the margin, neither above nor below. References: Python's
``float(Fraction)``, correctly rounded, and the comparison of the shown bound with ``-margin``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from ablation import CampaignConfig, compare_results
from ablation.config import GatePolicy, SequentialPolicy
from ablation.stats._betting import DEFAULT_GRID_SIZE
from ablation.stats.sequential_cs import UpliftConfidenceSequence

MARGINS = (0.02, 0.05, 0.1, 0.3, 0.0205, 0.123)


def test_a_grid_uplift_is_the_float_nearest_to_it() -> None:
    from ablation.stats._betting import grid_uplift  # the one place the grid's uplifts are written

    span = DEFAULT_GRID_SIZE - 1
    for k in range(DEFAULT_GRID_SIZE):
        assert float(grid_uplift(k, DEFAULT_GRID_SIZE)) == float(Fraction(2 * k - span, span)), k


@pytest.mark.parametrize("population", [None, 101])
@pytest.mark.parametrize("margin", MARGINS)
def test_the_decision_is_the_shown_interval_against_the_margin(margin: float, population: int | None) -> None:
    cs = UpliftConfidenceSequence(alpha=0.1, population_size=population)
    for i in range(101):
        cs = cs.update(0.0 if i % 7 else -1.0)  # ties, and a regression now and then
        ci, decision = cs.interval, cs.decision(margin)
        assert (decision == "non-inferior") == (ci.low > -margin), (i, ci, decision)
        assert (decision == "inferior") == (ci.high < -margin), (i, ci, decision)


@pytest.mark.parametrize("margin", [0.02, 0.05])
def test_a_sequential_non_inferior_stop_shows_a_bound_above_the_margin(margin: float) -> None:
    rows = [{"task_id": f"t{i}", "passed": False} for i in range(101)]
    config = CampaignConfig(
        n_resamples=200, sequential=SequentialPolicy(suite_claim=True),
        gates=GatePolicy(noninferiority_margin=margin),
    )  # fmt: skip
    report = compare_results(rows, rows, config=config)
    s = report.sequential
    assert s is not None and s.gate == "non_inferior"
    gate = next(g for g in report.gates if g.name == "non-inferiority")
    assert gate.status == "pass"
    assert s.interval.low > -margin, s.interval
    shown = s.reason.split("uplift, ")[1].split(",")[0]
    assert float(shown) > -margin, s.reason
