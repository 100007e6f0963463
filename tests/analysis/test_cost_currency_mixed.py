"""An arm whose costs mix currencies has no cost total or mean (a sum of euros and dollars is not
an amount), and a bare number beside a stated currency in one arm counts as a currency of its own
("unstated"), so that arm is not compared with a USD arm as if it were all USD.

The reference: the same arms with one currency each, whose totals are the sums of the amounts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import pytest

from ablation import (
    AblationTask,
    AgentOutput,
    CampaignConfig,
    GatePolicy,
    TrialCost,
    run_ablation_campaign,
)
from ablation.render import plots, render
from ablation.report import AblationReport

N = 100  # a cost margin needs MEAN_DIFFERENCE_MIN_N pairs
TASKS = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(N)]
CONFIG = CampaignConfig(n_resamples=200, gates=GatePolicy(metric_margins={"cost": 0.1}))


def usd(x: int) -> AgentOutput:
    return AgentOutput(output=x, cost=TrialCost(amount=1.0, currency="USD"))


def eur_usd(x: int) -> AgentOutput:
    unit = ("EUR", 100.0) if x % 2 else ("USD", 1.0)
    return AgentOutput(output=x, cost=TrialCost(amount=unit[1], currency=unit[0]))


def bare_usd(x: int) -> AgentOutput:
    return AgentOutput(output=x, cost=1.0 if x % 2 else TrialCost(amount=1.0, currency="USD"))


pytestmark = pytest.mark.xdist_group("cost-currency-mixed")  # each campaign runs once, on one worker


@functools.cache
def _report(candidate: Callable[[int], AgentOutput]) -> AblationReport:
    """The campaign of ``usd`` against ``candidate`` (run once per module; the tests only read it)."""
    return run_ablation_campaign(usd, candidate, TASKS, config=CONFIG)


def _gate_status(report: AblationReport) -> str:
    (gate,) = [g for g in report.gates if g.name == "non-inferiority of cost"]
    return gate.status


@pytest.mark.parametrize(("candidate", "currency"), [(eur_usd, "EUR+USD"), (bare_usd, "USD+unstated")])
def test_an_arm_that_mixes_currencies_is_not_summed_or_compared(candidate: object, currency: str) -> None:
    report = _report(candidate)  # type: ignore[arg-type]
    c = report.candidate
    assert (c.cost_currency, c.cost_total, c.cost_mean, c.cost_trials) == (currency, None, None, N)
    assert report.baseline.cost_total == pytest.approx(math.fsum([1.0] * N))  # one currency: summed
    assert report.cost is None and _gate_status(report) == "inconclusive" and report.verdict == "fail"
    assert any(f"the candidate's ({currency}): not summed or compared" in n for n in report.notes)
    text = " ".join(render(report, "markdown").split())
    assert f"not summed: {currency}" in text


def test_one_currency_per_arm_is_summed_and_compared() -> None:
    report = _report(usd)
    assert report.candidate.cost_total == pytest.approx(N * 1.0) and report.cost is not None
    assert _gate_status(report) == "pass" and not report.notes


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_the_currency_note_is_not_shown_as_a_change(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The note that costs were not compared is no change of the candidate: every format shows it
    as it is, never led by "Also changed:" (all three once put that lead before every note)."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])  # the notes, not the figures
    import html

    report = _report(eur_usd)
    (note,) = [n for n in report.notes if "currencies" in n]
    text = " ".join(html.unescape(render(report, fmt)).replace("│", " ").split()).replace("\\", "")
    assert " ".join(note.split()) in text
    assert "Also changed" not in text
