"""A field nested hundreds of levels deep, in a JSONL suite line or a result row, is one
``FILE:LINE: ... (task id 'X')`` input error with exit 1, never a ``RecursionError``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ablation.errors import InputError
from ablation.sources.result_files import load_results
from ablation.sources.suites import open_suite
from ablation.sources.text import MAX_JSON_DEPTH, nested_too_deep, short_repr

ROOT = Path(__file__).resolve().parents[2]


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(("levels", "problem"), [
    (900, "field 'input_data' is nested more than 100 levels deep (task id 'b')"),
    (990, "JSON nested too deeply to read"),
    (100_000, "JSON nested too deeply to read"),
])  # fmt: skip
def test_deep_jsonl_suite_line_is_one_input_error(tmp_path: Path, levels: int, problem: str) -> None:
    suite = tmp_path / "deep.jsonl"
    suite.write_text(
        '{"task_id": "a", "input_data": 1, "expected_output": 1}\n'
        f'{{"task_id": "b", "input_data": {_deep(levels)}, "expected_output": 1}}\n'
    )
    with pytest.raises(InputError) as exc:
        list(open_suite(suite))
    assert str(exc.value) == f"{suite}:2: {problem}"
    agent = f"{ROOT / 'agents' / 'arithmetic.py'}:baseline"
    done = _cli("run", "deep.jsonl", "--baseline", agent, "--candidate", agent, "--no-store",
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"ablation: error: deep.jsonl:2: {problem}"]


def test_deep_field_of_a_result_row_is_one_input_error(tmp_path: Path) -> None:
    for side, verdict in (("a", "true"), ("b", "false")):
        (tmp_path / f"{side}.jsonl").write_text(
            '{"id": "t1", "passed": true}\n'
            f'{{"id": "t2", "passed": {verdict}, "output": {_deep(900)}}}\n'
        )
    with pytest.raises(InputError, match=r"a\.jsonl:2: field 'output' is nested more than 100"):
        load_results(tmp_path / "a.jsonl")
    done = _cli("compare", "a.jsonl", "b.jsonl", "--details", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        "ablation: error: a.jsonl:2: field 'output' is nested more than 100 levels deep "
        "(task id 't2')"
    ]


def test_depth_limit_and_short_repr() -> None:
    value: object = 1
    for _ in range(MAX_JSON_DEPTH):
        value = [value]
    assert not nested_too_deep(value)
    assert nested_too_deep({"k": value})
    assert not nested_too_deep("text")
    deep: object = []
    for _ in range(5000):
        deep = [deep]
    assert short_repr(deep) == f"<nested more than {MAX_JSON_DEPTH} levels deep>"
