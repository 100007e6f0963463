"""Plain JSON lines and CSV read column-wise by pyarrow give exactly what the row path gives.

The oracle is the row path itself (``_from_rows`` of ``read_rows``: each row decoded and checked
by ``checked_rows``): on random realistic files the engine's columns and every row's
``TaskResult`` equal the oracle's, and the whole report built from them is the same JSON. A file
the engine cannot vouch for is read row by row, so every error keeps its file, line and task id.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ablation.analysis.build import compare_columns
from ablation.errors import InputError
from ablation.sources.readers import engine, read_rows
from ablation.sources.readers.columnar import ColumnRead, FileTrials, _from_rows
from ablation.sources.readers.generic import CSV_NUMBER
from ablation.sources.readers.rows import ReadOptions
from ablation.sources.result_files import load_result_columns

pytest.importorskip("pyarrow")  # the `fast` extra (part of `test`): the engine is optional


@pytest.fixture(autouse=True)
def any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine reads files of every size here (it starts at a few MiB in use)."""
    monkeypatch.setattr(engine, "MIN_BYTES", 0)


def row_path(path: Path, options: ReadOptions) -> ColumnRead:
    read = read_rows(str(path), options, None, str(path))
    return _from_rows(read, str(path), options)


def same_columns(fast: ColumnRead, slow: ColumnRead) -> None:
    a, b = fast.columns, slow.columns
    for name in ("task_id", "run", "passed", "status", "latency_s", "cost", "tokens", "category",
                 "critical", "error_type", "line", "attempts", "error", "error_stage"):  # fmt: skip
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    for group in ("quality", "metrics"):
        x, y = getattr(a, group), getattr(b, group)
        assert x.keys() == y.keys(), group
        for name in x:
            assert np.array_equal(x[name], y[name], equal_nan=True), (group, name)
    assert [fast.result(i) for i in range(len(a))] == [slow.result(i) for i in range(len(b))]


# ------------------------------------------------------------------ random realistic rows

number = st.one_of(st.none(), st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False))
row = st.fixed_dictionaries(
    {"passed": st.booleans(), "steps": st.integers(-5, 5)},
    optional={
        "latency_s": number, "cost": number, "tokens": st.one_of(st.none(), st.integers(0, 10**9)),
        "score": number, "category": st.one_of(st.none(), st.sampled_from(["math", "code", "é ü"])),
        "critical": st.one_of(st.none(), st.booleans()), "retries": st.integers(0, 3),
        "meta": st.fixed_dictionaries({"model": st.sampled_from(["m-1", "m-2"]), "attempt": st.integers(1, 3)}),
        "note": st.text(max_size=5), "output": st.text(max_size=8),
    },
)  # fmt: skip


def as_csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, float) else str(value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row, min_size=2, max_size=12), int_ids=st.booleans(), csv=st.booleans())
def test_engine_columns_equal_the_row_path(tmp_path: Path, rows: list[dict[str, Any]], int_ids: bool, csv: bool) -> None:
    objs = [{"id": i * 7 if int_ids else f"t{i:03d}", **r} for i, r in enumerate(rows)]
    if csv:
        columns = ["id", "passed", "latency_s", "cost", "tokens", "category", "steps", "label"]
        lines = [",".join(columns)] + [
            ",".join(as_csv_cell(o.get(c) if c != "label" else o.get("category")) for c in columns)
            for o in objs
        ]
        text = "\n".join(line.replace("é ü", "e u") for line in lines) + "\n"
        path = tmp_path / "r.csv"
    else:
        text = "".join(json.dumps(o, ensure_ascii=bool(len(objs) % 2)) + "\n" for o in objs)
        path = tmp_path / "r.jsonl"
    path.write_text(text, encoding="utf-8")
    options = ReadOptions(arm="candidate")
    slow = row_path(path, options)
    fast = engine.engine_columns(str(path), options, None, str(path))
    assert fast is not None  # a plain file: the engine vouches for it
    same_columns(fast, slow)


def test_repeated_runs_and_pass_values_agree(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i % 3}", "run": i // 3, "passed": i % 2, "cost": i}) + "\n" for i in range(9)))
    for options in (ReadOptions(run_field="run"), ReadOptions(run_field="run", pass_values=frozenset({"0"}))):
        fast = engine.engine_columns(str(path), options, None, str(path))
        assert fast is not None
        same_columns(fast, row_path(path, options))


