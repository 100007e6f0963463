"""A task id has one bound, ``TASK_ID_LIMIT`` characters, in a suite and in a result file.

A longer id in a result file is refused in one line naming the file, the line and the id's first
characters, by every path that reads plain rows (the row path, the layout and one-decode paths of
plain verdict lines, pyarrow's engine, which leaves such a file to the row path); an id of exactly
the limit is read, in characters, not bytes. An empty id cell is named as empty, not as missing.
The id is refused as soon as its row is read: no path parses the whole file first. An
``--expected-ids`` id passes the same check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.engine_toggle import engine_reads_every_file
from pydantic import ValidationError

from ablation import schema
from ablation.errors import InputError
from ablation.schema import AblationTask
from ablation.sources.result_files import load_result_columns, load_results

#: The documented bound (docs/SECURITY.md, "Result files read by `compare`"), in characters.
TASK_ID_LIMIT = 1 << 20


def test_the_bound_is_declared_once_for_suites_and_results() -> None:
    assert getattr(schema, "TASK_ID_LIMIT", None) == TASK_ID_LIMIT


def _outcomes(path: Path, **options: Any) -> list[Any]:
    """What the row path and the column path give ``path``: its ids, or the error message."""
    out: list[Any] = []
    for load in (load_results, load_result_columns):
        try:
            read = load(path, **options)
            out.append([r.task_id for r in read] if isinstance(read, list) else read.columns.task_id.tolist())
        except InputError as exc:
            out.append(str(exc))
    return out


def _is_long(message: Any, path: Path, line: int, task_id: str) -> bool:
    """Whether ``message`` is one short line naming the file, the line and the id's start."""
    head = f"{path}:{line}: 'id' (the task id) is longer than {TASK_ID_LIMIT} characters ({len(task_id)}), "
    return (isinstance(message, str) and message.startswith(f"{head}starting '{task_id[:60]}")
            and len(message) < len(head) + 100 and "\n" not in message)  # fmt: skip


LAYOUTS = {  # each a path of its own through the plain rows
    "layout": lambda i: {"id": i, "passed": True},
    "one decode": lambda i: {"id": i, "passed": True, "run": 0},
    "rows": lambda i: {"id": i, "passed": True, "cost": 0.5, "note": "x"},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("engine_on", [False, True])
def test_an_id_past_the_limit_is_refused_by_every_path(
    tmp_path: Path, layout: str, engine_on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine_reads_every_file(monkeypatch, engine_on)
    row = LAYOUTS[layout]
    too_long = "t" + "x" * TASK_ID_LIMIT
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(row(i)) + "\n" for i in ("a", too_long, "b")))
    options = {"run_field": "run"} if layout == "one decode" else {}
    assert all(_is_long(m, path, 2, too_long) for m in _outcomes(path, **options))


