"""A ``--quality`` spec that cannot be loaded is one line naming where it was set (the flag, or
``pyproject.toml [tool.ablation] quality``) and calling it a quality scorer, with exit 1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.cli_shared import run_here

ROOT = Path(__file__).resolve().parents[2]
AGENT = f"{ROOT / 'agents' / 'arithmetic.py'}:baseline"
SUITE = str(ROOT / "tasks" / "arithmetic.py")
NOT_A_SPEC = (
    "not a quality scorer: 'bogus'; expected a built-in (code_quality, rubric), "
    "'path/to/file.py:NAME' or 'pkg.mod:NAME'"
)
NO_FILE = "cannot load the quality scorer 'nosuch.py:x': nosuch.py: no such file"


def _run(cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``ablation run`` from ``cwd`` (its pyproject.toml is the one read), in this process."""
    return run_here(["run", SUITE, "--baseline", AGENT, "--candidate", AGENT, "--no-store", *extra], cwd=cwd)


@pytest.mark.parametrize(("spec", "problem"), [("bogus", NOT_A_SPEC), ("nosuch.py:x", NO_FILE)])
def test_bad_quality_flag_names_the_flag(tmp_path: Path, spec: str, problem: str) -> None:
    done = _run(tmp_path, "--quality", spec)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"ablation: error: argument --quality: {problem}"]


@pytest.mark.parametrize(("spec", "problem"), [("bogus", NOT_A_SPEC), ("nosuch.py:x", NO_FILE)])
def test_bad_quality_key_names_the_file_and_key(tmp_path: Path, spec: str, problem: str) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[tool.ablation]\nquality = ["{spec}"]\n')
    done = _run(tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("ablation: error: ")
    assert lines[0].endswith(f"pyproject.toml [tool.ablation] quality: {problem}")
