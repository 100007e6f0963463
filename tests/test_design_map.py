"""DESIGN.md section 4 lists every module of ``ablation/`` and nothing else.

The module map is the fenced block after ``### Module map``: a line ``ablation/FOLDER/ ...`` at
column 0 opens a folder (its text describes the folder's ``__init__.py``), and each indented line
whose first word ends in ``.py`` names one module of that folder. The test compares that list with
the file tree both ways, so a new, moved or removed module fails until the map says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "DESIGN.md"


def map_block(text: str) -> str:
    """The fenced block that follows the ``### Module map`` heading of section 4."""
    section = text[text.index("## 4. Architecture") : text.index("## 5. ")]
    after = section[section.index("### Module map") :]
    match = re.search(r"^```\n(.*?)^```", after, re.S | re.M)
    assert match, "no fenced block after '### Module map'"
    return match.group(1)


def listed_modules(block: str) -> tuple[list[str], set[str]]:
    """``(modules, folders)`` the map names: module paths as written, folders with a slash."""
    modules: list[str] = []
    folders: set[str] = set()
    folder = None
    for line in block.splitlines():
        if not line.strip():
            continue
        word = line.split()[0]
        if not line[0].isspace():
            assert word.endswith("/"), f"a folder line must name a folder: {line!r}"
            folder = word
            folders.add(folder)
        elif word.endswith(".py"):
            assert folder is not None, f"module before any folder: {line!r}"
            modules.append(folder + word)
        else:
            raise AssertionError(f"unreadable line in the module map: {line!r}")
    return modules, folders


def tree_modules() -> tuple[set[str], set[str]]:
    """``(modules, folders)`` of the package: every ``.py`` but the ``__init__.py`` files."""
    files = sorted((ROOT / "ablation").rglob("*.py"))
    rel = [p.relative_to(ROOT).as_posix() for p in files]
    folders = {r.rsplit("/", 1)[0] + "/" for r in rel}
    return {r for r in rel if not r.endswith("/__init__.py")}, folders


def map_problems(text: str) -> list[str]:
    """Every way the map of ``text`` (a DESIGN.md) disagrees with the file tree."""
    modules, folders = listed_modules(map_block(text))
    on_disk, disk_folders = tree_modules()
    problems = []
    if twice := sorted({m for m in modules if modules.count(m) > 1}):
        problems.append(f"listed twice: {twice}")
    if missing := sorted(on_disk - set(modules)):
        problems.append(f"modules missing from the map: {missing}")
    if ghosts := sorted(set(modules) - on_disk):
        problems.append(f"listed modules that do not exist: {ghosts}")
    if odd := sorted(folders ^ disk_folders):
        problems.append(f"folders listed but absent, or present but not listed: {odd}")
    return problems


def test_module_map_matches_the_file_tree() -> None:
    assert map_problems(DESIGN.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("ablation/\n  gone.py    x\n", "do not exist: ['ablation/gone.py']"),
        ("ablation/\n", "missing from the map: ['ablation/agents/callables.py'"),
        ("ablation/\n  errors.py  x\n  errors.py  x\n", "listed twice: ['ablation/errors.py']"),
        ("ablation/\nablation/nowhere/\n", "not listed: ['ablation/agents/'"),
    ],
)
def test_the_check_names_each_disagreement(block: str, problem: str) -> None:
    design = f"## 4. Architecture\n### Module map\n```\n{block}```\n## 5. Next\n"
    assert any(problem in p for p in map_problems(design)), map_problems(design)


@pytest.mark.parametrize(
    ("block", "problem"),
    [("  errors.py  x\n", "before any folder"), ("ablation/\n  errors     x\n", "unreadable")],
)
def test_an_unreadable_map_fails(block: str, problem: str) -> None:
    design = f"## 4. Architecture\n### Module map\n```\n{block}```\n## 5. Next\n"
    with pytest.raises(AssertionError, match=problem):
        map_problems(design)
