"""An integer of thousands of digits in a task or an agent's output is data like any other.

Python refuses to turn an int of more than 4,300 digits into decimal text, and pydantic's JSON
reader refuses to read one back, so such a value in a task's input made the suite's fingerprint
raise, and one returned by an agent made its stored trial unreadable: either ended the campaign
with exit 1. :func:`ablation.schema.to_jsonable` writes an int of 14,000 bits or more as its
``hex`` (exact, and free of the decimal limit); the verifier still compares the values themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ablation.cli.main import main
from ablation.schema import TaskResult, to_jsonable

SUITE = """
from ablation import AblationTask
tasks = [AblationTask(task_id=f"t{i}", input_data={"a": 10**5000 if i == 0 else i},
                      expected_output=(10**5000 if i == 0 else i) + 1) for i in range(4)]
"""
AGENTS = """
def add_one(task):
    return task["a"] + 1
"""


@given(st.one_of(st.integers(), st.integers(13_990, 20_000).map(lambda bits: 1 << bits),
                 st.integers(13_990, 20_000).map(lambda bits: -(3 << bits))))  # fmt: skip
def test_every_int_output_reads_back_exactly(value: int) -> None:
    stored = TaskResult(task_id="t", output=value).model_dump_json()
    read = TaskResult.model_validate_json(stored).output
    if abs(value).bit_length() < 14_000:
        assert read == value and type(read) is int
    else:
        assert read == to_jsonable(value) == hex(value) and int(read, 16) == value


def test_a_campaign_with_a_huge_int_in_a_task_and_an_output_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "suite.py").write_text(SUITE)
    (tmp_path / "agents.py").write_text(AGENTS)
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "runs.db"
    args = ["--store", str(store), "--format", "json", "--quiet", "--output"]
    code = main(["run", "suite.py", "--baseline", "agents.py:add_one", "--candidate", "agents.py:add_one",
                 *args, "run.json"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "run.json").read_text())
    assert report["baseline"]["passes"] == report["candidate"]["passes"] == 4  # the values compared
    assert main(["report", "latest", *args, "report.json"]) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "report.json").read_text())["table"] == report["table"]
