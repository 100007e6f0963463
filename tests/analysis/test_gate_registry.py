"""Gates are objects evaluated from one list: a toy gate, Holm families, the listing order."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from report_fixtures import make_report
from statsmodels.stats.multitest import multipletests
from toys.max_error_gate import MaxErrorRate

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.analysis.gates import (
    GATE_LATENCY,
    GATE_REGRESSION,
    GATES,
    evaluate_gates,
    register_gate,
)
from ablation.cli.output import exit_code
from ablation.config import GatePolicy
from ablation.render import render
from ablation.report import AblationReport, GateResult


@pytest.fixture
def max_error_rate() -> Iterator[None]:
    gate = register_gate(MaxErrorRate())  # the toy's one registration line
    yield
    GATES.remove(gate)


def _compare(limit: float) -> AblationReport:
    """40 tasks; the baseline fails t00-t02, where the candidate errors (no regression)."""
    ids = [f"t{i:02d}" for i in range(40)]
    base = [TaskResult(task_id=t, arm="baseline", passed=i >= 3) for i, t in enumerate(ids)]
    boom = {"status": "error", "error_type": "Boom", "error_message": "boom", "error_stage": "agent"}
    cand = [
        TaskResult(task_id=t, arm="candidate", **({"passed": True} if i >= 3 else boom))
        for i, t in enumerate(ids)
    ]
    policy = GatePolicy(min_completed=0.5, custom={"max error rate": limit})
    return compare_results(base, cand, config=CampaignConfig(gates=policy, n_resamples=200))


@pytest.mark.parametrize(("limit", "status", "code"), [(0.05, "fail", 2), (0.10, "pass", 0)])
def test_a_toy_gate_reaches_the_report_junit_and_exit_code(
    max_error_rate: None, limit: float, status: str, code: int
) -> None:
    report = _compare(limit)
    toy = [g for g in report.gates if g.name == "max error rate"]
    assert len(toy) == 1 and toy[0].status == status
    assert "3/40" in toy[0].evidence
    others = [g.status for g in report.gates if g.name != "max error rate"]
    assert set(others) <= {"pass", "off"}  # the toy decides the verdict
    assert report.exit_code == exit_code([report]) == code
    cases = {c.get("name"): c for c in ET.fromstring(render(report, "junit")).iter("testcase")}
    case = cases["gate: max error rate"]
    assert (case.find("failure") is not None) == (status == "fail")


def test_an_unconfigured_toy_gate_is_not_listed(max_error_rate: None) -> None:
    report = evaluate_gates(make_report(), GatePolicy())
    assert "max error rate" not in {g.name for g in report.gates}


class _Superiority:
    """A pass-if-significant toy gate with a fixed p-value, in a Holm family."""

    fail_if_significant = False
    holm_family: str | None = "superiority"

    def __init__(self, name: str, p: float) -> None:
        self.name, self.p = name, p

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return True

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        status: Any = "pass" if self.p < alpha else "fail"
        return [GateResult(name=self.name, status=status, evidence=f"p {self.p}", pvalue=self.p)]


def test_gates_of_a_holm_family_are_adjusted_together() -> None:
    ps = [0.01, 0.04, 0.03]
    added = [register_gate(_Superiority(f"superior {i}", p)) for i, p in enumerate(ps)]
    try:
        report = evaluate_gates(make_report(), GatePolicy(critical_must_not_regress=False),
                                alpha=0.05)  # fmt: skip
    finally:
        for gate in added:
            GATES.remove(gate)
    _, adjusted, _, _ = multipletests(ps, alpha=0.05, method="holm")
    got = {g.name: g for g in report.gates if g.name.startswith("superior")}
    for i, adj in enumerate(adjusted):
        g = got[f"superior {i}"]
        assert g.adjusted_pvalue == pytest.approx(adj, rel=1e-12)
        assert g.status == ("pass" if adj < 0.05 else "fail")
    assert got["superior 1"].status == "fail" and ps[1] < 0.05  # raw p passes, adjusted fails
    # The fail-if-significant built-in gates are not in any family: never adjusted.
    assert all(g.adjusted_pvalue is None for g in report.gates if not g.name.startswith("superior"))


def test_a_fail_if_significant_gate_cannot_join_a_holm_family() -> None:
    gate = _Superiority("bad", 0.01)
    gate.fail_if_significant = True  # type: ignore[misc]
    with pytest.raises(ValueError, match="judged on its own"):
        register_gate(gate)
    assert gate not in GATES


def test_untested_fail_if_significant_gates_are_listed_after_the_tested_ones() -> None:
    policy = GatePolicy(no_significant_regression=False, max_latency_ratio=1.5)
    names = [(g.name, g.status) for g in evaluate_gates(make_report(), policy).gates]
    lat = next(i for i, (n, _) in enumerate(names) if n == GATE_LATENCY)
    reg = next(i for i, (n, s) in enumerate(names) if n == GATE_REGRESSION and s == "off")
    assert lat < reg == len(names) - 1