def test_the_report_is_the_same_json(tmp_path: Path) -> None:
    def write(name: str, flip: int) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps({
            "id": f"task-{i:04d}", "passed": (i % 5 != 0) != (i < flip), "latency_s": 1 + (i % 7) / 10,
            "cost": 0.001 * (i % 3), "tokens": 100 + i, "category": ("math", "code")[i % 2],
            "meta": {"model": "m", "attempt": 1}}) + "\n" for i in range(300)))  # fmt: skip
        return path

    before, after = write("b.jsonl", 0), write("a.jsonl", 12)

    def report(fast: bool) -> str:
        reads = {}
        for arm, path in (("baseline", before), ("candidate", after)):
            options = ReadOptions(arm=arm)
            read = engine.engine_columns(str(path), options, None, str(path)) if fast else row_path(path, options)
            assert read is not None
            reads[arm] = read
        built = compare_columns(reads["baseline"].columns, reads["candidate"].columns,
                                names=("b", "a"), trial_lookup=FileTrials(reads))  # fmt: skip
        return built.model_dump_json()

    assert report(True) == report(False)


# ------------------------------------------------------------------ what only the row path reads

JSONL_FALLBACKS = {
    "duplicate id": ['{"id": "a", "passed": true}', '{"id": "a", "passed": false}'],
    "empty id": ['{"id": "a", "passed": true}', '{"id": "", "passed": false}'],
    "verdict word": ['{"id": "a", "passed": true}', '{"id": "b", "passed": "maybe"}'],
    "numeric verdict": ['{"id": "a", "passed": 1}', '{"id": "b", "passed": 0.5}'],
    "nan": ['{"id": "a", "passed": true, "cost": NaN}', '{"id": "b", "passed": true}'],
    "both latencies": ['{"id": "a", "passed": true, "latency": 1, "latency_s": 2}', '{"id": "b", "passed": true}'],
    "negative latency": ['{"id": "a", "passed": true, "latency_s": -1}', '{"id": "b", "passed": true}'],
    "fractional tokens": ['{"id": "a", "passed": true, "tokens": 1.5}', '{"id": "b", "passed": true}'],
    "cost as text": ['{"id": "a", "passed": true, "cost": "0.5"}', '{"id": "b", "passed": true}'],
    "blank line": ['{"id": "a", "passed": true}', "", '{"id": "b", "passed": true}'],
    "two objects": ['{"id": "a", "passed": true} {"id": "c", "passed": true}', '{"id": "b", "passed": true}'],
    "category number": ['{"id": "a", "passed": true, "category": 1.5}', '{"id": "b", "passed": true}'],
    "no verdict": ['{"id": "a", "passed": true}', '{"id": "b"}'],
    "array line": ['{"id": "a", "passed": true}', "[1]"],
    "surrogate": ['{"id": "a", "passed": true, "category": "\\ud800"}', '{"id": "b", "passed": true}'],
    "huge integer id": ['{"id": 99999999999999999999, "passed": true}', '{"id": "b", "passed": true}'],
    "invalid utf-8": ['{"id": "a", "passed": true, "note": "\udcff"}', '{"id": "b", "passed": true}'],
    "invalid utf-8 in a key": ['{"id": "a", "passed": true, "meta": {"\udcff": 1}}', '{"id": "b", "passed": true}'],
}  # fmt: skip


def outcome(path: Path, options: ReadOptions) -> Any:
    """The row path's results, or its error message."""
    try:
        read = row_path(path, options)
    except InputError as exc:
        return str(exc)
    return [read.result(i) for i in range(len(read.columns))]


@pytest.mark.parametrize("case", sorted(JSONL_FALLBACKS))
def test_jsonl_the_engine_cannot_vouch_for_reads_as_the_row_path(tmp_path: Path, case: str) -> None:
    data = ("\n".join(JSONL_FALLBACKS[case]) + "\n").encode("utf-8", "surrogateescape")
    _declined_and_read_as_rows(tmp_path / "r.jsonl", data)


CSV_FALLBACKS = {
    "quoted": 'id,passed,note\na,true,"x, y"\nb,false,z\n',
    "duplicate id": "id,passed\na,true\na,false\n",
    "verdict word": "id,passed\na,true\nb,maybe\n",
    "short row": "id,passed,cost\na,true,1\nb,false\n",
    "missing column": "id,verdict\na,true\nb,false\n",
    "infinite cost": "id,passed,cost\na,true,inf\nb,false,1\n",
    "underscored number": "id,passed,cost\na,true,1_000\nb,false,1\n",
    "empty id": "id,passed\na,true\n ,false\n",
    "lone carriage return": "id,passed\ra,true\rb,false\r",
    "non-ascii": "id,passed,category\na,true,é\nb,false,x\n",
    "blank row": "id,passed\na,true\n,\nb,false\n",
    "repeated header": "id,passed,id\na,true,b\nb,false,c\n",
}


