"""``compare --field`` on CSV files: a cell that spells a number is that number, as in JSON lines.

CSV cells are text. A verdict cell that is not a verdict word but reads as a decimal number (the
syntax that makes a CSV cell a metric) counts for the numeric-mode decision exactly as the JSON
number of the same value does: ``1``/``0`` in any spelling stay verdicts, anything else makes the
field numeric, from whichever file holds it. The oracle is the same comparison of JSON-lines files
holding the same values as JSON numbers: its report must come out byte for byte, on the row path
and with the pyarrow engine forced on every file size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cli_shared import run_here

from ablation.sources.readers import engine

#: How a CSV cell may spell a value (the JSON lines hold the value as a number).
SPELLINGS: tuple[Callable[[float], str], ...] = (
    repr,
    lambda v: f"  {v!r}\t",
    lambda v: f"{v:.6e}",
    lambda v: f"+{v!r}" if v >= 0 else repr(v),
    lambda v: repr(v).replace("0.", ".", 1) if 0 < v < 1 else repr(v),
)


@pytest.fixture(params=["rows", "engine"])
def path_taken(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool] | None]:
    """``rows`` (``None``): files this small are read row by row; ``engine``: pyarrow reads every
    file it can vouch for, and the list collects whether each of its reads vouched."""
    if request.param == "rows":
        yield None
        return
    from ablation.sources.readers import engine_columns

    vouched: list[bool] = []
    monkeypatch.setattr(engine, "MIN_BYTES", 0)
    real = engine_columns.read_columns

    def read_columns(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        vouched.append(read is not None)
        return read

    monkeypatch.setattr(engine_columns, "read_columns", read_columns)
    yield vouched


def _values(seed: int, n: int = 40) -> list[tuple[str, int, float]]:
    """``(id, run, value)`` rows: values with three decimals, some exactly 0 or 1, some tasks with two runs."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for run in range(1 + (i % 4 == 0)):
            value = float(rng.choice([0.0, 1.0])) if i % 7 == 3 else round(float(rng.uniform(-0.5, 1.5)), 3)
            rows.append((f"t{i:02d}", run, value))
    return rows


def _write_pair(
    folder: Path, name: str, rows: list[tuple[str, int, float]], csv: bool,
    spell: Callable[[int, float], str] = lambda i, v: SPELLINGS[i % len(SPELLINGS)](v),
) -> None:
    """``folder/name`` as CSV (value ``i`` spelled ``spell(i, value)``) or as JSON lines."""
    folder.mkdir(exist_ok=True)
    if csv:
        lines = [f"{task},{run},{spell(i, v)},0.01" for i, (task, run, v) in enumerate(rows)]
        (folder / name).write_text("id,run,score,cost\n" + "\n".join(lines) + "\n")
    else:
        (folder / name).write_text("".join(
            json.dumps({"id": task, "run": run, "score": int(v) if v in (0, 1) else v, "cost": 0.01}) + "\n"
            for task, run, v in rows))  # fmt: skip


def repr_cell(i: int, v: float) -> str:
    return repr(v)


def _compare(folder: Path, *extra: str) -> tuple[int, str, str]:
    done = run_here(["compare", "before", "after", "--field", "score", "--run-field", "run", *extra], cwd=folder)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("kinds", [("csv", "csv"), ("jsonl", "csv"), ("csv", "jsonl")])
def test_csv_numbers_give_the_json_lines_report(tmp_path: Path, kinds: tuple[str, str], path_taken: list[bool] | None) -> None:
    before, after = _values(1), _values(2)
    for folder, csv in (("given", kinds), ("oracle", ("jsonl", "jsonl"))):
        _write_pair(tmp_path / folder, "before", before, csv[0] == "csv")
        _write_pair(tmp_path / folder, "after", after, csv[1] == "csv")
    for fmt in ("terminal", "json"):
        got, want = (_compare(tmp_path / f, "--format", fmt) for f in ("given", "oracle"))
        assert want[0] in (0, 2) and want[1].strip(), want[2]
        assert got == want
    assert json.loads(got[1])["n_pairs"] == 40
    assert path_taken is None or len(path_taken) >= 4  # pyarrow read each file first


