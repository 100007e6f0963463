"""Whether a gate holds is one rule, read by every consumer of a report's gates.

``pass`` and ``off`` hold; ``fail`` and ``inconclusive`` fail the verdict. The rule is
:attr:`ablation.report.GateResult.holds`; the verdict (:func:`verdict_of`), the verdict line of
every rendered format, :func:`ablation.testing.assert_gates` and the JUnit report's failing cases
all read it. Hypothesis draws any mix of statuses and checks they agree with each other and with
the rule written out here, independently.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import TaskResult, compare_results
from ablation.analysis.gate_status import verdict_of
from ablation.render import render
from ablation.render._format import verdict_line
from ablation.report import AblationReport, GateResult
from ablation.testing import assert_gates

STATUSES = ("pass", "fail", "inconclusive", "off")


def _base() -> AblationReport:
    base = [TaskResult(task_id=f"t{i}", passed=i % 2 == 0) for i in range(6)]
    cand = [TaskResult(task_id=f"t{i}", passed=True) for i in range(6)]
    return compare_results(base, cand)


BASE = _base()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(STATUSES), min_size=1, max_size=5))
def test_every_consumer_reads_one_rule(statuses: list[str]) -> None:
    gates = [
        GateResult(name=f"g{i}", status=s, evidence=f"evidence {i}", tasks=[f"t{i}"])  # type: ignore[arg-type]
        for i, s in enumerate(statuses)
    ]
    expected_holds = [s in ("pass", "off") for s in statuses]
    assert [g.holds for g in gates] == expected_holds
    verdict = verdict_of(gates)
    assert verdict == ("pass" if all(expected_holds) else "fail")
    report = BASE.model_copy(update={"gates": gates, "verdict": verdict})

    not_holding = [g.name for g, h in zip(gates, expected_holds, strict=True) if not h]
    line = verdict_line(report)
    if not_holding:  # named apart: the failed ones, then those that could not be judged
        said = [f"{w}: {', '.join(g.name for g in gates if g.status == s)}"
                for s, w in (("fail", "failed"), ("inconclusive", "inconclusive")) if s in statuses]
        assert f"{len(not_holding)} of {sum(s != 'off' for s in statuses)} gates not passed; {'; '.join(said)}" in line
    else:
        assert "gates passed" in line and "not passed" not in line

    if not_holding:
        with pytest.raises(AssertionError) as caught:
            assert_gates(report)
        for name in not_holding:
            assert f"- {name} [" in str(caught.value)
    else:
        assert_gates(report)

    suite = ET.fromstring(render(report, "junit"))
    failed = {c.get("name") for c in suite.iter("testcase")
              if c.find("failure") is not None and (c.get("name") or "").startswith("gate: ")}
    assert failed == {f"gate: {n}" for n in not_holding}
