"""Command-line features for CI: ``--quiet``, ``schema_version`` and ``ablation schema``."""

from __future__ import annotations

import json

import pytest
from helpers.cli import REPO, cli_env, run

from ablation.report import REPORT_SCHEMA_VERSION, AblationReport

TOOLS = REPO / "tests" / "data" / "tools"
PAIR = [str(TOOLS / "pe_baseline.json"), str(TOOLS / "pe_candidate.json")]


@pytest.mark.slow
def test_quiet_prints_nothing_and_keeps_the_exit_code() -> None:
    done = run(["compare", *PAIR, "--quiet"], cli_env())
    assert (done.returncode, done.stdout) == (0, "")
    # the committed candidate is about 3.5x faster: swapped, the latency gate fails
    failing = run(["compare", *reversed(PAIR), "--quiet", "--max-latency-ratio", "1.0"], cli_env())
    assert (failing.returncode, failing.stdout) == (2, "")


@pytest.mark.slow
def test_schema_command_validates_the_json_report() -> None:
    import jsonschema  # from inspect-ai's dependencies, installed with the test extra

    schema = json.loads(run(["schema"], cli_env()).stdout)
    assert schema == AblationReport.model_json_schema()
    report = json.loads(run(["compare", *PAIR, "--format", "json"], cli_env()).stdout)
    assert report["schema_version"] == REPORT_SCHEMA_VERSION
    jsonschema.validate(report, schema)
