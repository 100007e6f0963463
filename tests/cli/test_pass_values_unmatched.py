"""``compare --pass-values`` that no verdict of either file matches is bad input, not a PASS.

With such values every trial of both files is a fail, and the comparison said the arms agree
(exit 0). Now it is one line, exit 1, naming the values, both files, the field and the distinct
verdict texts seen, as ``--pass-values`` compares them (JSON ``true`` is the text ``true``). The
line is the same whichever path reads the files: the pyarrow engine (forced on every size here,
as in test_numeric_csv.py), the row path (engine off), and the bare JSON-lines verdict path. A
value that matches in one file only, or beside a value that matches, is not an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_shared import run_here

from ablation.sources.readers import engine


def _jsonl(path: Path, verdicts: list[Any], **extra: Any) -> Path:
    rows = [{"id": f"t{i:03d}", "passed": v, **extra} for i, v in enumerate(verdicts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _csv(path: Path, verdicts: list[str]) -> Path:
    lines = ["id,passed,cost", *(f"t{i:03d},{v},0.5" for i, v in enumerate(verdicts))]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def _engine_reads(monkeypatch: pytest.MonkeyPatch, on: bool) -> list[str]:
    """Force the engine on every file (``on``) or off; the names of the files it read."""
    monkeypatch.setattr(engine, "MIN_BYTES", 0 if on else 1 << 60)
    read: list[str] = []
    original: Callable[..., Any] = engine.engine_columns

    def spy(source: str, options: Any, format: Any, display: str, ids_like: Any = None) -> Any:
        out = original(source, options, format, display, ids_like)
        if out is not None:
            read.append(display)
        return out

    monkeypatch.setattr(engine, "engine_columns", spy)
    return read


def _compare(before: Path, after: Path, values: str) -> tuple[int, str]:
    proc = run_here(["compare", str(before), str(after), "--pass-values", values, "-q"])
    return proc.returncode, proc.stderr


BOOLS_A = [True, False, True, True, False, False, True, False]
BOOLS_B = [True, True, False, True, False, True, True, False]


@pytest.mark.parametrize("on", [True, False], ids=["engine", "rows"])
def test_json_booleans_with_a_capitalised_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    read = _engine_reads(monkeypatch, on)
    a = _jsonl(tmp_path / "a.jsonl", BOOLS_A, cost=0.25)
    b = _jsonl(tmp_path / "b.jsonl", BOOLS_B, cost=0.5)
    code, err = _compare(a, b, "True")
    assert read == ([str(a), str(b)] if on else [])
    assert code == 1
    assert err.count("\n") == 1
    assert err == (
        f"ablation: error: --pass-values True: no verdict of {a} or {b} is one of these, so every "
        "trial would count as a fail (their 'passed' values: false, true)\n"
    )
    assert _compare(a, b, "true")[0] != 1  # the JSON spelling matches: compared as usual


@pytest.mark.parametrize("on", [True, False], ids=["engine", "rows"])
def test_json_integers_name_their_digits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    read = _engine_reads(monkeypatch, on)
    a = _jsonl(tmp_path / "a.jsonl", [int(v) for v in BOOLS_A], cost=0.25)
    b = _jsonl(tmp_path / "b.jsonl", [1] * len(BOOLS_B), cost=0.5)
    code, err = _compare(a, b, "yes,pass")
    assert read == ([str(a), str(b)] if on else [])
    assert code == 1
    assert err.endswith("is one of these, so every trial would count as a fail (their 'passed' values: 0, 1)\n")
    assert err.startswith("ablation: error: --pass-values pass,yes: ")
    assert _compare(a, b, "1")[0] != 1


@pytest.mark.parametrize("on", [True, False], ids=["engine", "rows"])
def test_csv_cells_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    read = _engine_reads(monkeypatch, on)
    a = _csv(tmp_path / "a.csv", ["PASS", "FAIL", " PASS ", "FAIL"])
    b = _csv(tmp_path / "b.csv", ["FAIL", "FAIL", "PASS", "ERROR"])
    code, err = _compare(a, b, "pass")
    assert read == ([str(a), str(b)] if on else [])
    assert code == 1
    assert err == (
        f"ablation: error: --pass-values pass: no verdict of {a} or {b} is one of these, so every "
        "trial would count as a fail (their 'passed' values: ERROR, FAIL, PASS)\n"
    )
    assert _compare(a, b, "PASS")[0] != 1


def test_many_distinct_values_are_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    messages = []
    for on in (True, False):
        _engine_reads(monkeypatch, on)
        a = _csv(tmp_path / "a.csv", [f"v{i}" for i in range(9)])
        b = _csv(tmp_path / "b.csv", [f"v{i}" for i in range(4, 13)])
        code, err = _compare(a, b, "x")
        assert code == 1
        messages.append(err)
    assert messages[0] == messages[1]
    assert messages[0].endswith("(their 'passed' values: v0, v1, v10, v11, v12, v2, ... (13 distinct))\n")


def test_bare_verdict_lines(tmp_path: Path) -> None:
    """Rows of only the id and a boolean take the bare-lines path, which notes no texts."""
    a = _jsonl(tmp_path / "a.jsonl", [False] * 5)
    b = _jsonl(tmp_path / "b.jsonl", [False, True, False, False, False])
    code, err = _compare(a, b, "True")
    assert code == 1
    assert err.endswith("(their 'passed' values: false, true)\n")
    code, err = _compare(a, a, "yes")
    assert code == 1
    assert err.endswith("(their 'passed' values: false)\n")
    assert _compare(a, b, "true")[0] != 1


@pytest.mark.parametrize("on", [True, False], ids=["engine", "rows"])
def test_a_value_matching_in_one_file_or_beside_another_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on: bool
) -> None:
    _engine_reads(monkeypatch, on)
    for suffix, write in (("jsonl", lambda p, v: _jsonl(p, v, cost=0.5)), ("csv", _csv)):
        a = write(tmp_path / f"a.{suffix}", ["C", "I", "C", "I", "C", "C"])
        b = write(tmp_path / f"b.{suffix}", ["I"] * 6)  # the candidate fails every task: real data
        for before, after, values in ((a, b, "C"), (b, a, "C"), (a, b, "C,P")):  # ("P": no partial answer)
            code, err = _compare(before, after, values)
            assert code in (0, 2), err
            assert "error" not in err
        code, err = _compare(b, b, "C")  # both fail everything: C matches nothing
        assert code == 1
        assert err.endswith("(their 'passed' values: I)\n")
