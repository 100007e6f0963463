"""A value of another shape than its tool writes, anywhere in another tool's file, is bad input.

Each reader checks what its format defines (the id, the verdict, the numbers). A tool version
that writes a list where it wrote an object, or a number where it wrote a list, made a reader
raise a bare ``AttributeError`` or ``TypeError`` naming no file. Here one node of each fixture at
a time (a seeded sample of its nodes) gets a value of each other shape; ``ablation compare``
must then give a report (exit 0 or 2) or one line naming the file (exit 1), never a bare error.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ablation.cli.main import main

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"
FIXTURES = {  # candidate fixture -> (baseline fixture, flags)
    "inspect_candidate.json": ("inspect_baseline.json", ()),
    "pe_candidate.json": ("pe_baseline.json", ()),
    "promptfoo_results.json": ("promptfoo_results.json", ("--baseline-where", "promptIdx=0", "--where", "promptIdx=1")),
    "lm_eval_candidate.jsonl": ("lm_eval_baseline.jsonl", ("--where", "filter=strict-match")),
    "openai_evals_candidate.jsonl": ("openai_evals_baseline.jsonl", ()),
}  # fmt: skip
SHAPES = [True, 7, "x", [], {"a": [1]}]
BARE = re.compile(r"^ablation: error: [A-Za-z]*(Error|Exception)\b")


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from _nodes(child, (*path, key))


@contextlib.contextmanager
def _replaced(doc: Any, path: tuple[Any, ...], new: Any) -> Iterator[Any]:
    """``doc`` with the node at ``path`` replaced by ``new``, put back on exit (a deep copy of the
    Inspect log for each of its 125 mutations was a sixth of the test's time)."""
    place = doc
    for key in path[:-1]:
        place = place[key]
    old = place[path[-1]]
    place[path[-1]] = new
    try:
        yield doc
    finally:
        place[path[-1]] = old


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_one_value_of_another_shape_gives_a_report_or_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture: str
) -> None:
    text = (TOOLS / fixture).read_text()
    lines = fixture.endswith(".jsonl")
    doc = [json.loads(line) for line in text.splitlines() if line.strip()] if lines else json.loads(text)
    paths = list(_nodes(doc))
    baseline, flags = FIXTURES[fixture]
    mutated = tmp_path / fixture
    for path in random.Random(fixture).sample(paths, min(25, len(paths))):
        for shape in SHAPES:
            with _replaced(doc, path, shape) as new:
                mutated.write_text("".join(json.dumps(o) + "\n" for o in new) if lines else json.dumps(new))
            code = main(["compare", str(TOOLS / baseline), str(mutated), "--quiet", *flags])
            err = capsys.readouterr().err
            where = f"{fixture} {path} -> {shape!r}: {err}"
            assert code in (0, 1, 2), where
            if code == 1:
                assert err.count("\n") == 1 and not BARE.match(err), where
                assert err.startswith(f"ablation: error: {mutated}"), where
