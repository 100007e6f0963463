"""A lone surrogate in a category (or a result file's id) is escaped, never a crash.

Python strings may hold lone surrogates (``"\\ud800"`` in a suite file, or decoded from a JSONL
line); UTF-8, SQLite and JSON cannot. Such text is stored and shown as the visible escape
``\\ud800``, as agent outputs are: a Python suite, a JSONL suite and ``compare`` are run end to end
with ``--format json`` and a store. The commands run in this process (:func:`_run`); what they
print must encode as strict UTF-8, which a lone surrogate would not (a process's stdout may
write one through ``surrogateescape``).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from helpers.cli_shared import run_here
from hypothesis import given
from hypothesis import strategies as st

from ablation import AblationTask, TaskResult

_AGENTS = '''
def baseline(x):
    return "a"


def candidate(x):
    return "b" if x["k"] == 1 else "a"
'''

_PY_SUITE = _AGENTS + '''
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data={"k": i}, expected_output="a",
                      category="c\\ud800" if i % 2 else "ok") for i in range(4)]
'''


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``ablation ARGS`` in this process; its output is text a UTF-8 stream takes as it is."""
    proc = run_here(args)
    proc.stdout.encode("utf-8")  # strict: raises on a lone surrogate that was not escaped
    proc.stderr.encode("utf-8")
    return proc


def _json_suite(path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(4):
            row = {"task_id": f"t{i}", "input_data": {"k": i}, "expected_output": "a",
                   "category": "c\ud800" if i % 2 else "ok", "tags": ["x\udc80"]}  # fmt: skip
            fh.write(json.dumps(row) + "\n")  # ensure_ascii: the line holds "\ud800"


def _check_run(tmp_path: Path, suite: Path) -> None:
    agents = tmp_path / "agents.py"
    agents.write_text(_AGENTS)
    store = tmp_path / "runs.db"
    args = ["run", str(suite), "--baseline", f"{agents}:baseline", "--candidate",
            f"{agents}:candidate", "--store", str(store), "--no-progress", "--format", "json"]  # fmt: skip
    proc = _run(args)
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_paired"] == 4
    assert "c\\ud800" in {c["category"] for c in report["categories"]}
    with sqlite3.connect(store) as db:
        [(n,)] = db.execute("select count(*) from trials").fetchall()
        cats = {c for (c,) in db.execute("select result_json from trials")}
    assert n == 8
    assert any('"c\\\\ud800"' in c for c in cats)
    again = _run(["report", "--store", str(store), "--format", "json"])
    assert again.returncode in (0, 2), again.stderr
    assert json.loads(again.stdout)["n_paired"] == 4


def test_python_suite_category(tmp_path: Path) -> None:
    suite = tmp_path / "suite.py"
    suite.write_text(_PY_SUITE)
    _check_run(tmp_path, suite)


def test_jsonl_suite_category(tmp_path: Path) -> None:
    suite = tmp_path / "suite.jsonl"
    _json_suite(suite)
    _check_run(tmp_path, suite)


def test_compare_with_surrogates_in_ids_and_categories(tmp_path: Path) -> None:
    for side, wrong in (("before", 9), ("after", 1)):
        with (tmp_path / f"{side}.jsonl").open("w") as fh:
            for i in range(6):
                row = {"id": f"t{i}\ud801", "passed": i != wrong, "error_type": "E\udc00",
                       "category": "c\ud800" if i % 2 else "ok"}  # fmt: skip
                fh.write(json.dumps(row) + "\n")
    proc = _run(["compare", str(tmp_path / "before.jsonl"), str(tmp_path / "after.jsonl"), "--format", "json"])
    assert proc.returncode in (0, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert report["regressions"] == ["t1\\ud801"]
    assert {c["category"] for c in report["categories"]} == {"ok", "c\\ud800"}
    proc = _run(["compare", str(tmp_path / "before.jsonl"), str(tmp_path / "after.jsonl"), "--format", "markdown",
                 "--details"])  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    assert "ud801" in proc.stdout


#: Text with lone surrogates among ordinary characters (``st.text`` never draws surrogates).
_LABELS = st.lists(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))).map("".join)


@given(_LABELS, st.lists(_LABELS, max_size=3))
def test_any_label_text_serialises(category: str, tags: list[str]) -> None:
    task = AblationTask(task_id="t", category=category, tags=tuple(tags), name=category)
    task.model_dump_json()  # raises on a lone surrogate that was not escaped
    trial = TaskResult(task_id="t", category=category, error_type=category, error_message=category)
    assert TaskResult.model_validate_json(trial.model_dump_json()) == trial
    escaped = category.encode("utf-8", "backslashreplace").decode("utf-8")
    assert task.category == escaped == trial.category