@pytest.mark.parametrize("engine_on", [False, True])
def test_an_id_of_the_limit_in_characters_is_read(
    tmp_path: Path, engine_on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine_reads_every_file(monkeypatch, engine_on)
    wide = "é" * TASK_ID_LIMIT  # twice as many bytes as characters
    for name, rows in (("r.jsonl", [{"id": i, "passed": True, "cost": 1} for i in ("a", wide)]),
                       ("bare.jsonl", [{"id": i, "passed": True} for i in ("a", wide)])):  # fmt: skip
        path = tmp_path / name
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        assert _outcomes(path) == [["a", wide]] * 2
    csv = tmp_path / "r.csv"
    ascii_id = "c" * TASK_ID_LIMIT
    csv.write_text(f"id,passed\na,true\n{ascii_id},false\n")
    assert _outcomes(csv) == [["a", ascii_id]] * 2
    csv.write_text(f"id,passed\na,true\n{ascii_id}c,false\n")
    assert all(_is_long(m, csv, 3, ascii_id + "c") for m in _outcomes(csv))


def test_a_suite_task_id_has_the_same_limit() -> None:
    assert AblationTask(task_id="s" * TASK_ID_LIMIT).task_id == "s" * TASK_ID_LIMIT
    with pytest.raises(ValidationError, match="at most"):
        AblationTask(task_id="s" * (TASK_ID_LIMIT + 1))


@pytest.mark.parametrize("cell", ["", "  "])
def test_an_empty_csv_id_cell_is_named_as_empty(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(f"id,passed\na,true\n{cell},false\n")
    assert _outcomes(path) == [f"{path}:3: 'id' (the task id) is empty"] * 2


def test_a_missing_id_column_value_is_still_named_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "passed": true}\n{"passed": true}\n{"id": "", "passed": true}\n')
    assert _outcomes(path) == [f"{path}:2: no 'id' field (the task id)"] * 2
    path.write_text('{"id": "a", "passed": true}\n{"id": "", "passed": true}\n')
    assert _outcomes(path) == [f"{path}:2: 'id' (the task id) is empty"] * 2


_TOO_LONG = "e" + "y" * TASK_ID_LIMIT


@pytest.mark.parametrize(("layout", "bad", "problem"), [
    ("text", _TOO_LONG, f"is longer than {TASK_ID_LIMIT} characters ({TASK_ID_LIMIT + 1}), starting 'eyyy"),
    ("json", _TOO_LONG, f"is longer than {TASK_ID_LIMIT} characters ({TASK_ID_LIMIT + 1}), starting 'eyyy"),
    ("json", "\u2003", "is only whitespace"),  # a text line is stripped: a blank one is no id
])  # fmt: skip
def test_an_expected_id_has_the_result_files_bound(tmp_path: Path, layout: str, bad: str, problem: str) -> None:
    """``--expected-ids`` ids pass the check result files' ids pass (``checked_task_id``): one
    over the limit, or of only whitespace, is one short line naming the file and its line."""
    from ablation.sources.result_files import load_expected_ids

    path = tmp_path / f"ids.{layout}"
    path.write_text('[\n"a",\n' + json.dumps(bad) + "\n]" if layout == "json" else f"# inventory\na\n{bad}\n")
    with pytest.raises(InputError) as info:
        load_expected_ids(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: the id {problem}"), message
    assert "\n" not in message and len(message) < 250
    path.write_text("a\n" + "z" * TASK_ID_LIMIT + "\n")  # the limit itself is an id
    assert load_expected_ids(path) == ["a", "z" * TASK_ID_LIMIT]


def test_compare_names_an_over_long_expected_id(tmp_path: Path) -> None:
    from tests.helpers.cli import run_here

    rows = tmp_path / "r.jsonl"
    rows.write_text('{"id": "a", "passed": true}\n')
    ids = tmp_path / "ids.txt"
    ids.write_text("a\n\n" + "q" * (TASK_ID_LIMIT + 1) + "\n")
    proc = run_here(["compare", str(rows), str(rows), "--expected-ids", str(ids)])
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ablation: error: {ids}:3: the id is longer than"), proc.stderr


@pytest.mark.parametrize("layout", [*sorted(LAYOUTS), "csv"])
@pytest.mark.parametrize("engine_on", [False, True])
def test_an_id_past_the_limit_is_refused_at_its_row(
    tmp_path: Path, layout: str, engine_on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The id is refused when its row is read: the error names its line, not a malformed row
    after it, and no path parses the whole file first, neither pyarrow (its table is never
    asked for) nor the plain-lines paths (no decode or encode of the whole text)."""
    from ablation.sources.readers import engine_columns, plain_lines

    engine_reads_every_file(monkeypatch, engine_on)
    whole: list[int] = []  # sizes of the whole-file parses asked for
    monkeypatch.setattr(engine_columns, "read_table", lambda path, *a: whole.append(path.stat().st_size))
    loads = plain_lines.json.loads

    def spied(text: str, *args: Any, **kwargs: Any) -> Any:
        if len(text) > TASK_ID_LIMIT:  # the whole text: a line alone is shorter
            whole.append(len(text))
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(plain_lines.json, "loads", spied)
    too_long = "t" + ("x" if layout == "csv" else "é") * TASK_ID_LIMIT  # pyarrow reads ASCII CSV only
    path = tmp_path / ("r.csv" if layout == "csv" else "r.jsonl")
    if layout == "csv":
        path.write_text(f"id,passed,cost\na,true,1\nb,false,2\n{too_long},true,3\nc,true\n")  # line 5: 2 cells
        line = 4
    else:
        row = LAYOUTS[layout]
        path.write_text("".join(json.dumps(row(i), ensure_ascii=False) + "\n" for i in ("a", "b", too_long))
                        + json.dumps(row("c"))[:-1] + "\n")  # line 4: malformed  # fmt: skip
        line = 3
    options = {"run_field": "run"} if layout == "one decode" else {}
    for message in _outcomes(path, **options):
        head = f"{path}:{line}: 'id' (the task id) is longer than {TASK_ID_LIMIT} characters ({len(too_long)}), "
        assert isinstance(message, str) and message.startswith(f"{head}starting '{too_long[:60]}"), message
        assert len(message) < len(head) + 100 and "\n" not in message
    assert whole == []
