"""``ablation plan`` plans at the settings ``run`` and ``compare`` judge at: ``alpha`` (and, with
``--sequential``, ``margin``) from ``[tool.ablation]`` when no flag gives them, a flag winning.

The reference is ``compare``'s own report of the same two result files, in the same project:
its "smallest regression the gate could detect" must be the MDE ``plan --results`` prints.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.cli import run_here

N, REGRESSIONS, IMPROVEMENTS = 120, 5, 7


def _project(tmp_path: Path, table: str) -> list[str]:
    """A project whose ``pyproject.toml`` holds ``table`` and two result files of ``N`` tasks."""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n[tool.ablation]\n{table}\n')
    files = []
    for arm in ("before", "after"):
        rows = []
        for i in range(N):
            flip = i < REGRESSIONS if arm == "after" else REGRESSIONS <= i < REGRESSIONS + IMPROVEMENTS
            rows.append(json.dumps({"id": f"t{i}", "passed": not flip}) + "\n")
        (tmp_path / f"{arm}.jsonl").write_text("".join(rows))
        files.append(f"{arm}.jsonl")
    return files


def _report_mde(tmp_path: Path, files: list[str], *flags: str) -> float:
    done = run_here(["compare", *files, "--format", "json", *flags], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    mde = json.loads(done.stdout)["minimum_detectable_effect"]
    assert isinstance(mde, float)
    return mde


def _plan_mde(tmp_path: Path, files: list[str], *flags: str) -> float:
    done = run_here(["plan", "--results", *files, *flags], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = re.search(r"with the exact McNemar test the report runs: ([0-9.]+) \(", done.stdout)
    assert found, done.stdout
    return float(found.group(1))


def test_plan_takes_alpha_from_the_file_as_compare_does_and_a_flag_wins(tmp_path: Path) -> None:
    files = _project(tmp_path, "alpha = 0.01")
    from_file = _report_mde(tmp_path, files)
    assert _plan_mde(tmp_path, files) == pytest.approx(from_file, abs=5e-5)  # printed to 4 decimals
    flagged = _report_mde(tmp_path, files, "--alpha", "0.1")
    assert flagged != from_file  # the case can tell the two alphas apart
    assert _plan_mde(tmp_path, files, "--alpha", "0.1") == pytest.approx(flagged, abs=5e-5)


def test_plan_takes_the_margin_from_the_file_and_names_a_bad_value_there(tmp_path: Path) -> None:
    _project(tmp_path, "margin = 0.04")
    plan = ["plan", "--discordance", "0.2", "--uplift", "0.05", "--sequential", "--simulations", "20"]
    done = run_here(plan, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "margin 0.04)" in done.stdout
    done = run_here([*plan, "--margin", "0.03"], cwd=tmp_path)
    assert done.returncode == 0 and "margin 0.03)" in done.stdout, done.stderr

    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nalpha = 0.7\n")
    done = run_here(plan, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "pyproject.toml [tool.ablation] alpha" in done.stderr
