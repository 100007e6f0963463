"""Reader edges: a very wide CSV header, and ``-v``'s ``read as`` line for a file pyarrow reads.

A CSV header of tens of thousands of columns is accepted or refused exactly as a narrow one
(repeated names named, sorted), and checking it compares each name with a bounded number of
others, not with every other column. With ``--verbose``, a file the pyarrow engine reads logs the
same ``FILE: read as KIND`` line as a file read row by row.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.errors import InputError
from ablation.sources.readers import engine, read_results
from ablation.sources.readers.generic import _check_header
from ablation.sources.readers.rows import ReadOptions

WIDE = 20_000


def _wide_csv(path: Path, names: list[str]) -> None:
    """``path``: a header ``id,passed,NAMES`` and one row ``t0,true`` with every other cell empty."""
    path.write_text(",".join(["id", "passed", *names]) + "\n" + "t0,true" + "," * len(names) + "\n")


def _repeated(names: list[str]) -> list[str]:
    """The names that occur more than once, sorted (the oracle: sort, then compare neighbours)."""
    ordered = sorted(names)
    return sorted({a for a, b in itertools.pairwise(ordered) if a == b})


def test_a_wide_header_of_distinct_names_is_read(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    _wide_csv(path, [f"c{i}" for i in range(WIDE)])
    (result,) = read_results(str(path), ReadOptions())
    assert (result.task_id, result.run, result.passed, result.metrics) == ("t0", 0, True, {})


def test_a_wide_header_names_its_repeated_columns(tmp_path: Path) -> None:
    names = [f"c{i}" for i in range(WIDE)]
    names[7], names[WIDE - 1], names[500], names[12_345] = "c3", "c3", "c499", "passed"
    path = tmp_path / "wide.csv"
    _wide_csv(path, names)
    expected = _repeated(["id", "passed", *names])
    assert expected == ["c3", "c499", "passed"]
    with pytest.raises(InputError) as caught:
        read_results(str(path), ReadOptions())
    assert str(caught.value) == f"{path}:1: the header repeats columns {expected}"


class _Name(str):
    """A column name that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Name.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@pytest.mark.parametrize("repeat", [False, True])
def test_checking_a_header_compares_each_name_a_bounded_number_of_times(repeat: bool) -> None:
    n = 1_000
    header = [_Name(f"c{i}") for i in range(n)] + [_Name("id"), _Name("passed")]
    if repeat:
        header[10] = _Name("c900")  # an equal name, another object: compared when met
    _Name.compared = 0
    if repeat:
        with pytest.raises(InputError, match=re.escape("the header repeats columns ['c900']")):
            _check_header(header, "h.csv", 1, ("id", "passed"))
    else:
        _check_header(header, "h.csv", 1, ("id", "passed"))
    # the required-column checks compare up to 2 * n times; pairwise counting would be n * n
    assert _Name.compared <= 4 * n


def _stderr_reads(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": read as " in line]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_verbose_names_a_file_the_engine_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    pytest.importorskip("pyarrow")  # the engine is optional
    monkeypatch.setattr(engine, "MIN_BYTES", 0)
    rows = [(f"t{i}", i % 3 != 0, i / 10) for i in range(8)]
    path = tmp_path / f"r.{kind}"
    if kind == "csv":
        path.write_text("id,passed,score\n" + "".join(f"{t},{str(p).lower()},{s}\n" for t, p, s in rows))
    else:
        path.write_text("".join(json.dumps({"id": t, "passed": p, "score": s}) + "\n" for t, p, s in rows))
    proc = run_here(["compare", path.name, path.name, "-v", "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    prefix = f"ablation: DEBUG: ablation.sources.readers: {path.name}: read as {kind} by pyarrow ("
    reads = _stderr_reads(proc.stderr)
    assert len(reads) == 2 and all(line.startswith(prefix) for line in reads), proc.stderr
    assert [("arm='baseline'" in line, "arm='candidate'" in line) for line in reads] == [
        (True, False), (False, True)
    ]


def test_verbose_names_a_file_read_row_by_row_once(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,passed\nt0,true\nt1,false\n")
    proc = run_here(["compare", path.name, path.name, "-v", "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    reads = _stderr_reads(proc.stderr)
    assert len(reads) == 2 and all(": r.csv: read as csv (ReadOptions(" in line for line in reads)
