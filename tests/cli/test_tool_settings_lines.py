"""A bad ``[tool.ablation]`` value (wrong type, out of range) or an unknown key is one line naming
the file, the key and the line it is written on, exit 1, however the key is written (in the
table, dotted under ``[tool]`` or at the top, quoted, dashed, or as a table of its own).

The expected line is found in the fixture's own text: the line that holds the marked key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

HEAD = '[project]\nname = "demo"\n\n[tool.ablation]\nseed = 3\n'

CASES = [
    (HEAD + "alpha = 0.7  # MARK\n", "alpha"),  # out of range
    (HEAD + 'runs = "3"  # MARK\n', "runs"),  # wrong type
    (HEAD + '"min-completed" = true  # MARK\n', "min_completed"),  # quoted, dashed
    ('[project]\nname = "demo"\n\n[tool]\nablation.margin = 2  # MARK\n', "margin"),
    ('tool.ablation.resamples = 5  # MARK\n[project]\nname = "demo"\n', "resamples"),
    (HEAD + '\n[tool.ablation.prices."gpt-4o"]  # MARK\ninput_per_mtok = -1\noutput_per_mtok = 1\n',
     "prices.gpt-4o.input_per_mtok"),
    (HEAD + "no-such-key = 1  # MARK\n", "no_such_key"),  # unknown
    (HEAD + "labels = { team = 5 }  # MARK\n", "labels.team"),  # a table's entry of the wrong type
    (HEAD + "metric_margins = { cost = 0.01, tokens = -5 }  # MARK\n", "metric_margins.tokens"),
    (HEAD + '[tool.ablation.prices."gpt-4o"]  # MARK\ninput_per_mtok = "1"\noutput_per_mtok = 1\n',
     "prices.gpt-4o.input_per_mtok"),
]


@pytest.mark.parametrize(("text", "key"), CASES)
def test_a_bad_key_names_its_file_and_line(tmp_path: Path, text: str, key: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    for name in ("before.jsonl", "after.jsonl"):
        (tmp_path / name).write_text(json.dumps({"id": "t0", "passed": True}) + "\n")
    done = run_here(["compare", "before.jsonl", "after.jsonl"], cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    marked = next(i for i, written in enumerate(text.splitlines(), 1) if "# MARK" in written)
    assert f"{tmp_path / 'pyproject.toml'} [tool.ablation] {key}:" in line or f"{key} (line" in line
    assert f"(line {marked})" in line
