"""JUnit XML of a report, for CI systems that show test results.

One ``<testsuite name="ablation">`` with one ``<testcase>`` per release gate and one per regressed
critical task; several candidates against one baseline are one document with a
``<testsuite name="ablation: <candidate>">`` each (:func:`render_junit_candidates`). A failed or inconclusive gate carries a ``<failure>``; a gate turned off carries a
``<skipped>`` whose message is what it would have said; a critical task's case fails when a
failing gate names the task (the critical gate does whenever it is on) and is skipped otherwise.
So the ``failures`` count is non-zero exactly when the report's verdict is ``"fail"``, i.e. when
the command exits 2: a consumer that fails the build on a JUnit failure agrees with the exit code
(with several candidates: when any candidate's verdict is ``"fail"``, as the exit code).

The required structure of the JUnit schema (``testsuites`` > ``testsuite`` with ``name``,
``tests``, ``failures``, ``errors``, ``skipped``; ``testcase`` with ``name`` and ``classname``;
``failure`` and ``skipped`` with ``message``) is what this module writes; reference: the Ant JUnit
XSD (JUnit.xsd) used by Jenkins and GitHub test reporters. A character XML 1.0 refuses (a control
character in a task id or an agent's message) is written as a visible escape (:func:`_legal`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Literal

from ablation.render._ci_safe import no_workflow_commands
from ablation.report import AblationReport

__all__ = ["junit_document", "render_junit", "render_junit_candidates"]

_Outcome = Literal["passed", "failure", "skipped"]


def _cases(report: AblationReport) -> list[tuple[str, str, _Outcome, str]]:
    """``(name, classname, outcome, message)`` of every test case of ``report``."""
    cases: list[tuple[str, str, _Outcome, str]] = []
    for g in report.gates:
        if g.status == "pass":
            cases.append((f"gate: {g.name}", "ablation.gates", "passed", ""))
        elif g.status == "off":
            cases.append((f"gate: {g.name}", "ablation.gates", "skipped", f"off: {g.evidence}"))
        else:
            cases.append((f"gate: {g.name}", "ablation.gates", "failure", f"{g.status}: {g.evidence}"))
    failing = {t for g in report.gates if g.status in ("fail", "inconclusive") for t in g.tasks}
    for task in report.critical_regressions:
        if task in failing:
            cases.append((f"critical task: {task}", "ablation.critical", "failure",
                          "a critical task regressed"))
        else:
            cases.append((f"critical task: {task}", "ablation.critical", "skipped",
                          "a critical task regressed, but no gate that is on fails on it "
                          "(the critical gate is off: --no-critical-gate)"))
    return cases


def render_junit(report: AblationReport) -> str:
    """The JUnit XML document of ``report`` (see the module docstring)."""
    return junit_document([("ablation", _cases(report))])


def render_junit_candidates(reports: Sequence[AblationReport], names: Sequence[str]) -> str:
    """One JUnit XML document of several candidates' reports against one baseline: a
    ``<testsuite>`` per candidate, named ``ablation: <name>``, the root's counts their sums.

    Raises:
        ValueError: when ``names`` and ``reports`` differ in length.
    """
    if len(names) != len(reports):
        raise ValueError(f"{len(reports)} reports but {len(names)} names")
    return junit_document([(f"ablation: {name}", _cases(r)) for r, name in zip(reports, names, strict=True)])


def _counts(name: str, cases: Sequence[tuple[str, str, _Outcome, str]]) -> dict[str, str]:
    return {
        "name": name,
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c[2] == "failure")),
        "errors": "0",
        "skipped": str(sum(1 for c in cases if c[2] == "skipped")),
    }


def junit_document(suites: Sequence[tuple[str, list[tuple[str, str, _Outcome, str]]]]) -> str:
    """``<testsuites>`` of one ``<testsuite>`` per ``(name, cases)``; no line of it is a CI
    workflow command (:mod:`ablation.render._ci_safe`: attributes hold no raw newline, and a
    message's text may)."""
    every = [case for _, cases in suites for case in cases]
    root = ET.Element("testsuites", _counts("ablation", every))
    for suite_name, cases in suites:
        _suite(root, suite_name, cases)
    ET.indent(root)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
    return no_workflow_commands(text, markup=True)


def _suite(root: ET.Element, name: str, cases: Sequence[tuple[str, str, _Outcome, str]]) -> None:
    suite = ET.SubElement(root, "testsuite", _counts(_legal(name), cases))
    for case_name, classname, outcome, text in cases:
        case = ET.SubElement(suite, "testcase", name=_legal(case_name), classname=_legal(classname))
        message = _legal(text)
        if outcome == "failure":
            ET.SubElement(case, "failure", message=message, type="ablation").text = message
        elif outcome == "skipped":
            ET.SubElement(case, "skipped", message=message).text = message


#: A character XML 1.0 does not allow, even as a reference (controls, U+FFFE/U+FFFF, surrogates).
_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _legal(text: str) -> str:
    """``text`` with each character XML 1.0 refuses written as a visible escape (``\\x01``,
    ``\\ufffe``), so that a task id or message holding one (an agent's text) keeps the
    document well-formed, as ElementTree does not (it writes them as they are)."""
    return _ILLEGAL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 256 else f"\\u{ord(m[0]):04x}", text)
