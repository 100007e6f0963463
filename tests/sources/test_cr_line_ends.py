"""Line ends of a bare carriage return (``\\r``, CR-only): CSV reads them, JSON lines names them.

Python's :mod:`csv` module ends a line at ``\\r``, ``\\n`` or ``\\r\\n``, so a CSV file saved with
CR-only line ends reads as its ``\\n`` twin. JSON Lines (jsonlines.org) separates lines with
``\\n``, ``\\r\\n`` allowed: a bare ``\\r`` is JSON whitespace, so objects cut by it decode as one
line with "Extra data", an error that hides the cause. The refusal names the cause, on the line
where it is met, by the row and column reads alike; a JSON document over CR lines is still read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ablation.errors import InputError
from ablation.sources.result_files import load_result_columns, load_results
from tests.helpers.cli import run_here

ROWS = [{"id": "a", "passed": True}, {"id": "b", "passed": False, "cost": 1.5}, {"id": "c", "passed": True}]
CAUSE = "its lines end in a bare carriage return (CR-only line endings, \\r)"


def _both(path: Path) -> list[Any]:
    """What the row path and the column path read of ``path``: its ids, or the error."""
    out: list[Any] = []
    for load in (load_results, load_result_columns):
        try:
            read = load(path)
            out.append([r.task_id for r in read] if isinstance(read, list) else read.columns.task_id.tolist())
        except InputError as exc:
            out.append(str(exc))
    return out


@pytest.mark.parametrize(("ends", "line"), [("\r\r\r", 1), ("\n\r\n", 2)])
def test_json_lines_cut_by_a_bare_cr_name_the_cause(tmp_path: Path, ends: str, line: int) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes("".join(json.dumps(r) + end for r, end in zip(ROWS, ends, strict=True)).encode())
    assert all(m.startswith(f"{path}:{line}: {CAUSE}: JSON lines end in \\n or \\r\\n") for m in _both(path))


def test_csv_with_cr_line_ends_reads_as_its_newline_twin(tmp_path: Path) -> None:
    text = "id,passed,cost\n" + "".join(f"{r['id']},{str(r['passed']).lower()},{r.get('cost', '')}\n" for r in ROWS)
    twin, cr = tmp_path / "n.csv", tmp_path / "r.csv"
    twin.write_text(text)
    cr.write_bytes(text.replace("\n", "\r").encode())
    assert load_results(cr) == load_results(twin)
    assert _both(cr) == _both(twin) == [["a", "b", "c"]] * 2


def test_a_json_document_or_crlf_lines_are_read(tmp_path: Path) -> None:
    doc = tmp_path / "one.json"
    doc.write_bytes(b'{"id": "a",\r "passed": true\r}\r')  # \r is whitespace inside a document
    assert _both(doc) == [["a"]] * 2
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes("".join(json.dumps(r) + "\r\n" for r in ROWS).encode())
    assert _both(crlf) == [["a", "b", "c"]] * 2


def test_compare_refuses_cr_json_lines_in_one_line(tmp_path: Path) -> None:
    cr, ok = tmp_path / "cr.jsonl", tmp_path / "ok.jsonl"
    cr.write_bytes("".join(json.dumps(r) + "\r" for r in ROWS).encode())
    ok.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    proc = run_here(["compare", str(cr), str(ok)])
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"ablation: error: {cr}:1: {CAUSE}: JSON lines end in \\n or \\r\\n; "
                                        "convert the line ends (tr '\\r' '\\n')"]  # fmt: skip
