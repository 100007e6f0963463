"""A number in a result file is written in one syntax: ASCII digits, a point, an exponent.

:data:`~ablation.sources.readers.rows.NUMBER_TEXT` is that syntax (a CSV cell, or a JSON string
standing for a number). The result's own numbers (``cost``, ``latency_s``, ``tokens``, ``score``)
were read by Python's ``float``, which also takes ``1_000`` and digits of other scripts
(``١٢``, full-width ``１２``), and the pattern's ``\\d`` took those digits too: a file then meant
one thing to ablation and another to every other tool (DuckDB, pandas and pyarrow read no such
number), and the columnar engine (RE2, ASCII digits) declined what the row path took. Now such a
value of a result's own number is refused in one line naming the file, line and task id; in any
other CSV column it is text (no metric for that row), as ``n/a`` is; and as a verdict it is no
verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ablation.errors import InputError
from ablation.sources.result_files import load_results

ODD = ["1_000", "١٢", "１２"]


@pytest.mark.parametrize("cell", ODD)
def test_python_float_reads_them(cell: str) -> None:
    """The reference: the one tool that reads them as numbers."""
    assert float(cell) in (1000.0, 12.0)


@pytest.mark.parametrize("cell", ODD)
@pytest.mark.parametrize("column", ["cost", "latency_s", "tokens", "score"])
def test_a_results_own_number_is_refused_in_csv(tmp_path: Path, cell: str, column: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(f"id,passed,{column}\na,true,1\nb,false,{cell}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_results(path)
    assert str(caught.value) == (
        f"{path}:3: {column!r} is not a number in the files' syntax (digits, a point, an exponent): "
        f"{cell!r} (task id 'b')"
    )


@pytest.mark.parametrize("cell", ODD)
def test_a_json_string_for_a_number_is_refused(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(f'{{"id": "a", "passed": true, "cost": "{cell}"}}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.jsonl:1: 'cost' is not a number in the files' syntax"):
        load_results(path)


@pytest.mark.parametrize("cell", ODD)
def test_another_csv_column_holding_one_is_text(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(f"id,passed,steps\na,true,3\nb,false,{cell}\n", encoding="utf-8")
    a, b = load_results(path)
    assert (a.metrics, b.metrics) == ({"steps": 3.0}, {})


@pytest.mark.parametrize("cell", ["١", "１"])
def test_a_digit_of_another_script_is_no_verdict(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(f"id,passed\na,true\nb,{cell}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.csv:3: verdict 'passed' is not an unambiguous boolean"):
        load_results(path)


def test_plain_numbers_still_read(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,passed,cost,latency_s,steps\na,1,+1.5e-3, .5 ,-2\nb,0,0.,7,3E2\n")
    a, b = load_results(path)
    assert (a.cost, a.latency_s, a.metrics, b.cost, b.latency_s, b.metrics) == (
        0.0015, 0.5, {"steps": -2.0}, 0.0, 7.0, {"steps": 300.0})
