"""JUnit XML of a report, for CI systems that show test results.

One ``<testsuite name="ablation">`` with one ``<testcase>`` per release gate (a failed or
inconclusive gate carries a ``<failure>``) and one per regressed critical task (always failed).
The required structure of the JUnit schema (``testsuites`` > ``testsuite`` with ``name``,
``tests``, ``failures``, ``errors``; ``testcase`` with ``name`` and ``classname``; ``failure``
with ``message``) is what this module writes; reference: the Ant JUnit XSD (JUnit.xsd) used by
Jenkins and GitHub test reporters.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ablation.report import AblationReport

__all__ = ["render_junit"]


def render_junit(report: AblationReport) -> str:
    """The JUnit XML document of ``report`` (see the module docstring)."""
    cases: list[tuple[str, str, str | None]] = [
        (f"gate: {g.name}", "ablation.gates", None if g.status == "pass" else f"{g.status}: {g.evidence}")
        for g in report.gates
    ]
    cases += [
        (f"critical task: {t}", "ablation.critical", "a critical task regressed")
        for t in report.critical_regressions
    ]
    failures = sum(1 for _, _, f in cases if f is not None)
    root = ET.Element("testsuites", name="ablation", tests=str(len(cases)), failures=str(failures),
                      errors="0")
    suite = ET.SubElement(root, "testsuite", name="ablation", tests=str(len(cases)),
                          failures=str(failures), errors="0", skipped="0")
    for name, classname, failure in cases:
        case = ET.SubElement(suite, "testcase", name=name, classname=classname)
        if failure is not None:
            ET.SubElement(case, "failure", message=failure, type="ablation").text = failure
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
