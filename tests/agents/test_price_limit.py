"""A price that gives a trial a cost no result holds leaves the trial without a cost, said once.

An override's prices are finite and not negative, but unbounded: at 1e200 per million tokens,
10**15 tokens cost 1e209, past ``outputs.VALUE_LIMIT`` (the whole trial became an
``UnrecordableResult``), and at 1e300 the exact cost has no float at all (the trial failed with a
bare ``OverflowError``). The reference is the exact cost in :class:`~fractions.Fraction`.
"""

from __future__ import annotations

import logging
import math
from fractions import Fraction

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.config import ModelPrice
from ablation.outputs import VALUE_LIMIT, AgentOutput, TrialUsage

TOKENS = 10**15


def _agent(task_input: object) -> AgentOutput:
    """A model id of its own per task (the warning is said once per model and process)."""
    usage = TrialUsage(input_tokens=TOKENS, output_tokens=0, model=f"big-{task_input}")
    return AgentOutput(output=1, usage=usage)


@pytest.mark.parametrize("rate", [1e200, 1e300])
def test_a_cost_past_the_limit_is_no_cost(rate: float) -> None:
    exact = TOKENS * Fraction(repr(rate)) / 1_000_000
    assert exact >= VALUE_LIMIT  # the reference: no result may hold it
    model = f"big-{round(math.log10(rate))}"  # no "+": that joins several models
    config = CampaignConfig(concurrency=1, prices={model: ModelPrice(input_per_mtok=rate, output_per_mtok=0)})
    task = AblationTask(task_id="t", input_data=round(math.log10(rate)), expected_output=1)
    said: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("ablation.agents.pricing")
    logger.addHandler(handler)
    try:
        results = AblationEngine(config).run(_agent, _agent, [task])
    finally:
        logger.removeHandler(handler)
    for r in results:
        assert (r.status, r.passed, r.cost, r.cost_source, r.error) == ("completed", True, None, None, None)
        assert r.usage is not None and r.usage.input_tokens == TOKENS
    assert len([m for m in said if repr(model) in m and "no cost" in m]) == 1, said


def test_a_cost_below_the_limit_is_kept() -> None:
    rate = 1e80
    config = CampaignConfig(concurrency=1, prices={"big-1": ModelPrice(input_per_mtok=rate, output_per_mtok=0)})
    task = AblationTask(task_id="t", input_data=1, expected_output=1)
    for r in AblationEngine(config).run(_agent, _agent, [task]):
        assert r.cost == float(TOKENS * Fraction(repr(rate)) / 1_000_000) and r.cost_source == "override"
