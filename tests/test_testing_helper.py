"""The pytest helpers: readable assertion messages naming failing gates and regressed tasks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from report_fixtures import SNAPSHOT_POLICY, make_report, noninferiority_report, simple_report

from ablation.analysis.gates import evaluate_gates
from ablation.config import GatePolicy
from ablation.testing import assert_gates, assert_no_regressions


def test_assert_gates_passes_silently_on_a_passing_report() -> None:
    report = evaluate_gates(simple_report(50, 2, 6, 2), GatePolicy())
    assert_gates(report)  # no exception


def test_assert_gates_names_failing_gates_and_regressed_tasks() -> None:
    report = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    with pytest.raises(AssertionError) as info:
        assert_gates(report)
    message = str(info.value)
    assert "critical tasks must not regress [FAIL]" in message
    assert "non-inferiority" not in message  # it passed, so it is not listed
    assert "code/refactor-012 (CRITICAL)" in message
    lines = message.splitlines()
    regressed = next(line for line in lines if line.startswith("regressed tasks (4)"))
    # critical tasks come first
    assert regressed.index("code/refactor-012") < regressed.index("code/parse-date-004")


def test_assert_gates_reports_an_inconclusive_gate() -> None:
    with pytest.raises(AssertionError, match=r"non-inferiority \[INCONCLUSIVE\].*inconclusive"):
        assert_gates(noninferiority_report(), GatePolicy(noninferiority_margin=0.02))


def test_assert_gates_evaluates_the_default_policy_when_the_report_has_no_gates() -> None:
    report = simple_report(50, 2, 6, 2, critical_regressions=["t-reg-001"])
    assert report.gates == []
    with pytest.raises(AssertionError, match="t-reg-001"):
        assert_gates(report)


def test_assert_gates_with_an_explicit_policy_re_evaluates() -> None:
    report = evaluate_gates(
        simple_report(50, 2, 6, 2, critical_regressions=["t-reg-001"]), GatePolicy()
    )
    assert_gates(report, GatePolicy(critical_must_not_regress=False))


def test_assert_no_regressions() -> None:
    assert_no_regressions(simple_report(50, 0, 6, 4))
    report = make_report()
    with pytest.raises(AssertionError) as info:
        assert_no_regressions(report)
    message = str(info.value)
    assert message.startswith("4 task(s) regressed, 2 critical")
    assert message.index("code/refactor-012") < message.index("code/parse-date-004")


def test_assert_no_regressions_allows_ids_and_patterns() -> None:
    report = make_report()
    with pytest.raises(AssertionError) as info:
        assert_no_regressions(report, allow=["math/*", "code/parse-date-004"])
    message = str(info.value)
    assert "2 allowed" in message
    assert "math/word-problem-09" not in message and "code/parse-date-004" not in message
    assert_no_regressions(report, allow=["code/*", "math/*"])


def test_helpers_read_well_in_a_real_pytest_run(tmp_path: Path) -> None:
    test_file = tmp_path / "test_ship.py"
    test_file.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from report_fixtures import SNAPSHOT_POLICY, make_report
            from ablation.analysis.gates import evaluate_gates
            from ablation.testing import assert_gates

            def test_candidate_can_ship():
                assert_gates(evaluate_gates(make_report(), SNAPSHOT_POLICY))
            """
        )
    )
    # pytest alone: the installed plugins (xdist, hypothesis, ...) only lengthen its start
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "AssertionError: release gates failed" in proc.stdout
    assert "code/sql-injection-guard (CRITICAL)" in proc.stdout
