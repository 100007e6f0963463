"""A ``[tool.ablation]`` key given in both its spellings (``min-completed`` and ``min_completed``)
is one line naming the file, the key and both spellings, exit 1: neither value silently wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here


def _files(tmp_path: Path) -> list[str]:
    for name in ("before.jsonl", "after.jsonl"):
        (tmp_path / name).write_text("".join(json.dumps({"id": f"t{i}", "passed": True}) + "\n" for i in range(3)))
    return ["before.jsonl", "after.jsonl"]


@pytest.mark.parametrize("order", [("min-completed", "min_completed"), ("min_completed", "min-completed")])
def test_both_spellings_of_one_key_are_refused(tmp_path: Path, order: tuple[str, str]) -> None:
    first, second = order
    (tmp_path / "pyproject.toml").write_text(f"[tool.ablation]\n{first} = 0.9\n{second} = 0.5\n")
    done = run_here(["compare", *_files(tmp_path), "--format", "json"], cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert f"{tmp_path / 'pyproject.toml'} [tool.ablation] min_completed:" in line
    assert f"{first!r} and {second!r}" in line


@pytest.mark.parametrize("spelling", ["min-completed", "min_completed"])
def test_either_spelling_alone_sets_the_key(tmp_path: Path, spelling: str) -> None:
    from ablation.cli.settings import load_tool_settings

    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.ablation]\n{spelling} = 0.5\n")
    assert load_tool_settings(path) == {"min_completed": 0.5}
