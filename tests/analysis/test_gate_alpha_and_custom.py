"""The gates judge at the report's alpha, and a ``GatePolicy.custom`` key no gate reads is shown.

A report built at alpha 0.05 states its claim ("Candidate is worse") with that level's test;
judging its gates at 0.01 would pass beside that sentence, so :func:`evaluate_gates` refuses an
alpha other than the report's and says to rebuild the report there. A ``custom`` key naming no
added gate (a typo, or a gate never registered) is listed as an inconclusive gate naming the key
and the gates added, as a margin of a metric the results lack is.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from toys.max_error_gate import MaxErrorRate

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.analysis.gates import (
    GATE_NONINFERIORITY,
    GATE_REGRESSION,
    GATES,
    evaluate_gates,
    register_gate,
)
from ablation.errors import ConfigError
from ablation.report import AblationReport


def _compare(regressions: int, improvements: int, n: int = 40, **config: object) -> AblationReport:
    """``n`` tasks: the first ``regressions`` regress, the next ``improvements`` improve, the
    rest pass in both arms."""
    ids = [f"t{i:02d}" for i in range(n)]
    improved = range(regressions, regressions + improvements)
    base = [
        TaskResult(task_id=t, arm="baseline", passed=i not in improved) for i, t in enumerate(ids)
    ]
    cand = [
        TaskResult(task_id=t, arm="candidate", passed=i >= regressions) for i, t in enumerate(ids)
    ]
    return compare_results(base, cand, config=CampaignConfig(n_resamples=200, **config))  # type: ignore[arg-type]


def _gate(report: AblationReport, name: str):  # type: ignore[no-untyped-def]
    matches = [g for g in report.gates if g.name == name]
    assert len(matches) == 1, [g.name for g in report.gates]
    return matches[0]


# --------------------------------------------------------------------------- alpha
def test_another_alpha_than_the_reports_is_refused_naming_both() -> None:
    report = _compare(6, 0)  # b = 6, c = 0: one-sided exact p = 1/64
    assert report.summary == "regression" and report.verdict == "fail"
    with pytest.raises(ConfigError) as err:
        evaluate_gates(report, GatePolicy(), alpha=0.01)
    message = str(err.value)
    assert "0.01" in message and "0.05" in message and "Rebuild the report" in message


def test_the_reports_own_alpha_is_accepted_as_the_default() -> None:
    report = _compare(6, 0)
    policy = GatePolicy(critical_must_not_regress=False)
    assert evaluate_gates(report, policy, alpha=0.05) == evaluate_gates(report, policy)


def test_a_report_built_at_the_new_alpha_states_what_its_gate_judges() -> None:
    report = _compare(6, 0, alpha=0.01)
    p = sps.binomtest(6, 6, 0.5, alternative="greater").pvalue
    assert _gate(report, GATE_REGRESSION).pvalue == pytest.approx(p, rel=1e-12)
    assert p > 0.01
    assert report.summary == "no significant difference" and report.verdict == "pass"
    assert report.uplift_test is not None and report.uplift_test.alpha == 0.01


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 12), st.integers(0, 12), st.sampled_from([0.01, 0.05, 0.1]))
def test_the_summary_and_the_regression_gate_use_one_test(b: int, c: int, alpha: float) -> None:
    report = _compare(b, c, alpha=alpha)
    gate = _gate(report, GATE_REGRESSION)
    assert (report.summary == "regression") == (gate.status == "fail")
    with pytest.raises(ConfigError):
        evaluate_gates(report, GatePolicy(), alpha=0.2)


# --------------------------------------------------------------------------- GatePolicy.custom
@pytest.fixture
def max_error_rate() -> Iterator[None]:
    gate = register_gate(MaxErrorRate())
    yield
    GATES.remove(gate)


def test_a_custom_key_with_no_registered_gate_is_an_inconclusive_gate() -> None:
    report = _compare(0, 0, gates=GatePolicy(custom={"max error rate": 0.0}))
    gate = _gate(report, "max error rate")
    assert gate.status == "inconclusive"
    assert "'max error rate'" in gate.evidence and "GatePolicy.custom" in gate.evidence
    assert "gates added: none" in gate.evidence
    assert report.verdict == "fail"  # it would have passed without a word


def test_a_misspelt_key_names_the_gates_added(max_error_rate: None) -> None:
    policy = GatePolicy(custom={"max error rate": 0.5, "max eror rate": 0.5})
    report = _compare(0, 0, gates=policy)
    assert _gate(report, "max error rate").status == "pass"
    typo = _gate(report, "max eror rate")
    assert typo.status == "inconclusive"
    assert "'max eror rate'" in typo.evidence and "'max error rate'" in typo.evidence


def test_a_custom_key_named_after_a_builtin_gate_is_read_by_no_gate() -> None:
    report = _compare(0, 0, gates=GatePolicy(custom={GATE_NONINFERIORITY: 0.02}))
    assert _gate(report, GATE_NONINFERIORITY).status == "inconclusive"


def test_no_custom_key_adds_no_gate(max_error_rate: None) -> None:
    plain = _compare(0, 0)
    assert plain.verdict == "pass"
    assert all(g.status in {"pass", "off"} for g in plain.gates)
    assert "max error rate" not in {g.name for g in plain.gates}
