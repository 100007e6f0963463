"""JUnit XML of a report, for CI systems that show test results.

One ``<testsuite name="ablation">`` with one ``<testcase>`` per release gate and one per regressed
critical task. A failed or inconclusive gate carries a ``<failure>``; a gate turned off carries a
``<skipped>`` whose message is what it would have said; a critical task's case fails when a
failing gate names the task (the critical gate does whenever it is on) and is skipped otherwise.
So the ``failures`` count is non-zero exactly when the report's verdict is ``"fail"``, i.e. when
the command exits 2: a consumer that fails the build on a JUnit failure agrees with the exit code.

The required structure of the JUnit schema (``testsuites`` > ``testsuite`` with ``name``,
``tests``, ``failures``, ``errors``, ``skipped``; ``testcase`` with ``name`` and ``classname``;
``failure`` and ``skipped`` with ``message``) is what this module writes; reference: the Ant JUnit
XSD (JUnit.xsd) used by Jenkins and GitHub test reporters.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Literal

from ablation.report import AblationReport

__all__ = ["render_junit"]

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
    cases = _cases(report)
    counts: dict[str, str] = {
        "name": "ablation",
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c[2] == "failure")),
        "errors": "0",
        "skipped": str(sum(1 for c in cases if c[2] == "skipped")),
    }
    root = ET.Element("testsuites", counts)
    suite = ET.SubElement(root, "testsuite", counts)
    for name, classname, outcome, message in cases:
        case = ET.SubElement(suite, "testcase", name=name, classname=classname)
        if outcome == "failure":
            ET.SubElement(case, "failure", message=message, type="ablation").text = message
        elif outcome == "skipped":
            ET.SubElement(case, "skipped", message=message).text = message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
