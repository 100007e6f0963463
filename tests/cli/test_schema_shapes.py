"""``ablation schema`` validates every document ``--format json`` writes.

Four documents, each produced here by the ``ablation`` command (run in this process by
``helpers.cli.run_here``: what is checked is the document printed, not the process) and
validated with the ``jsonschema`` package against the schema the command prints: one report
(``compare``), several candidates (``compare BEFORE A B`` and ``run --candidate A --candidate
B``), a numeric ``--field`` comparison with one and with several AFTER files. Each names its
layout in ``document`` and ``schema_version``, and matches exactly one branch of the schema's
``oneOf``; a report written before ``document`` existed still validates, a document of one kind
posing as another does not.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.cli_shared import run_here

from ablation.report import REPORT_SCHEMA_VERSION

AGENTS = """\
def base(x):
    return x % 3 != 0


def cand(x):
    return x % 4 != 0
"""

pytestmark = [pytest.mark.xdist_group("schema-shapes"), pytest.mark.first]  # one worker builds the documents

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=True) for i in range(12)]
"""


def _ablation(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_here(args, cwd=cwd)


def _json(cwd: Path, *args: str) -> Any:
    proc = _ablation(cwd, *args, "--format", "json")
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real output of each kind, and the schema, keyed by what produced them."""
    work = tmp_path_factory.mktemp("schema")
    for name, passed in (("before", lambda i: i % 3 != 0), ("a", lambda i: i % 4 != 0),
                         ("b", lambda i: i % 5 != 0)):  # fmt: skip
        (work / f"{name}.jsonl").write_text("".join(
            json.dumps({"id": f"t{i}", "passed": passed(i), "score": (i % 7) / 7 + (name == "a") / 10})
            + "\n" for i in range(24)
        ))  # fmt: skip
    (work / "agents.py").write_text(AGENTS)
    (work / "suite.py").write_text(SUITE)
    schema = json.loads(_ablation(work, "schema").stdout)
    run = ["run", "suite.py", "--baseline", "agents.py:base", "--candidate", "agents.py:cand",
           "--candidate", "agents.py:base", "--no-store", "--no-progress", "--resamples", "200"]  # fmt: skip
    several = ["compare", "before.jsonl", "a.jsonl", "b.jsonl"]
    return {
        "schema": schema,
        "report": _json(work, "compare", "before.jsonl", "a.jsonl"),
        "compare candidates": _json(work, *several),
        "run candidates": _json(work, *run),
        "numeric": _json(work, "compare", "before.jsonl", "a.jsonl", "--field", "score"),
        "numeric candidates": _json(work, *several, "--field", "score"),
    }


KINDS = {
    "report": "report",
    "compare candidates": "candidates",
    "run candidates": "candidates",
    "numeric": "numeric",
    "numeric candidates": "numeric candidates",
}


def test_the_printed_schema_is_a_draft_2020_12_schema(documents: dict[str, Any]) -> None:
    """Checked once here (~1 s a check): the tests below validate with the schema's own
    validator class, as ``jsonschema.validate`` does after this same check."""
    schema = documents["schema"]
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("source", list(KINDS))
def test_every_json_document_validates_against_the_schema(
    documents: dict[str, Any], source: str
) -> None:
    schema, doc = documents["schema"], documents[source]
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["document"] == KINDS[source]
    assert doc["schema_version"] == REPORT_SCHEMA_VERSION
    branches = [b["$ref"] for b in schema["oneOf"]]
    matching = [
        ref for ref in branches
        if jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": ref}]}).is_valid(doc)
    ]  # fmt: skip
    assert len(matching) == 1, matching


def test_the_several_candidates_documents_hold_whole_reports(documents: dict[str, Any]) -> None:
    for source in ("compare candidates", "run candidates"):
        doc = documents[source]
        assert len(doc["candidates"]) == len(doc["summary"]["rows"]) == 2
        for c in doc["candidates"]:
            assert c["report"]["document"] == "report"
            assert c["report"]["improvement_holm_candidates"] == 2


def test_older_reports_validate_and_kinds_cannot_be_swapped(documents: dict[str, Any]) -> None:
    schema = documents["schema"]
    older = {k: v for k, v in documents["report"].items()
             if k not in ("document", "improvement_holm_pvalue", "improvement_holm_candidates")}  # fmt: skip
    jsonschema.Draft202012Validator(schema).validate(older)
    posing = {**documents["numeric candidates"], "document": "candidates"}
    assert not jsonschema.Draft202012Validator(schema).is_valid(posing)
    unknown = {**documents["compare candidates"], "extra": 1}
    assert not jsonschema.Draft202012Validator(schema).is_valid(unknown)
