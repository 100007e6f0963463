"""Code that writes or reads a command line takes its flags from the option table.

The resume hint (:func:`ablation.cli.resume_hint.resume_command`) and the GitHub Action's command
(:mod:`ablation.cli.github_action`) build command lines; a flag renamed in
:data:`ablation.cli.option_table.OPTIONS` must change there too. The tests rename flags in the table
and check both follow, and check that neither module spells a flag as a string of its own.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

from ablation.cli import commands, github_action, option_table, resume_hint

RENAMED = {
    "store": ("--run-store", "--store"),
    "resume": ("--continue",),
    "candidate": ("--cand", "--candidate"),
    "reuse_baseline": ("--lend-baseline",),
    "baseline": ("--base",),
    "no_progress": ("--quiet-progress",),
    "format": ("--report-format",),
    "output": ("--out", "-o"),
}


@pytest.fixture
def renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The option table with the flags of :data:`RENAMED` (the first written, all recognised)."""
    table = tuple(
        dataclasses.replace(o, flags=RENAMED[o.name]) if o.name in RENAMED and o.flags else o
        for o in option_table.OPTIONS
    )
    monkeypatch.setattr(option_table, "OPTIONS", table)


@pytest.mark.usefixtures("renamed")
def test_the_resume_hint_writes_and_reads_the_tables_flags() -> None:
    argv = ["run", "suite.py", "--base", "a.py:b", "--cand", "a.py:c1", "--candidate=a.py:c2",
            "--store", "old.db", "--lend-baseline", "20260101-1", "--continue", "--seed", "3"]  # fmt: skip
    command = resume_hint.resume_command(argv, ["a.py:c1"], Path("runs.db"), "20261129-1")
    assert command == (
        "ablation run suite.py --base a.py:b --candidate=a.py:c2 --seed 3 "
        "--run-store runs.db --continue 20261129-1"
    )


@pytest.mark.usefixtures("renamed")
def test_the_actions_command_writes_and_reads_the_tables_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ABLATION_COMMAND", "run suite.py --base a.py:b --cand a.py:c")
    monkeypatch.setenv("ABLATION_STORE", str(tmp_path / "runs.db"))
    monkeypatch.setenv("ABLATION_REUSE_BASELINE", "true")
    seen: list[tuple[Path, str | None]] = []
    monkeypatch.setattr(github_action, "_reused_campaign", lambda s, b: seen.append((s, b)) or "c-1")
    args = github_action._command(tmp_path)
    assert args == [
        "run", "suite.py", "--base", "a.py:b", "--cand", "a.py:c",
        "--run-store", str(tmp_path / "runs.db"), "--quiet-progress", "--lend-baseline", "c-1",
        "--report-format", "json", "--out", str(tmp_path / "ablation-report.json"),
    ]  # fmt: skip
    assert seen == [(tmp_path / "runs.db", "a.py:b")]  # the baseline read by its renamed flag
    monkeypatch.setenv("ABLATION_COMMAND", "run suite.py --base a.py:b --lend-baseline=mine")
    assert "c-1" not in github_action._command(tmp_path)  # the user's own, by any spelling


@pytest.mark.parametrize("module", [commands, github_action, resume_hint])
def test_no_flag_is_spelled_by_hand(module: object) -> None:
    flags = {f for o in option_table.OPTIONS for f in o.flags}
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    spelled = sorted(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value in flags or re.fullmatch(r"--[a-z][a-z-]*=?", node.value))
    )
    assert not spelled, f"flags spelled by hand (use option_table.flags_of): {spelled}"
