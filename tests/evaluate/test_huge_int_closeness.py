"""An ``int`` past the float range compared with an infinity or NaN is unequal, not an error.

``equals`` and ``numeric()`` compare an ``int`` that no float holds (``10**400``) exactly, with
fractions; against ``inf`` or ``nan`` that conversion raised (``Fraction(inf)``), so an agent
answering ``10**400`` where ``inf`` was expected was a verifier error, while the same pair the
other way round was a failed check. A finite number is never within a finite tolerance of an
infinity, nor is anything but NaN equal to NaN (IEEE 754); the answer is ``False`` both ways.
A NaN tolerance, under which no difference is ever small enough (``d <= nan`` is false for
every ``d``), is refused when the verifier is made.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.evaluate.verifiers import equals, numeric

HUGE = 10**400
PAIRS = [(HUGE, math.inf), (HUGE, -math.inf), (HUGE, math.nan), (-HUGE, -math.inf), (HUGE, 1e308)]
IDS = ["inf", "-inf", "nan", "negative,-inf", "1e308"]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=IDS)
def test_the_reference_difference(a: int, b: float) -> None:
    """The premise: no float holds ``a``, and ``b`` is no finite number near it."""
    with pytest.raises(OverflowError):
        float(a)
    assert not math.isfinite(b) or abs(Fraction(a) - Fraction(b)) > Fraction(b)


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=IDS)
def test_equals_and_numeric_say_unequal_both_ways(a: int, b: float) -> None:
    for verifier in (equals, numeric(), numeric(rel_tol=0.5)):
        for got, expected in ((a, b), (b, a)):
            assert verifier(got, AblationTask(task_id="t", expected_output=expected)) is False


def test_exact_comparison_of_huge_ints_still_holds() -> None:
    """Within a relative tolerance by exact arithmetic; an infinite tolerance takes any number."""
    near = HUGE + HUGE // 10**12  # relative difference 1e-12, within numeric()'s 1e-9
    assert abs(Fraction(near - HUGE) / HUGE) <= Fraction(1, 10**9)
    task = AblationTask(task_id="t", expected_output=HUGE)
    assert numeric()(near, task) is True and numeric(rel_tol=1e-15, abs_tol=0)(near, task) is False
    assert numeric(rel_tol=math.inf)(1, task) is True and numeric(abs_tol=math.inf)(-HUGE, task) is True


@pytest.mark.parametrize("tolerances", [{"rel_tol": math.nan}, {"abs_tol": math.nan}])
def test_a_nan_tolerance_is_refused(tolerances: dict[str, float]) -> None:
    assert not any(d <= math.nan for d in (0.0, 1e-300, 1.0))  # no difference is within NaN
    with pytest.raises(ValueError, match="tolerances must be >= 0"):
        numeric(**tolerances)


def test_a_campaign_records_a_failed_check() -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=b) for i, (_, b) in enumerate(PAIRS)]

    def agent(i: int) -> int:
        return PAIRS[i][0]

    for r in AblationEngine(CampaignConfig(concurrency=2)).run(agent, agent, tasks):
        assert (r.status, r.passed, r.error) == ("completed", False, None)
