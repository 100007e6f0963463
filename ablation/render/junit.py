"""JUnit XML of a report, for CI systems that show test results.

One ``<testsuite name="ablation">`` with one ``<testcase>`` per release gate and one per regressed
critical task; several candidates against one baseline are one document with a
``<testsuite name="ablation: <candidate>">`` each (:func:`render_junit_candidates`). A failed or inconclusive gate carries a ``<failure>``; a gate turned off carries a
``<skipped>`` whose message is what it would have said; a critical task's case fails when a
failing gate names the task (the critical gate does whenever it is on) and is skipped otherwise.
So the ``failures`` count is non-zero exactly when the report's verdict is ``"fail"``, i.e. when
the command exits 2: a consumer that fails the build on a JUnit failure agrees with the exit code
(with several candidates: when any candidate's verdict is ``"fail"``, as the exit code). A pass
is not silent: the gates' suite carries the verdict, the verdict line and the verdict note (what a
pass does not show, :mod:`ablation.analysis.pass_note`) as ``<properties>`` and the headline as
its ``<system-out>``; a passing gate's case has its evidence as ``<system-out>``, the regression
gate's with the verdict note.

Trials that errored or timed out (the errors section of every format) follow in a
``<testsuite name="trial errors">`` (``trial errors: <candidate>`` with several): one
``<testcase>`` per group of :func:`ablation.render._errors.error_rows` (arm, stage, error type),
carrying an ``<error type="ERROR TYPE">`` whose message gives the trial and task counts and the
task ids, and whose text adds one example message; the ``errors`` counts are those cases. A
consumer that fails the build on any JUnit error is stricter than the exit code, which errors
alone do not make 2 (they count against the completeness gate, a ``<failure>`` when it fails).

The required structure of the JUnit schema (``testsuites`` > ``testsuite`` with ``name``,
``tests``, ``failures``, ``errors``, ``skipped``; ``testcase`` with ``name`` and ``classname``;
``failure``, ``error`` and ``skipped`` with ``message``, the first two with ``type``) is what this
module writes; reference: the Ant JUnit XSD (JUnit.xsd) used by Jenkins and GitHub test reporters. A character XML 1.0 refuses (a control
character in a task id or an agent's message), and so any control, bidirectional or zero-width
character, is written as a visible escape (:func:`_legal`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from ablation.errors import ConfigError
from ablation.render._ci_safe import no_workflow_commands
from ablation.render._errors import error_rows
from ablation.render._format import headline, printable, verdict_line
from ablation.report import AblationReport, GateResult

__all__ = ["gate_case", "junit_document", "render_junit", "render_junit_candidates"]

_Outcome = Literal["passed", "failure", "skipped", "error"]

#: Name of the test suite of a report's errored and timed-out trials.
_ERRORS_SUITE = "trial errors"


class _Case(NamedTuple):
    """One ``<testcase>``: a plain ``(name, classname, outcome, message)`` tuple is one too.

    ``kind`` is the ``type`` of a ``<failure>`` or ``<error>``; ``detail``, when given, is the
    element's text (else the message)."""

    name: str
    classname: str
    outcome: _Outcome
    message: str
    kind: str = "ablation"
    detail: str = ""


def gate_case(g: GateResult, note: str = "") -> _Case:
    """One gate's test case: passed, its ``<system-out>`` the evidence (then ``note``: what the
    pass rests on), so that a pass is never silent; skipped when off (its message what the gate
    would have said); else a failure whose message leads with the status, once (an evidence that
    already starts with it is not led twice)."""
    name = f"gate: {g.name}"
    if g.status == "pass":
        return _Case(name, "ablation.gates", "passed", "", detail=g.evidence + note)
    if g.status == "off":
        return _Case(name, "ablation.gates", "skipped", f"off: {g.evidence}")
    lead = f"{g.status}: "
    return _Case(name, "ablation.gates", "failure", g.evidence if g.evidence.startswith(lead) else lead + g.evidence)


def _cases(report: AblationReport) -> list[_Case]:
    """Every test case of ``report``: a passing gate's ``<system-out>`` is its evidence, and the
    regression gate's adds the verdict note (what its pass does not show)."""
    note = f"\nverdict note: {report.verdict_note}" if report.verdict_note else ""
    cases = [gate_case(g, note if g.name == "no significant regression" else "") for g in report.gates]
    failing = {t for g in report.gates if not g.holds for t in g.tasks}
    for task in report.critical_regressions:
        if task in failing:
            cases.append(_Case(f"critical task: {task}", "ablation.critical", "failure",
                               "a critical task regressed"))
        else:
            cases.append(_Case(f"critical task: {task}", "ablation.critical", "skipped",
                               "a critical task regressed, but no gate that is on fails on it "
                               "(the critical gate is off: --no-critical-gate)"))
    return cases


