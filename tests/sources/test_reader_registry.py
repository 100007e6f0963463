"""The public reader registry: one entry per format, detection by content, names derived from it.

A toy ``key=value`` reader (``tests/helpers/kv_reader.py``) registers with one line and is then
detected by content through ``ablation compare``; a JSON array is detected by its first item as
JSON lines are; the format names follow the registry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import REPO, cli_env

from ablation.errors import InputError
from ablation.sources.readers import FORMATS, ResultReader, detect_format, register_reader, registry
from ablation.sources.result_files import load_results

BUILT_IN = ("inspect", "pydantic-evals", "lm-eval", "promptfoo", "openai-evals", "ablation-export", "jsonl", "csv")


@pytest.fixture
def restored_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Registrations made by a test are undone after it."""
    monkeypatch.setattr(registry, "_READERS", list(registry._READERS))
    yield


def test_format_names_are_the_registry_in_order() -> None:
    assert tuple(FORMATS) == BUILT_IN
    assert "csv" in FORMATS and "kv" not in FORMATS


def test_a_registered_reader_goes_before_the_catch_alls_and_is_named(
    restored_registry: None, tmp_path: Path
) -> None:
    import importlib

    import helpers.kv_reader as kv

    importlib.reload(kv)  # registers (again) in this test's registry
    assert tuple(FORMATS) == (*BUILT_IN[:-2], "kv", "jsonl", "csv")
    path = tmp_path / "b.txt"
    path.write_text("# toy\nid=a passed=true latency_s=1.5\n\nid=b passed=0\n")
    assert detect_format(path.read_text()) == "kv"
    results = load_results(path)
    assert [(r.task_id, r.passed, r.latency_s, r.run) for r in results] == [
        ("a", True, 1.5, 0), ("b", False, None, 0)
    ]
    with pytest.raises(InputError, match=r"b\.txt:4: duplicate id 'a' \(run 0\): first on line 2"):
        path.write_text("# toy\nid=a passed=true\n\nid=a passed=0\n")
        load_results(path)
    # a CSV is not key=value pairs: still read as CSV
    assert detect_format("id,passed\na,true\n") == "csv"
    # re-registering a name replaces the entry in place
    register_reader(ResultReader("kv", ("text",), kv.detect, kv.rows))
    assert list(FORMATS).count("kv") == 1


def test_reader_entries_are_checked() -> None:
    with pytest.raises(ValueError, match="shapes"):
        ResultReader("x", ("yaml",), bool, lambda *a: iter(()))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lower case"):
        ResultReader("Toy", ("text",), bool, lambda *a: iter(()))


def test_a_json_array_is_detected_by_its_first_item(tmp_path: Path) -> None:
    samples = [
        {"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float(i % 2)} for i in range(3)
    ]
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(samples, indent=1))
    assert detect_format(path.read_text()) == "lm-eval"
    assert [(r.task_id, r.passed) for r in load_results(path)] == [("0", False), ("1", True), ("2", False)]
    assert detect_format('[{"id": "a", "passed": true}]') == "jsonl"
    assert detect_format("[]") == "jsonl"
    with pytest.raises(InputError, match="is a JSON array, not promptfoo"):
        load_results(path, format="promptfoo")


@pytest.mark.slow
def test_the_toy_reader_works_through_compare_with_detection_by_content(tmp_path: Path) -> None:
    before, after = tmp_path / "before.txt", tmp_path / "after.txt"
    before.write_text("".join(f"id=t{i} passed=true latency_s=1\n" for i in range(6)))
    after.write_text("".join(f"id=t{i} passed={'false' if i < 2 else 'true'} latency_s=2\n" for i in range(6)))
    launch = "import helpers.kv_reader; from ablation.cli import main_entry; main_entry()"
    cmd = [sys.executable, "-c", launch, "compare", str(before), str(after), "--format", "json"]
    done = subprocess.run(cmd, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode in (0, 2), done.stderr
    report = json.loads(done.stdout)
    assert report["regressions"] == ["t0", "t1"]
    assert report["n_paired"] == 6
    assert (report["latency"]["baseline_mean"], report["latency"]["candidate_mean"]) == (1.0, 2.0)
