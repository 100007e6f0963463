"""A numeric ``compare --field`` shows long lists of ids capped with a count, as the report does.

The pass-rate report's Markdown and HTML show the first
:data:`~ablation.render._sections.TABLE_CAP` regressions and count the rest; a numeric
comparison wrote every regressed, improved and unpaired id on one line of every format (1.4 MB
of Markdown at 10^5 tasks). Each list now shows its first ``TABLE_CAP`` ids and a line naming how
many more there are and where the full list is; ``--format json`` keeps every id.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.render._sections import TABLE_CAP

N = 3 * TABLE_CAP


def _files(tmp_path: Path) -> tuple[Path, Path]:
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    ids = [f"task-{i:04d}" for i in range(2 * N)]
    # the first N tasks drop by 0.5, the next N rise by 0.5; 20 tasks in the baseline only
    base.write_text("".join(json.dumps({"id": t, "score": 0.5}) + "\n" for t in ids + [f"solo-{i}" for i in range(20)]))
    cand.write_text("".join(json.dumps({"id": t, "score": 0.0 if i < N else 1.0}) + "\n" for i, t in enumerate(ids)))
    return base, cand


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_lists_show_the_first_ids_and_count_the_rest(tmp_path: Path, fmt: str) -> None:
    base, cand = _files(tmp_path)
    done = run_here(["compare", str(base), str(cand), "--field", "score", "--format", fmt])
    text = done.stdout
    assert "task-0000" in text and f"task-{TABLE_CAP - 1:04d}" in text
    assert f"task-{TABLE_CAP:04d}" not in text  # the 51st regression
    assert f"task-{N + TABLE_CAP - 1:04d}" in text and f"task-{N + TABLE_CAP:04d}" not in text
    more = N - TABLE_CAP
    assert f"... and {more} more regressions ({N} in all; the full list is in --format json)" in text
    assert f"... and {more} more improvements ({N} in all; the full list is in --format json)" in text
    assert "baseline only solo-0" in text and "candidate only none" in text
    assert len(text) < 40_000


def test_json_lists_every_id(tmp_path: Path) -> None:
    base, cand = _files(tmp_path)
    doc = json.loads(run_here(["compare", str(base), str(cand), "--field", "score", "--format", "json"]).stdout)
    assert doc["regressions"] == [f"task-{i:04d}" for i in range(N)]
    assert doc["improvements"] == [f"task-{i:04d}" for i in range(N, 2 * N)]
    assert doc["only_baseline"] == [f"solo-{i}" for i in range(20)]
