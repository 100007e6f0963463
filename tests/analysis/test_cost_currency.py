"""Costs in different currencies are never compared: an arm in USD against one in EUR once gave
a paired cost difference of -9, the note "cost fell: 10 -> 1" and a passing cost gate."""

from __future__ import annotations

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results


def _arm(arm: str, amount: float, currency: str | None) -> list[TaskResult]:
    return [
        TaskResult(
            task_id=f"t{i:03d}", arm=arm, passed=True, cost=amount + 0.01 * i,
            cost_currency=currency, cost_source="agent",
        )
        for i in range(100)  # a cost margin needs MEAN_DIFFERENCE_MIN_N pairs
    ]


CONFIG = CampaignConfig(gates=GatePolicy(metric_margins={"cost": 0.5}), n_resamples=200)


def test_arms_in_different_currencies_are_not_compared_and_the_cost_gate_fails() -> None:
    report = compare_results(_arm("baseline", 10.0, "USD"), _arm("candidate", 1.0, "EUR"), config=CONFIG)
    assert report.cost is None and "cost" not in report.metric_noninferiority
    assert (report.baseline.cost_currency, report.candidate.cost_currency) == ("USD", "EUR")
    assert any("different currencies" in n for n in report.notes)
    assert not any("cost fell" in n for n in report.notes)
    [gate] = [g for g in report.gates if g.name == "non-inferiority of cost"]
    assert gate.status == "inconclusive" and report.verdict == "fail"
    assert "different currencies (baseline USD, candidate EUR)" in gate.evidence


def test_one_currency_is_compared_as_before() -> None:
    report = compare_results(_arm("baseline", 10.0, "USD"), _arm("candidate", 1.0, "USD"), config=CONFIG)
    assert report.cost is not None and report.cost.mean_difference is not None
    assert abs(report.cost.mean_difference - (-9.0)) < 1e-9
    [gate] = [g for g in report.gates if g.name == "non-inferiority of cost"]
    assert gate.status == "pass"
