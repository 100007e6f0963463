"""A CSV cell longer than the :mod:`csv` module's default limit (131072 characters) is data.

A model's output or a transcript in a CSV column was refused by the row path as "malformed CSV
(field larger than field limit (131072))", while the same rows as JSON lines were read, and while
pyarrow's engine read the same CSV file when it was 4 MiB or more: one file, two answers, by its
size. The references: the JSON-lines file of the same rows (read by the JSON decoder, which has
no such limit), the engine's columns, and the line numbers the test wrote the rows at.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ablation.errors import InputError
from ablation.sources.readers import engine, read_rows
from ablation.sources.readers.columnar import _from_rows
from ablation.sources.readers.rows import ReadOptions
from ablation.sources.result_files import load_result_columns, load_results

_LONG = "long output " * 20_000  # 240000 characters, past the csv module's 131072


def _write_pair(tmp_path: Path, rows: list[dict[str, object]]) -> tuple[Path, Path]:
    as_csv = tmp_path / "results.csv"
    with as_csv.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: str(v).lower() if isinstance(v, bool) else v for k, v in row.items()} for row in rows)
    as_jsonl = tmp_path / "results.jsonl"
    as_jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return as_csv, as_jsonl


def test_a_long_cell_reads_as_its_json_lines_twin(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": "a", "passed": True, "output": _LONG},
        {"id": "b", "passed": False, "output": "short"},
        {"id": "c", "passed": True, "output": "multi\nline " + _LONG},
    ]
    as_csv, as_jsonl = _write_pair(tmp_path, rows)
    limit = csv.field_size_limit()
    from_csv = load_results(as_csv)
    assert csv.field_size_limit() == limit  # the process-wide limit is put back
    assert from_csv == load_results(as_jsonl)
    assert [r.output for r in from_csv] == [row["output"] for row in rows]


def test_engine_and_row_path_agree_on_a_long_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyarrow")  # the `fast` extra (part of `test`)
    monkeypatch.setattr(engine, "MIN_BYTES", 0)  # the engine reads files of every size here
    path = tmp_path / "results.csv"
    notes = ["n" * 140_000 if i == 7 else "x" for i in range(50)]
    path.write_text("id,passed,steps,note\n" + "".join(
        f"t{i},{'true' if i % 3 else 'false'},{i},{note}\n" for i, note in enumerate(notes)), encoding="ascii")  # fmt: skip
    options = ReadOptions()
    fast = engine.engine_columns(str(path), options, None, str(path))
    assert fast is not None  # pyarrow reads the file: the row path must read it too
    assert load_result_columns(path).columns.task_id.tolist() == fast.columns.task_id.tolist()
    slow = _from_rows(read_rows(str(path), options, None, str(path)), str(path), options)
    assert list(fast.columns.task_id) == list(slow.columns.task_id) == [f"t{i}" for i in range(50)]
    assert list(fast.columns.passed) == list(slow.columns.passed)
    assert [fast.result(i) for i in range(50)] == [slow.result(i) for i in range(50)]


def test_errors_keep_their_lines_past_a_long_cell(tmp_path: Path) -> None:
    """Rows are parsed in batches under the raised limit: an error still names its own line,
    and a row before it that is wrong is named first, across a batch's end."""
    lines = ["id,passed,output", f"a,true,{_LONG}"]
    lines += [f"t{i},false,x" for i in range(1500)]
    bad_row = len(lines) + 1  # the line number of the row appended next
    lines.append('u,true,"x"y')  # a quote inside a cell: malformed under strict parsing
    path = tmp_path / "results.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_results(path)
    assert str(info.value).startswith(f"{path}:{bad_row}: malformed CSV ("), str(info.value)
    duplicate = [*lines[:1200], "t5,true,x", *lines[1200:]]
    path.write_text("\n".join(duplicate) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_results(path)
    assert str(info.value).startswith(f"{path}:1201: duplicate id 't5' (run 0): first on line 8, again on line 1201")