@pytest.mark.parametrize("case", sorted(CSV_FALLBACKS))
def test_csv_the_engine_cannot_vouch_for_reads_as_the_row_path(tmp_path: Path, case: str) -> None:
    _declined_and_read_as_rows(tmp_path / "r.csv", CSV_FALLBACKS[case].encode())


def _declined_and_read_as_rows(path: Path, data: bytes) -> None:
    """The engine declines ``data``, and ``load_result_columns`` gives the row path's results
    (or its error message)."""
    path.write_bytes(data)
    options = ReadOptions()
    assert engine.engine_columns(str(path), options, None, str(path)) is None
    try:
        got: Any = load_result_columns(path)
        got = [got.result(i) for i in range(len(got.columns))]
    except InputError as exc:
        got = str(exc)
    assert got == outcome(path, options)


def test_csv_numbers_blank_cells_and_text_metrics(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id , passed,cost,steps,label,critical\r\n001, YES ,,3,x1,\r\n2,0, .5 ,-2e1,7,no\r\n")
    fast = engine.engine_columns(str(path), ReadOptions(), None, str(path))
    assert fast is not None
    same_columns(fast, row_path(path, ReadOptions()))
    assert fast.columns.task_id.tolist() == ["001", "2"]
    assert fast.columns.metrics["label"].tolist()[1] == 7.0 and math.isnan(fast.columns.metrics["label"][0])


def test_bare_verdict_lines_are_left_to_the_layout_path(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "passed": i % 2 == 0}) + "\n" for i in range(5)))
    assert engine.engine_columns(str(path), ReadOptions(), None, str(path)) is None
    read = load_result_columns(path)
    assert read.columns.passed.tolist() == [True, False, True, False, True]


def test_small_files_do_not_import_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MIN_BYTES", 1 << 20)
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "passed": true, "cost": 1}\n{"id": "b", "passed": false}\n')
    assert engine.engine_columns(str(path), ReadOptions(), None, str(path)) is None


def test_compare_reads_realistic_rows_without_the_row_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ablation compare`` on JSONL and CSV with five fields and a nested object: no row decoded."""
    from helpers.cli import run_here

    from ablation.sources.readers import columnar

    rows = [{"id": f"task-{i:03d}", "latency_s": 0.5 + i % 3, "cost": 0.01, "tokens": 10 + i,
             "category": "ab"[i % 2], "meta": {"model": "m", "attempt": 1}} for i in range(40)]  # fmt: skip
    files = []
    for arm, flip in (("b", -1), ("a", 5)):
        (tmp_path / f"{arm}.jsonl").write_text(
            "".join(json.dumps({**r, "passed": i > flip}) + "\n" for i, r in enumerate(rows)))
        (tmp_path / f"{arm}.csv").write_text("id,passed,latency_s,cost,tokens,category\n" + "".join(
            f"{r['id']},{str(i > flip).lower()},{r['latency_s']},{r['cost']},{r['tokens']},{r['category']}\n"
            for i, r in enumerate(rows)))  # fmt: skip
        files.append(arm)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a row was read by the row path")

    monkeypatch.setattr(columnar, "checked_rows", refuse)  # the engine reads every size (any_size)
    for ext in ("jsonl", "csv"):
        done = run_here(["compare", str(tmp_path / f"b.{ext}"), str(tmp_path / f"a.{ext}"), "--format", "json"])
        assert done.returncode in (0, 2), done.stderr
        report = json.loads(done.stdout)
        assert report["regressions"] == [f"task-{i:03d}" for i in range(6)]
        assert report["candidate"]["cost_total"] == pytest.approx(0.4)


@pytest.mark.parametrize("slice_size", [None, 1, 7, 50])
@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_a_second_arm_with_the_same_ids_holds_the_first_arms_array(
    tmp_path: Path, ext: str, slice_size: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidate of a suite lists the baseline's ids: its columns hold the baseline's array
    (one million-id array, not two alive at once); ids in another order or other ids are its own.
    The ids are converted and compared by slices: the same at every slice size, a difference in
    the last slice included."""
    if slice_size is not None:
        from ablation.sources.readers import engine_columns

        monkeypatch.setattr(engine_columns, "_SLICE", slice_size)

    def write(name: str, ids: list[str]) -> Path:
        path = tmp_path / f"{name}.{ext}"
        if ext == "jsonl":
            path.write_text("".join(json.dumps({"id": t, "passed": True, "cost": 1.5}) + "\n" for t in ids))
        else:
            path.write_text("id,passed,cost\n" + "".join(f"{t},true,1.5\n" for t in ids))
        return path

    ids = [f"t{i}" for i in range(50)]
    first = load_result_columns(write("a", ids)).columns.task_id
    path = tmp_path / f"a.{ext}"
    read_here = engine.engine_columns(str(path), ReadOptions(), None, str(path))
    assert read_here is not None and read_here.columns.task_id.tolist() == ids  # not the row path's
    same = load_result_columns(write("b", ids), arm="candidate", ids_like=first)
    assert same.columns.task_id is first
    for name, other in (("c", ids[::-1]), ("d", [*ids[:-1], "t-other"]), ("e", ["t-other", *ids[1:]])):
        read = load_result_columns(write(name, other), arm="candidate", ids_like=first)
        assert read.columns.task_id is not first
        assert read.columns.task_id.tolist() == other
        same_columns(read, row_path(tmp_path / f"{name}.{ext}", ReadOptions(arm="candidate")))


