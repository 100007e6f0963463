"""An id holding a lone surrogate escape (``"\\ud800x"``) reads the same by every path.

JSON may spell a lone surrogate (``\\ud800``), which Python decodes into a text that UTF-8 cannot
encode. The row path stores such an id escaped (:func:`~ablation.schema.safe_text`), so that a
report can be written; the columnar fast path must give the same id, or a file it reads and a
file the row path reads (one with another column) hold the "same" task under two ids that pair
with nothing, and ``compare --format json`` fails on the raw surrogate instead of writing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.cli import LAUNCH, REPO, cli_env

from ablation import load_results
from ablation.schema import safe_text
from ablation.sources.result_files import load_result_columns

LONE = "\ud800x"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # json.dumps escapes the surrogate
    return path


def _bare(path: Path) -> Path:
    """Plain verdict rows, key order varying (the one-``json.loads`` fast path)."""
    return _write(path, [{"id": LONE, "passed": True}, {"passed": False, "id": "b"}, {"id": "c", "passed": False}])


def _wide(path: Path) -> Path:
    """The same ids with a cost column (the row path)."""
    return _write(path, [{"id": i, "passed": i != LONE, "cost": 1.0} for i in (LONE, "b", "c")])


def test_the_fast_path_escapes_a_lone_surrogate_as_the_row_path_does(tmp_path: Path) -> None:
    path = _bare(tmp_path / "bare.jsonl")
    assert "\\ud800" in path.read_text()
    by_rows = [r.task_id for r in load_results(path)]
    assert by_rows == [safe_text(LONE), "b", "c"]
    assert load_result_columns(path).columns.task_id.tolist() == by_rows


def test_compare_pairs_a_surrogate_id_across_paths_and_writes_json(tmp_path: Path) -> None:
    before, after = _bare(tmp_path / "before.jsonl"), _wide(tmp_path / "after.jsonl")
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, "compare", str(before), str(after), "--format", "json"],
        cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    report = json.loads(done.stdout)
    assert (report["n_tasks"], report["n_paired"], report["excluded"]) == (3, 3, [])
    assert report["regressions"] == [safe_text(LONE)]
