"""An agent's cost is an amount spent: a bare number below 0 is refused as ``TrialCost``'s amount
already was (``ge=0``), so the trial is an error naming the field rather than a credit that
lowers the arm's total (12 trials of ``cost=-1.0`` summed to -12)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from ablation import AblationTask, AgentOutput, CampaignConfig, TrialCost, run_ablation_campaign


@pytest.mark.parametrize("cost", [-1.0, -1e-12, math.nan, math.inf])
def test_an_unusable_bare_cost_is_refused_like_an_unusable_amount(cost: float) -> None:
    with pytest.raises(ValidationError, match="cost must be a finite number, 0 or more"):
        AgentOutput(output=1, cost=cost)
    with pytest.raises(ValidationError):
        TrialCost(amount=cost, currency="USD")
    assert AgentOutput(output=1, cost=0.0).cost == 0.0


def test_a_negative_cost_is_the_trial_error() -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
    report = run_ablation_campaign(
        lambda x: AgentOutput(output=x, cost=0.5), lambda x: AgentOutput(output=x, cost=-1.0), tasks,
        config=CampaignConfig(n_resamples=100),
    )  # fmt: skip
    assert report.candidate.errors == 4 and report.candidate.cost_total is None
    assert report.baseline.cost_total == pytest.approx(2.0)
    (group,) = [g for g in report.errors.groups if g.arm == "candidate"]  # type: ignore[union-attr]
    assert "cost must be a finite number, 0 or more" in (group.example or "")
