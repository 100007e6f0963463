"""``compare_results`` on every accepted input gives the report of the equivalent JSONL file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest

from ablation import CampaignConfig, TaskResult, compare_results

CONFIG = CampaignConfig(n_resamples=200, seed=7)
BASE = [{"id": f"t{i}", "ok": {"v": i % 3 != 0}, "latency": 0.1 * i, "steps": float(i)} for i in range(12)]
CAND = [{"id": f"t{i}", "ok": {"v": i % 4 != 0}, "latency": 0.05 * i, "steps": float(i + 1)} for i in range(12)]


def _flat(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": r["id"], "ok.v": r["ok"]["v"], "latency": r["latency"], "steps": r["steps"]} for r in rows]


def _stable(report: Any) -> dict[str, Any]:
    data: dict[str, Any] = report.model_dump(mode="json")
    data.pop("provenance")
    return data


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_dicts_and_dataframes_equal_the_jsonl_report(tmp_path: Path) -> None:
    from_files = compare_results(_jsonl(tmp_path / "b.jsonl", BASE), _jsonl(tmp_path / "c.jsonl", CAND),
                                 config=CONFIG, field="ok.v", names=("baseline", "candidate"))
    want = _stable(from_files)
    assert want["regressions"] and want["improvements"]
    assert _stable(compare_results(BASE, CAND, config=CONFIG, field="ok.v")) == want
    # DataFrame columns are flat: the literal column name "ok.v" wins over the dotted path
    frames = (pd.DataFrame(_flat(BASE)), pd.DataFrame(_flat(CAND)))
    assert _stable(compare_results(*frames, config=CONFIG, field="ok.v")) == want
    frames_pl = (pl.DataFrame(_flat(BASE)), pl.DataFrame(_flat(CAND)))
    assert _stable(compare_results(*frames_pl, config=CONFIG, field="ok.v")) == want


def test_dict_rows_without_arm_and_task_results_without_arm() -> None:
    report = compare_results([{"id": "a", "passed": True}], [{"id": "a", "passed": False}])
    assert report.regressions == ["a"]
    report = compare_results([TaskResult(task_id="a", passed=True)], [TaskResult(task_id="a", passed=False)])
    assert report.regressions == ["a"]


def test_unaccepted_inputs_are_type_errors_naming_both() -> None:
    with pytest.raises(TypeError, match=r"baseline results: got int; expected a path .*DataFrame"):
        compare_results(3, [])
    with pytest.raises(TypeError, match=r"candidate results: items of type int"):
        compare_results([{"id": "a", "passed": True}], [1, 2])
    with pytest.raises(TypeError, match=r"expected_ids must be an iterable of ids.*got str 'ab'"):
        compare_results([{"id": "a", "passed": True}], [{"id": "a", "passed": True}], expected_ids="ab")


def test_lists_of_results_leave_the_file_readers_unimported(tmp_path: Path) -> None:
    """Lists of TaskResult (with or without expected ids) need no reader of any file format; a
    file side does (checked in a fresh interpreter, where no other test imported them)."""
    import subprocess
    import sys

    from tests.helpers.cli import cli_env

    path = _jsonl(tmp_path / "b.jsonl", _flat(BASE))
    code = (
        "import sys\n"
        "from ablation import TaskResult, compare_results\n"
        "rows = [TaskResult(task_id=f't{i}', arm='baseline', passed=i % 2 == 0) for i in range(9)]\n"
        "r = compare_results(rows, rows, expected_ids=[f't{i}' for i in range(10)])\n"
        "print(r.n_paired, r.n_tasks, 'ablation.sources.readers' in sys.modules)\n"
        f"compare_results({str(path)!r}, rows, field='ok.v')\n"
        "print('ablation.sources.readers' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=cli_env())
    assert proc.stdout.split() == ["9", "10", "False", "True"]