def test_a_file_of_verdict_words_is_read_as_numbers_when_another_holds_numbers(
    tmp_path: Path, path_taken: list[bool] | None
) -> None:
    """Whatever the order, the file of numbers decides; the engine vouches for the verdict file
    (its cells are verdict words), which is then read again as numbers."""
    words = [(f"t{i:02d}", 0, float(i % 3 == 0)) for i in range(40)]
    numbers = [(task, 0, round(0.3 + i / 100, 3)) for i, (task, _, _) in enumerate(words)]

    def word(i: int, v: float) -> str:
        return ("1", "1.0")[i % 2] if v else ("0", "0.0")[i % 2]

    for first, second in ((words, numbers), (numbers, words)):
        for folder, csv in (("given", True), ("oracle", False)):
            for name, rows in (("before", first), ("after", second)):
                _write_pair(tmp_path / folder, name, rows, csv, word if rows is words else repr_cell)
        got, want = (_compare(tmp_path / f, "--format", "json") for f in ("given", "oracle"))
        assert want[0] in (0, 2) and got == want
        assert json.loads(got[1])["n_pairs"] == 40
    if path_taken is not None:
        assert True in path_taken  # the file of verdict words was read by pyarrow


def test_csv_cells_spelling_one_and_zero_are_verdicts(tmp_path: Path, path_taken: list[bool] | None) -> None:
    """``1.00``, ``+1``, ``1e0``, `` 0.00 ``, ``-0``: the verdicts JSON ``1.00``, ``1``, ``1e0``,
    ``0.00``, ``-0`` are (a pass/fail comparison), not numbers."""
    cells = ("1.00", "+1", "1e0", " 0.00 ", "-0", "0e5", ".0", "1.", "true", "0")
    numbers = ("1.00", "1", "1e0", "0.00", "-0", "0e5", "0.0", "1.0", "true", "0")
    for folder, spelled in (("given", cells), ("oracle", numbers)):
        (tmp_path / folder).mkdir()
        csv = folder == "given"
        for name, shift in (("before", 0), ("after", 3)):
            rows = [(f"t{i:02d}", spelled[(i + shift) % len(spelled)]) for i in range(30)]
            text = ("id,score\n" + "".join(f"{t},{c}\n" for t, c in rows) if csv
                    else "".join(f'{{"id": "{t}", "score": {c}}}\n' for t, c in rows))  # fmt: skip
            (tmp_path / folder / name).write_text(text)
    got, want = (run_here(["compare", "before", "after", "--field", "score", "--format", "json"], cwd=tmp_path / f)
                 for f in ("given", "oracle"))  # fmt: skip
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    report = json.loads(got.stdout)  # a pass/fail comparison: half of the ten spellings pass
    assert "mcnemar" in report and report["baseline"]["pass_rate"] == report["candidate"]["pass_rate"] == 0.5


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        ("abc", "verdict 'score' is not a number: 'abc'"),
        ("true", "verdict 'score' is not a number: 'true'"),
        ("nan", "verdict 'score' is not a number: 'nan'"),
        ("", "verdict 'score' is not a number: ''"),
        ("1e999", "quality score 'score' is not a finite number"),
    ],
)
def test_a_bad_cell_in_numeric_mode_names_file_line_and_task(tmp_path: Path, cell: str, problem: str) -> None:
    (tmp_path / "before.csv").write_text("id,score\nt0,0.5\nt1,0.25\nt2,0.75\n")
    (tmp_path / "after.csv").write_text(f"id,score\nt0,0.5\nt1,{cell}\nt2,0.75\n")
    done = run_here(["compare", "before.csv", "after.csv", "--field", "score"], cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "before.csv:2: verdict 'score' is a number, not a verdict: '0.5'" in line
    assert f"after.csv:3: {problem}" in line and line.endswith("(task id 't1')")


def test_an_integer_past_the_float_range_is_refused_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "before.jsonl").write_text('{"id": "t0", "score": 0.5}\n{"id": "t1", "score": 0.25}\n')
    (tmp_path / "after.jsonl").write_text('{"id": "t0", "score": 0.5}\n{"id": "t1", "score": 1' + "0" * 400 + "}\n")
    done = run_here(["compare", "before.jsonl", "after.jsonl", "--field", "score"], cwd=tmp_path)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "after.jsonl:2: quality score 'score' is not a finite number" in line
    assert line.endswith("(task id 't1')")


def test_a_verdict_cell_is_a_number_in_the_syntax_of_a_csv_metric() -> None:
    """The verdict's number syntax is the metric columns' one (one pattern)."""
    from ablation.sources.readers.generic import CSV_NUMBER
    from ablation.sources.readers.rows import NUMBER_TEXT, text_number

    assert CSV_NUMBER is NUMBER_TEXT
    for cell in (" 0.4 ", "-3", "1e-3", ".5", "7.", "+2E+2"):
        assert text_number(cell) == float(cell)
    for cell in ("nan", "inf", "1_000", "", " ", "0x10", "1,5", "--1"):
        assert text_number(cell) is None
