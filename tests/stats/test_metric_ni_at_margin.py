"""A metric's non-inferiority at the margin is decided by the decimals, not by their round-off.

Every task's cost rose from 0.01 to 0.011 against a margin of 0.001: the float difference is
0.0009999999999999992, below the margin, so the zero-variance t was -inf and the gate PASSED
"non-inferior" beside its own interval [+0.001, +0.001]; the same candidate at 0.3 -> 0.4 with a
margin of 0.1 (0.10000000000000003) FAILED. A candidate worse by exactly the margin is at the
margin, on H0's side, whatever the round-off. Reference: exact decimal arithmetic on the values as
written (``Fraction`` of their text).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import CampaignConfig, compare_results
from ablation.config import GatePolicy
from ablation.stats import metric_noninferiority


def _decimal_decision(base: str, cand: str, margin: str, higher: bool) -> bool:
    """Whether the candidate is non-inferior in exact decimals (constant differences)."""
    d = Fraction(cand) - Fraction(base)
    return d > -Fraction(margin) if higher else d < Fraction(margin)


@pytest.mark.parametrize(
    ("base", "cand", "margin", "higher"),
    [("0.01", "0.011", "0.001", False), ("0.3", "0.4", "0.1", False), ("0.7", "0.8", "0.1", False),
     ("0.4", "0.3", "0.1", True), ("0.011", "0.01", "0.001", True)],
)  # fmt: skip
def test_worse_by_exactly_the_margin_is_at_the_margin(base: str, cand: str, margin: str, higher: bool) -> None:
    assert not _decimal_decision(base, cand, margin, higher)  # the premise, in decimals
    x, y = [float(base)] * 150, [float(cand)] * 150
    ni = metric_noninferiority(x, y, margin=float(margin), higher_is_better=higher)
    assert (ni.pvalue, ni.decision) == (1.0, "regression")
    edge = -float(margin) if higher else float(margin)
    assert (ni.confidence_interval.low, ni.confidence_interval.high) == (edge, edge)


def test_the_gate_fails_at_the_margin_beside_its_interval() -> None:
    rows = [{"task_id": f"t{i}", "passed": True, "cost": 0.01} for i in range(120)]
    moved = [{**r, "cost": 0.011} for r in rows]
    config = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"cost": 0.001}))
    gate = next(g for g in compare_results(rows, moved, config=config).gates if g.name == "non-inferiority of cost")
    assert gate.status == "fail" and "[+0.001, +0.001]" in gate.evidence


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 999), st.integers(-300, 300), st.integers(1, 300), st.booleans(),
    st.sampled_from([1, 10, 1000]),
)
def test_constant_differences_decide_as_their_decimals(base: int, step: int, margin: int, higher: bool, unit: int) -> None:
    # values and margin with three decimals, scaled by unit: 0.001 .. 999
    b, c, m = (f"{v * unit / 1000:.3f}" for v in (base, base + step, margin))
    if float(c) < 0:
        return
    ni = metric_noninferiority([float(b)] * 120, [float(c)] * 120, margin=float(m), higher_is_better=higher)
    assert (ni.decision == "non-inferior") == _decimal_decision(b, c, m, higher), (b, c, m, higher, ni)
