"""An added gate that was configured but judged nothing, or could not judge, is never a silent pass.

DESIGN section 7: a ``GatePolicy.custom`` setting no gate reads is not ignored, and a check that
could not run is ``INCONCLUSIVE`` (the verdict fails), never a pass or a fail. So a configured
gate that did not apply or returned no result, and an added gate whose ``judge`` raised or
returned something other than ``GateResult`` items, are each one inconclusive gate of its name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.analysis.gates import GATES, register_gate
from ablation.report import AblationReport, GateResult


class _Toy:
    """An added gate that applies when its ``custom`` key is set (and ``applies``), judging ``judge()``."""

    fail_if_significant = False
    holm_family: str | None = None

    def __init__(self, name: str, applies: bool, judge: Any) -> None:
        self.name, self._applies, self._judge = name, applies, judge

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return self._applies and self.name in policy.custom

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> Any:
        return self._judge()


def _boom() -> Any:
    raise ZeroDivisionError("gate boom")


def _passing() -> list[GateResult]:
    return [GateResult(name="judged", status="pass", evidence="ok")]


@pytest.fixture
def added() -> Iterator[None]:
    gates = [
        _Toy("never applies", False, _passing),
        _Toy("judges nothing", True, list),
        _Toy("raises", True, _boom),
        _Toy("wrong items", True, lambda: [{"name": "x", "status": "pass"}]),
        _Toy("not a list", True, lambda: GateResult(name="x", status="pass", evidence="ok")),
        _Toy("judged", True, _passing),
        _Toy("quiet", True, list),
    ]
    for gate in gates:
        register_gate(gate)
    try:
        yield
    finally:
        for gate in gates:
            GATES.remove(gate)


def _report(custom: dict[str, Any]) -> AblationReport:
    base = [TaskResult(task_id=f"t{i}", passed=True) for i in range(20)]
    cand = [TaskResult(task_id=f"t{i}", arm="candidate", passed=True) for i in range(20)]
    config = CampaignConfig(n_resamples=200, gates=GatePolicy(custom=custom))
    return compare_results(base, cand, config=config)


def _only(report: AblationReport, name: str) -> GateResult:
    matches = [g for g in report.gates if g.name == name]
    assert len(matches) == 1, [(g.name, g.status) for g in report.gates]
    return matches[0]


@pytest.mark.usefixtures("added")
def test_a_working_added_gate_passes_and_the_verdict_passes() -> None:
    report = _report({"judged": 1})
    assert _only(report, "judged").status == "pass"
    assert report.verdict == "pass"
    assert {g.status for g in report.gates} == {"pass"}


@pytest.mark.usefixtures("added")
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("never applies", "did not apply"),
        ("judges nothing", "returned no result"),
    ],
)
def test_a_configured_gate_that_judged_nothing_is_inconclusive(name: str, why: str) -> None:
    report = _report({name: 1})
    gate = _only(report, name)
    assert gate.status == "inconclusive"
    assert why in gate.evidence and "GatePolicy.custom" in gate.evidence
    assert report.verdict == "fail"


@pytest.mark.usefixtures("added")
def test_an_unconfigured_gate_that_does_not_apply_is_not_listed() -> None:
    report = _report({})
    names = [g.name for g in report.gates]
    assert "never applies" not in names and "quiet" not in names
    assert report.verdict == "pass"


@pytest.mark.usefixtures("added")
def test_an_unconfigured_gate_that_judges_nothing_is_not_listed() -> None:
    quiet = next(g for g in GATES if g.name == "quiet")
    quiet.applies = lambda policy, report: True  # type: ignore[method-assign]
    report = _report({})
    assert "quiet" not in [g.name for g in report.gates]
    assert report.verdict == "pass"


@pytest.mark.usefixtures("added")
@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("raises", ["raised ZeroDivisionError: gate boom"]),
        ("wrong items", ["returned dict", "GateResult"]),
        ("not a list", ["returned GateResult", "a list of GateResult"]),
    ],
)
def test_an_added_gate_that_could_not_judge_is_inconclusive_naming_the_error(
    name: str, words: list[str]
) -> None:
    report = _report({name: 1})
    gate = _only(report, name)
    assert gate.status == "inconclusive"
    assert f"{name!r}" in gate.evidence
    for word in words:
        assert word in gate.evidence
    assert report.verdict == "fail"


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def _raise(exc: Exception) -> Any:
    def judge() -> Any:
        raise exc

    return judge


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (ValueError("x" * 1_000_000), "ValueError: " + "x" * 500 + "... [999500 more characters cut]"),
        (_Unprintable(), "_Unprintable: <str() of the _Unprintable raised RuntimeError>"),
        (ValueError("bad \ud800 text"), "ValueError: bad \\ud800 text"),
    ],
)
def test_an_added_gate_error_is_bounded_printable_and_encodable(exc: Exception, said: str) -> None:
    gate = _Toy("raises odd", True, _raise(exc))
    register_gate(gate)
    try:
        report = _report({"raises odd": 1})
    finally:
        GATES.remove(gate)
    result = _only(report, "raises odd")
    assert result.status == "inconclusive" and report.verdict == "fail"
    assert f"it raised {said}. " in result.evidence, result.evidence[-300:]
    assert len(result.evidence) < 800
    assert "raises odd" in report.model_dump_json()  # the report serialises (no lone surrogate)