# ------------------------------------------------------------------ CSV numbers by pyarrow's cast

_CELL = st.text(alphabet="0123456789+-.eE_xXpPinfatyINFATY ", max_size=9)
_ASCII_NUMBER = re.compile(CSV_NUMBER.pattern.replace(r"\d", "[0-9]"))  # the engine reads ASCII files


@settings(max_examples=400, deadline=None)
@given(st.one_of(_CELL, st.from_regex(_ASCII_NUMBER, fullmatch=True)))
def test_pyarrows_finite_numbers_are_the_row_paths_number_syntax(cell: str) -> None:
    """The engine reads a CSV number column with pyarrow's cast alone: a stripped cell it reads as
    a finite float must be one the row path's syntax accepts, and every such cell it must read
    (to the same float as Python's ``float``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cell = cell.strip(" \t")
    if not cell:
        return  # blank: absent on both paths, never cast
    try:
        value = pc.cast(pa.array([cell]), pa.float64())[0].as_py()
    except pa.ArrowInvalid:
        value = None
    syntax = CSV_NUMBER.fullmatch(cell) is not None
    if value is not None and math.isfinite(value):
        assert syntax, cell
    if syntax:
        assert value is not None and (value == float(cell) or not math.isfinite(float(cell))), cell


@pytest.mark.parametrize("cells", [
    ("nan", "1"), ("inf", "2"), ("Infinity", ""), ("-inf", "3"), ("1e999", "1"), ("+.5", "-3"),
    (".", "1"), ("1_000", "2"), ("", ""), ("x", "4"), ("5.", "1e-3"),
])  # fmt: skip
def test_csv_metric_and_cost_cells_read_as_the_row_path(tmp_path: Path, cells: tuple[str, str]) -> None:
    """A metric column (``steps``) or a result number (``cost``) holding non-finite words,
    overflowing numbers, blanks or text: the engine gives the row path's columns or declines,
    and what ``compare`` reads is the row path's results or its error."""
    for column in ("steps", "cost"):
        path = tmp_path / f"{column}.csv"
        path.write_text(f"id,passed,{column}\na,true,{cells[0]}\nb,false,{cells[1]}\n", encoding="ascii")
        fast = engine.engine_columns(str(path), ReadOptions(), None, str(path))
        if fast is not None:
            same_columns(fast, row_path(path, ReadOptions()))
        try:
            got: Any = load_result_columns(path)
            got = [got.result(i) for i in range(len(got.columns))]
        except InputError as exc:
            got = str(exc)
        assert got == outcome(path, ReadOptions())


@pytest.mark.parametrize("late", ["x", "nan", ""])
def test_a_csv_metric_with_a_late_text_cell_reads_as_the_row_path(tmp_path: Path, late: str) -> None:
    """Past the head the engine casts before matching (its first 64 cells are numbers): a text
    word, a NaN word or a blank cell further down is read as the row path reads it."""
    path = tmp_path / "r.csv"
    cells = [str(i / 4) for i in range(99)] + [late]
    path.write_text("id,passed,steps\n" + "".join(f"t{i:03d},true,{c}\n" for i, c in enumerate(cells)))
    fast = engine.engine_columns(str(path), ReadOptions(), None, str(path))
    assert fast is not None
    same_columns(fast, row_path(path, ReadOptions()))
    assert np.isnan(fast.columns.metrics["steps"][-1]) and fast.columns.metrics["steps"][98] == 24.5
