"""Two damaged inputs refused in one line, by every path that reads a result file.

- A task id of only whitespace (``"   "``, ``"\\t"``, a no-break space) names no task: a blank
  CSV cell is refused as no id, and a JSON id of only whitespace is refused the same way, by the
  row path, the verdict-lines fast paths (:mod:`~ablation.sources.readers.plain_lines`, one
  ``json.loads`` of the lines), the pyarrow engine, and the tool readers (an Inspect sample id).
- A NUL character in a CSV file (a block a crash left unwritten, a binary file) is refused
  naming its line; Python's :mod:`csv` module would read it into a cell, and an id holding it
  then pairs with nothing.

Each case goes through :func:`ablation.load_results`, :func:`ablation.sources.result_files.load_result_columns`
(the path ``compare`` takes, with the engine's size threshold lowered so that pyarrow reads it)
and the ``ablation compare`` command (run in this process), which must exit 1 with one line on
stderr naming the file and the line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.cli import REPO, run_here

from ablation import load_results
from ablation.errors import InputError
from ablation.sources.readers import engine
from ablation.sources.result_files import load_result_columns

TOOLS = REPO / "tests" / "data" / "tools"
BLANKS = ["   ", "\t", "\u00a0", " \u3000 "]
#: The line of the damaged row in every file below.
BAD_LINE = 3


def _ids(n: int = 6) -> list[str]:
    return [f"t{i}" for i in range(n)]


def _lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _good(tmp_path: Path) -> Path:
    return _lines(tmp_path / "good.jsonl", [{"id": t, "passed": i % 2 == 0} for i, t in enumerate(_ids())])


def _bare(path: Path, blank: str) -> Path:
    """Verdict lines of one layout (the layout fast path), the third id blank."""
    rows = [{"id": t, "passed": True} for t in _ids()]
    rows[BAD_LINE - 1]["id"] = blank
    return _lines(path, rows)


def _reordered(path: Path, blank: str) -> Path:
    """Verdict lines whose key order differs between lines (the one-``json.loads`` fast path)."""
    rows = [{"id": t, "passed": True} if i % 2 else {"passed": False, "id": t} for i, t in enumerate(_ids())]
    rows[BAD_LINE - 1]["id"] = blank
    return _lines(path, rows)


def _wide(path: Path, blank: str) -> Path:
    """Rows with a column beyond the id and verdict (the row path, or pyarrow past its threshold)."""
    rows = [{"id": t, "passed": True, "cost": 0.5} for t in _ids()]
    rows[BAD_LINE - 1]["id"] = blank
    return _lines(path, rows)


SHAPES = {"bare": _bare, "reordered": _reordered, "wide": _wide}


def _compare(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_here(["compare", *map(str, args), "--quiet"])


@pytest.mark.parametrize("blank", BLANKS, ids=repr)
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("pyarrow", [False, True], ids=["rows", "engine"])
def test_an_id_of_only_whitespace_is_refused_by_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, blank: str, pyarrow: bool
) -> None:
    path = SHAPES[shape](tmp_path / f"{shape}.jsonl", blank)
    monkeypatch.setattr(engine, "MIN_BYTES", 0 if pyarrow else 1 << 60)
    for read in (load_results, load_result_columns):
        with pytest.raises(InputError) as caught:
            read(path)
        message = str(caught.value)
        assert message.startswith(f"{path}:{BAD_LINE}: 'id' (the task id) is only whitespace"), message
        assert "\n" not in message


@pytest.mark.parametrize("blank", BLANKS[:2], ids=repr)
def test_compare_refuses_an_id_of_only_whitespace_in_one_line(tmp_path: Path, blank: str) -> None:
    good, bad = _good(tmp_path), _bare(tmp_path / "bad.jsonl", blank)
    for args in ((good, bad), (bad, good)):
        done = _compare(*args)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{bad}:{BAD_LINE}:" in lines[0] and "Traceback" not in done.stderr, lines


def test_an_inspect_sample_id_of_only_whitespace_is_refused(tmp_path: Path) -> None:
    log = json.loads((TOOLS / "inspect_candidate.json").read_text())
    log["samples"][1]["id"] = "  "
    path = tmp_path / "inspect.json"
    path.write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"samples\[1\]: 'id' \(the task id\) is only whitespace"):
        load_results(path)


def test_an_id_with_text_around_spaces_is_still_read(tmp_path: Path) -> None:
    """Only an id of nothing but whitespace is refused: ``"a b"`` and ``" a"`` are ids (JSON keeps
    what the file says)."""
    path = _lines(tmp_path / "ok.jsonl", [{"id": "a b", "passed": True}, {"id": " a", "passed": False}])
    assert [r.task_id for r in load_results(path)] == ["a b", " a"]


def _csv_with_nul(path: Path, *, crlf: bool = False) -> Path:
    rows = ["id,passed,cost"] + [f"{t},true,0.5" for t in _ids()]
    rows[BAD_LINE - 1] = "t\x001,true,0.5"  # the id of the file's third line
    path.write_bytes(("\r\n" if crlf else "\n").join(rows).encode() + b"\n")
    return path


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("pyarrow", [False, True], ids=["rows", "engine"])
def test_a_nul_character_in_csv_is_refused_naming_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crlf: bool, pyarrow: bool
) -> None:
    path = _csv_with_nul(tmp_path / "nul.csv", crlf=crlf)
    monkeypatch.setattr(engine, "MIN_BYTES", 0 if pyarrow else 1 << 60)
    for read in (load_results, load_result_columns):
        with pytest.raises(InputError, match=rf"^{path}:{BAD_LINE}: holds a NUL character"):
            read(path)


def test_compare_refuses_a_csv_with_a_nul_character_in_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.csv"
    good.write_text("id,passed\n" + "".join(f"{t},true\n" for t in _ids()))
    bad = _csv_with_nul(tmp_path / "bad.csv")
    for args in ((good, bad), (bad, good)):
        done = _compare(*args)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{bad}:{BAD_LINE}: holds a NUL character" in lines[0], lines