def _error_cases(report: AblationReport) -> list[_Case]:
    """One ``error`` case per group of the report's errors section, as every format groups them
    (:func:`~ablation.render._errors.error_rows`): the counts and task ids are the section's."""
    cases = []
    for arm, stage, kind, count, n_tasks, ids, example in error_rows(report):
        message = f"{count} trial(s) on {n_tasks} task(s): {ids}"
        detail = f"{message}\ne.g. {example}" if example else message
        cases.append(_Case(f"{arm} / {stage} / {kind}", f"ablation.errors.{arm}", "error", message, kind, detail))
    return cases


def _report_suites(report: AblationReport, name: str, errors_name: str) -> list[tuple[Any, ...]]:
    """The gates' suite of ``report`` (its ``<properties>`` the verdict, the verdict line and the
    verdict note; its ``<system-out>`` the headline) and, when a trial errored or timed out, its
    errors' suite."""
    errors = _error_cases(report)
    props = [("verdict", report.verdict), ("verdict line", verdict_line(report))] + (
        [("verdict note", report.verdict_note)] if report.verdict_note else [])  # fmt: skip
    gates = (name, _cases(report), props, headline(report) if report.gates else "")
    return [gates] + ([(errors_name, list(errors))] if errors else [])


def render_junit(report: AblationReport) -> str:
    """The JUnit XML document of ``report`` (see the module docstring)."""
    return junit_document(_report_suites(report, "ablation", _ERRORS_SUITE))


def render_junit_candidates(reports: Sequence[AblationReport], names: Sequence[str]) -> str:
    """One JUnit XML document of several candidates' reports against one baseline: a
    ``<testsuite>`` per candidate, named ``ablation: <name>``, the root's counts their sums.

    Raises:
        ValueError: when ``names`` and ``reports`` differ in length.
    """
    if len(names) != len(reports):
        raise ConfigError(f"{len(reports)} reports but {len(names)} names")
    return junit_document([
        suite for r, name in zip(reports, names, strict=True)
        for suite in _report_suites(r, f"ablation: {name}", f"{_ERRORS_SUITE}: {name}")
    ])  # fmt: skip


def _counts(name: str, cases: Sequence[_Case]) -> dict[str, str]:
    return {
        "name": name,
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.outcome == "failure")),
        "errors": str(sum(1 for c in cases if c.outcome == "error")),
        "skipped": str(sum(1 for c in cases if c.outcome == "skipped")),
    }


def junit_document(suites: Sequence[tuple[Any, ...]]) -> str:
    """``<testsuites>`` of one ``<testsuite>`` per ``(name, cases)``, optionally followed by the
    suite's ``(name, value)`` properties and its ``<system-out>`` text; no line of it is a CI
    workflow command (:mod:`ablation.render._ci_safe`: attributes hold no raw newline, and a
    message's text may).

    A case is ``(name, classname, outcome, message)``, optionally followed by the ``type`` of
    its failure or error and the element's text, for a passed case its ``<system-out>``
    (:class:`_Case`)."""
    read = [(s[0], [_Case(*case) for case in s[1]], *s[2:]) for s in suites]
    root = ET.Element("testsuites", _counts("ablation", [case for s in read for case in s[1]]))
    for suite_name, cases, *extra in read:
        _suite(root, suite_name, cases, *extra)
    ET.indent(root)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
    return no_workflow_commands(text, markup=True)


def _suite(root: ET.Element, name: str, cases: Sequence[_Case], props: Sequence[tuple[str, str]] = (), out: str = "") -> None:
    suite = ET.SubElement(root, "testsuite", _counts(_legal(name), cases))
    if props:
        listed = ET.SubElement(suite, "properties")
        for key, value in props:
            ET.SubElement(listed, "property", name=_legal(key), value=_legal(value))
    for c in cases:
        case = ET.SubElement(suite, "testcase", name=_legal(c.name), classname=_legal(c.classname))
        message, text = _legal(c.message), _legal(c.detail or c.message)
        if c.outcome in ("failure", "error"):
            ET.SubElement(case, c.outcome, message=message, type=_legal(c.kind)).text = text
        elif c.outcome == "skipped":
            ET.SubElement(case, "skipped", message=message).text = text
        elif c.detail:
            ET.SubElement(case, "system-out").text = text
    if out:
        ET.SubElement(suite, "system-out").text = _legal(out)


def _legal(text: str) -> str:
    r"""``text`` as every report shows user text (:func:`~ablation.render._format.printable`):
    control characters, bidirectional overrides and zero-width characters written as visible
    escapes (``\x01``, ``\x0d``, ``\u202e``), newlines and tabs kept.

    That also keeps the document well-formed: every character XML 1.0 refuses, even as a
    reference (controls, U+FFFE/U+FFFF, lone surrogates), which ElementTree would write as it
    is, is one :func:`printable` escapes. A test reporter then shows a task id as the other
    formats do: a carriage return cannot overwrite a name, an override cannot reverse one.
    """
    return printable(text)
