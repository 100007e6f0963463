"""Command-line features for CI: ``--quiet``, ``schema_version`` and ``ablation schema``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import REPO, cli_env, run
from helpers.cli_shared import run_here

from ablation.report import REPORT_SCHEMA_VERSION, AblationReport

TOOLS = REPO / "tests" / "data" / "tools"
PAIR = [str(TOOLS / "pe_baseline.json"), str(TOOLS / "pe_candidate.json")]
#: The candidate's one task error would fail the completeness gate: accepted, so the exit code
#: says what the flag under test decides.
INCOMPLETE = "--allow-incomplete"


@pytest.mark.slow
def test_quiet_prints_nothing_and_keeps_the_exit_code() -> None:
    done = run_here(["compare", *PAIR, "--quiet", INCOMPLETE])
    assert (done.returncode, done.stdout) == (0, "")
    # the committed candidate is about 3.5x faster: swapped, the latency gate fails; the exit
    # code is the real process's
    failing = run(["compare", *reversed(PAIR), "--quiet", INCOMPLETE, "--max-latency-ratio", "1.0"], cli_env())
    assert (failing.returncode, failing.stdout) == (2, "")


@pytest.mark.slow
def test_schema_command_validates_the_json_report() -> None:
    import jsonschema  # from inspect-ai's dependencies, installed with the test extra

    schema = json.loads(run_here(["schema"]).stdout)
    own = AblationReport.model_json_schema()
    assert schema["$defs"]["AblationReport"] == {k: v for k, v in own.items() if k != "$defs"}
    report = json.loads(run_here(["compare", *PAIR, "--format", "json"]).stdout)
    assert report["schema_version"] == REPORT_SCHEMA_VERSION
    # the schema itself is checked against its metaschema in test_schema_shapes.py
    jsonschema.Draft202012Validator(schema).validate(report)


@pytest.mark.slow
def test_junit_has_one_case_per_gate_and_validates(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    out = tmp_path / "junit.xml"
    summary = tmp_path / "summary.md"
    done = run_here(["compare", *reversed(PAIR), "--max-latency-ratio", "1.0", "--format", "junit", "-o", str(out)],
                    {"GITHUB_STEP_SUMMARY": summary})
    assert done.returncode == 2
    report = json.loads(run_here(["compare", *reversed(PAIR), "--max-latency-ratio", "1.0", "--format", "json"]).stdout)
    root = ET.parse(out).getroot()
    # required structure of the JUnit XSD: testsuites > testsuite(name, tests, failures, errors)
    # > testcase(name, classname) [> failure(message)]
    assert root.tag == "testsuites"
    [suite] = root.findall("testsuite[@name='ablation']")  # the gates (the errors follow apart)
    for attr in ("name", "tests", "failures", "errors"):
        assert suite.get(attr) is not None
    cases = suite.findall("testcase")
    assert all(c.get("name") and c.get("classname") for c in cases)
    assert int(suite.get("tests", "")) == len(cases) == len(report["gates"]) + len(report["critical_regressions"])
    failed = [c for c in cases if c.find("failure") is not None]
    assert all(c.find("failure").get("message") for c in failed)  # type: ignore[union-attr]
    assert int(suite.get("failures", "")) == len(failed) == sum(g["status"] != "pass" for g in report["gates"])
    assert "latency" in summary.read_text()


@pytest.mark.slow
def test_verbose_logs_the_detected_formats_to_stderr() -> None:
    done = run_here(["compare", *PAIR, "--quiet", "--verbose", INCOMPLETE])
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("read as pydantic-evals") == 2
    assert "read as" not in run_here(["compare", *PAIR, "--quiet"]).stderr
