"""JUnit output agrees with the exit code: a gate turned off is ``<skipped>``, never ``<failure>``.

Every report is produced by the command line (``ablation compare --format junit``); the expected
verdict is computed here from the test's own counts with scipy's exact binomial test, not read back
from the report.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from ablation.cli import main


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _pair(tmp: Path, outcomes: list[tuple[bool, bool]], critical: set[int] | None = None) -> list[str]:
    marked = critical or set()

    def row(i: int, passed: bool) -> dict:
        return {"id": f"t{i:03d}", "passed": passed, **({"critical": True} if i in marked else {})}

    before = _write(tmp / "before.jsonl", [row(i, b) for i, (b, _) in enumerate(outcomes)])
    after = _write(tmp / "after.jsonl", [row(i, a) for i, (_, a) in enumerate(outcomes)])
    return [str(before), str(after)]


def _junit(args: list[str], tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, ET.Element]:
    out = tmp / "junit.xml"
    code = main(["compare", *args, "--format", "junit", "-o", str(out)])
    capsys.readouterr()
    [suite] = ET.parse(out).getroot().findall("testsuite")
    return code, suite


def _counts(suite: ET.Element) -> tuple[int, int, int]:
    cases = suite.findall("testcase")
    failed = sum(c.find("failure") is not None for c in cases)
    skipped = sum(c.find("skipped") is not None for c in cases)
    assert (int(suite.get("tests", "-1")), int(suite.get("failures", "-1")),
            int(suite.get("skipped", "-1"))) == (len(cases), failed, skipped)
    return len(cases), failed, skipped


def test_an_off_regression_gate_is_skipped_with_what_it_would_have_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes = [(True, False)] * 15 + [(True, True)] * 15  # 15 regressions, no improvement
    assert binomtest(0, 15, 0.5, alternative="less").pvalue < 0.05  # significantly worse
    code, suite = _junit([*_pair(tmp_path, outcomes), "--allow-significant-regression"], tmp_path, capsys)
    assert code == 0
    _, failed, skipped = _counts(suite)
    assert (failed, skipped) == (0, 1)
    [off] = [c for c in suite.findall("testcase") if c.find("skipped") is not None]
    message = off.find("skipped").get("message", "")  # type: ignore[union-attr]
    assert "regression" in off.get("name", "") and "would have failed" in message


def test_a_critical_regression_with_the_critical_gate_off_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes = [(True, False)] + [(True, True)] * 9  # one regression: p = 0.5, not significant
    args = _pair(tmp_path, outcomes, critical={0})
    code, suite = _junit(args, tmp_path, capsys)
    assert code == 2 and _counts(suite)[1] >= 1  # on: the critical gate and its task fail
    code, suite = _junit([*args, "--no-critical-gate"], tmp_path, capsys)
    assert code == 0
    _, failed, skipped = _counts(suite)
    assert (failed, skipped) == (0, 2)  # the gate, listed as off, and its task
    [case] = suite.findall("testcase[@classname='ablation.critical']")
    assert case.find("skipped") is not None and case.get("name") == "critical task: t000"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    counts=st.tuples(*(st.integers(0, 12) for _ in range(4))).filter(lambda c: sum(c) > 0),
    critical=st.booleans(),
    flags=st.lists(
        st.sampled_from(["--allow-significant-regression", "--no-critical-gate", "--allow-incomplete"]),
        unique=True,
    ),
    margin=st.sampled_from([None, "0.05"]),
)
def test_failures_are_non_zero_exactly_when_the_command_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], counts: tuple[int, int, int, int],
    critical: bool, flags: list[str], margin: str | None,
) -> None:
    """The invariant: ``failures > 0`` iff exit 2; gates neither pass nor fail are skipped."""
    both, regress, improve, neither = counts
    outcomes = ([(True, True)] * both + [(True, False)] * regress + [(False, True)] * improve
                + [(False, False)] * neither)
    marked = {both} if critical and regress else set()  # the first regressed task
    args = [*_pair(tmp_path, outcomes, critical=marked), *flags]
    if margin:
        args += ["--margin", margin]
    code, suite = _junit(args, tmp_path, capsys)
    assert code in (0, 2)
    _, failed, skipped = _counts(suite)
    assert (failed > 0) == (code == 2)
    if "--allow-significant-regression" in flags or "--allow-incomplete" in flags:
        assert skipped >= 1  # each listed as off


def test_several_candidates_are_one_document_with_a_suite_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compare BASE A B --format junit``: one ``<testsuites>`` (several XML documents one after
    the other are not XML) with each candidate's suite equal to its own single-candidate run; the
    root's counts are the sums, and a failure is there exactly when the exit code is 2."""
    worse = [(True, False)] * 15 + [(True, True)] * 15
    assert binomtest(0, 15, 0.5, alternative="less").pvalue < 0.05  # candidate A: significantly worse
    base, a = _pair(tmp_path, worse)
    b = str(_write(tmp_path / "same.jsonl", [{"id": f"t{i:03d}", "passed": True} for i in range(30)]))
    out = tmp_path / "several.xml"
    code = main(["compare", base, a, b, "--format", "junit", "-o", str(out)])
    capsys.readouterr()
    root = ET.parse(out).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"ablation: {Path(a).name}", f"ablation: {Path(b).name}"]
    for suite, candidate in zip(suites, (a, b), strict=True):
        single_code, single = _junit([base, candidate], tmp_path, capsys)
        assert [(c.get("name"), c.find("failure") is not None) for c in suite.findall("testcase")] == [
            (c.get("name"), c.find("failure") is not None) for c in single.findall("testcase")]
        assert _counts(suite) == _counts(single)
        assert (int(suite.get("failures", "0")) > 0) == (single_code == 2)
    sums = [sum(_counts(s)[i] for s in suites) for i in range(3)]
    assert [int(root.get(k, "-1")) for k in ("tests", "failures", "skipped")] == sums
    assert code == 2 and sums[1] > 0
