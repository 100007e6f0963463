"""A document that is not of the format it is read as is named with that format's name.

The line read "is not a inspect document" (and "a openai-evals", "a ablation-export"): the
article was glued to a registry name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation.sources.readers import FORMATS, find_reader


@pytest.mark.parametrize("name", [n for n in FORMATS if "document" in find_reader(n).shapes and n != "jsonl"])
def test_the_refusal_names_the_format(tmp_path: Path, name: str) -> None:
    path = tmp_path / "row.json"
    path.write_text('{"id": "a", "passed": true}\n')
    proc = run_here(["compare", str(path), str(path), "--from", name])
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stderr.strip() == f"ablation: error: {path}: is not a document of the {name!r} format"
