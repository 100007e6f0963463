"""Every test file the README and the docs name exists: a test a promise cites is where a reader
looks for its proof, and a file moved or merged must take its citations along."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: ``tests/...py`` not inside a longer path (``ablation/tests/x.py`` is no test file).
TEST_PATH = re.compile(r"(?<![\w./-])tests/[\w/.-]+?\.py\b")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_test_file_a_doc_names_exists(doc: Path) -> None:
    named = sorted(set(TEST_PATH.findall(doc.read_text(encoding="utf-8"))))
    missing = [path for path in named if not (ROOT / path).is_file()]
    assert not missing, f"{doc.name} names test files that do not exist: {missing}"


def test_the_pattern_finds_test_paths_only() -> None:
    text = "see `tests/a/test_b.py` and tests/c.py, not ablation/tests/d.py nor xtests/e.py"
    assert TEST_PATH.findall(text) == ["tests/a/test_b.py", "tests/c.py"]
