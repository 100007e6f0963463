"""Ids that differ only by Unicode normalisation or surrounding whitespace are named as look-alikes.

Two tools may write one task's id as ``'café'`` (NFC) and ``'cafe\\u0301'`` (NFD), or as ``' t2'``
and ``'t2'``: ids are exact keys, so the two rows pair with nothing, and ``compare`` listed each
as present in one file only, with no word that they look the same. They are still not merged;
wherever the one-sided ids are named (the report's exclusions, as a note; the no-common-id
error; a numeric comparison's unpaired ids, on stderr) the look-alike pairs are named, escaped,
with the files. The reference is an oracle over the rows the test writes: the ids each file
holds alone, grouped by NFC form, stripped.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from ablation.cli import common_ids
from ablation.sources.readers import engine
from ablation.sources.readers.rows import ReadOptions
from tests.helpers.cli import run_here

BEFORE = ["caf\u00e9", " t2", "t3", "only-before", "e\u0301t\u00e9 "]
AFTER = ["cafe\u0301", "t2", "t3", "only-after", "\u00e9te\u0301"]


def _oracle(before: list[str], after: list[str]) -> list[tuple[str, str]]:
    alone_b, alone_a = set(before) - set(after), set(after) - set(before)
    key = lambda s: unicodedata.normalize("NFC", s).strip()  # noqa: E731
    return sorted((b, a) for b in alone_b for a in alone_a if key(b) == key(a))


def _write(path: Path, ids: list[str], layout: str) -> Path:
    if layout == "csv":
        path = path.with_suffix(".csv")
        path.write_text("id,passed,cost\n" + "".join(f"{i},true,0.5\n" for i in ids), encoding="utf-8")
    else:
        extra = {"cost": 0.5} if layout == "rows" else {}
        path.write_text("".join(json.dumps({"id": i, "passed": True, **extra}) + "\n" for i in ids))
    return path


def _notes(tmp_path: Path, before: list[str], after: list[str], layout: str) -> tuple[list[str], dict[str, Any]]:
    b, a = _write(tmp_path / "before.jsonl", before, layout), _write(tmp_path / "after.jsonl", after, layout)
    proc = run_here(["compare", b.name, a.name, "--format", "json"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # the complete-comparison gate fails: ids unpaired
    report = json.loads(proc.stdout)
    return [n for n in report["notes"] if n.startswith("Look-alike ids: ")], report


@pytest.mark.parametrize(("layout", "engine_on"), [("bare", False), ("rows", False), ("rows", True), ("csv", False)])
def test_look_alike_one_sided_ids_are_named_by_every_read_path(
    tmp_path: Path, layout: str, engine_on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if engine_on:
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(engine, "MIN_BYTES", 0)
    # CSV cells are stripped when read: its ids differ by normalisation only
    before = [i.strip() for i in BEFORE] if layout == "csv" else BEFORE
    after = [i.strip() for i in AFTER] if layout == "csv" else AFTER
    notes, report = _notes(tmp_path, before, after, layout)
    if engine_on:  # pyarrow read the columns (CSV of non-ASCII ids is always read row by row)
        path = str(tmp_path / "after.jsonl")
        assert engine.engine_columns(path, ReadOptions(), None, path) is not None
    pairs = _oracle(before, after)
    assert len(pairs) == (2 if layout == "csv" else 3)
    ext = ".csv" if layout == "csv" else ".jsonl"
    named = "; ".join(f"{b!a} (before{ext}) and {a!a} (after{ext})" for b, a in pairs)
    assert notes == [
        f"Look-alike ids: {len(pairs)} pair(s) of ids, each in one file only, differ only by Unicode "
        f"normalisation (NFC) or surrounding whitespace, and were not paired: {named}; ids are exact "
        "keys: write them alike in both files"
    ]
    assert report["n_paired"] == len(set(before) & set(after))  # never merged
    assert {e["task_id"] for e in report["excluded"]} == set(before) ^ set(after)


def test_no_note_without_look_alikes_and_only_one_sided_ids_are_normalised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    alike = common_ids._alike
    monkeypatch.setattr(common_ids, "_alike", lambda s: seen.append(s) or alike(s))
    shared = [f"task-{i}" for i in range(500)]
    notes, _ = _notes(tmp_path, [*shared, "x1"], [*shared, "x2", "x3"], "rows")
    assert notes == [] and sorted(seen) == ["x1", "x2", "x3"]


def test_no_common_id_error_names_the_look_alikes(tmp_path: Path) -> None:
    b, a = _write(tmp_path / "b.jsonl", ["caf\u00e9"], "bare"), _write(tmp_path / "a.jsonl", ["cafe\u0301 "], "bare")
    proc = run_here(["compare", b.name, a.name], cwd=tmp_path)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert line.startswith("ablation: error: b.jsonl and a.jsonl have no task id in common")
    assert "1 pair(s) of ids, each in one file only, differ only by Unicode normalisation (NFC) or surrounding " \
           "whitespace, and were not paired: 'caf\\xe9' (b.jsonl) and 'cafe\\u0301 ' (a.jsonl); check --key" in line


def test_numeric_comparison_notes_the_look_alikes(tmp_path: Path) -> None:
    rows = [("t1", 0.1, 0.3), ("t2", 0.2, 0.4), ("t3", 0.3, 0.5)]
    b, a = tmp_path / "b.jsonl", tmp_path / "a.jsonl"
    b.write_text("".join(json.dumps({"id": i, "score": x}) + "\n" for i, x, _ in [*rows, ("caf\u00e9", 0.5, 0)]))
    a.write_text("".join(json.dumps({"id": i, "score": y}) + "\n" for i, _, y in [*rows, ("cafe\u0301", 0, 0.7)]))
    proc = run_here(["compare", b.name, a.name, "--field", "score", "--quiet"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "ablation: note: Look-alike ids: 1 pair(s) of ids, each in one file only, differ only by Unicode "
        "normalisation (NFC) or surrounding whitespace, and were not paired: 'caf\\xe9' (b.jsonl) and "
        "'cafe\\u0301' (a.jsonl); ids are exact keys: write them alike in both files"
    ]
