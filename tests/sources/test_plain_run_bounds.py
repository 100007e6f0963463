"""Plain verdict JSON lines with a run column: the fast path refuses what the row path refuses.

``TaskResult.run`` is below :data:`~ablation.schema.RUN_LIMIT` (2**31). The columnar fast path
for plain verdict rows (:mod:`~ablation.sources.readers.columnar`) reads the runs itself; a run
past that bound, or past a 64-bit integer, must give the row path's one-line error naming the
file, the line and the task id, as :func:`ablation.load_results` gives it, and ``ablation compare``
must exit 1 with that line, never accept the file nor fail without naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation import load_results
from ablation.errors import InputError
from ablation.schema import RUN_LIMIT
from ablation.sources.result_files import load_result_columns

IDS = [f"t{i}" for i in range(4)]
BAD_LINE = 4


def _runs(path: Path, bad: int | None = None) -> Path:
    """Two runs of each id; the row of line :data:`BAD_LINE` holds run ``bad`` when given."""
    rows = [{"id": t, "passed": (k + i) % 2 == 0, "r": k} for i, t in enumerate(IDS) for k in (0, 1)]
    if bad is not None:
        rows[BAD_LINE - 1]["r"] = bad
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("run", [RUN_LIMIT, 2**40, 2**63, 10**20], ids=str)
def test_a_run_past_the_bound_is_refused_by_the_fast_path_as_by_the_row_path(tmp_path: Path, run: int) -> None:
    path = _runs(tmp_path / "runs.jsonl", run)
    with pytest.raises(InputError) as by_rows:
        load_results(path, run_field="r")
    with pytest.raises(InputError) as by_columns:
        load_result_columns(path, run_field="r")
    assert str(by_columns.value) == str(by_rows.value)
    assert str(by_rows.value).startswith(f"{path}:{BAD_LINE}: the run must be an integer"), by_rows.value
    assert "(task id 't1')" in str(by_rows.value)


def test_the_largest_run_is_read_by_both_paths(tmp_path: Path) -> None:
    path = _runs(tmp_path / "runs.jsonl", RUN_LIMIT - 1)
    rows = [r.run for r in load_results(path, run_field="r")]
    assert rows[BAD_LINE - 1] == RUN_LIMIT - 1
    assert load_result_columns(path, run_field="r").columns.run.tolist() == rows


@pytest.mark.parametrize("run", [2**40, 10**20], ids=str)
def test_compare_refuses_a_run_past_the_bound_in_one_line(tmp_path: Path, run: int) -> None:
    good, bad = _runs(tmp_path / "good.jsonl"), _runs(tmp_path / "bad.jsonl", run)
    for args in ((good, bad), (bad, good)):
        done = run_here(["compare", *map(str, args), "--run-field", "r", "--quiet"])
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1, done.stderr
        assert len(lines) == 1 and f"{bad}:{BAD_LINE}: the run must be an integer" in lines[0], lines
