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
from helpers.engine_toggle import engine_reads_every_file

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
    engine_reads_every_file(monkeypatch, engine_on)
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


#: ``--expected-ids`` (a JSON array, so an id may keep its spaces) and two files' ids: 'café' is
#: expected NFC, BEFORE holds it, AFTER NFD; 't2' is expected, both files hold ' t2'; ' t8' is
#: expected with a space, AFTER holds 't8'; 'été' is expected in both forms, one per file (a
#: one-sided pair of expected ids); 'x9' is unexpected and looks like nothing.
EXPECTED = ["caf\u00e9", "t2", " t8", "\u00e9t\u00e9", "e\u0301te\u0301", "t3", "t4", "t5"]
HELD = (
    ["caf\u00e9", " t2", "\u00e9t\u00e9", "t3", "t4", "t5", "x9"],
    ["cafe\u0301", " t2", "t8", "e\u0301te\u0301", "t3", "t4", "t5"],
)


def _expected_oracle(expected: list[str], held: tuple[list[str], list[str]], names: tuple[str, str]) -> list[str]:
    """The pairs the note names, as text: the expected ids one file holds alone against the other
    file's, then each file's unexpected ids against the expected ids that file lacks."""
    key = lambda s: unicodedata.normalize("NFC", s).strip()  # noqa: E731
    exp, (b, a) = set(expected), (set(h) for h in held)
    one_sided = sorted((x, y) for x in (exp & b) - a for y in (exp & a) - b if key(x) == key(y))
    named = [(x, names[0], y, names[1]) for x, y in one_sided]
    named += sorted(
        (e, "ids.json", u, name)
        for ids, name in zip((b, a), names, strict=True)
        for e in exp - ids for u in ids - exp if key(e) == key(u)
    )  # fmt: skip
    return [f"{x!a} ({nx}) and {y!a} ({ny})" for x, nx, y, ny in named]


@pytest.mark.parametrize("numeric", [False, True])
def test_expected_ids_missing_and_unexpected_look_alikes_are_named(tmp_path: Path, numeric: bool) -> None:
    (tmp_path / "ids.json").write_text(json.dumps(EXPECTED), encoding="utf-8")
    field = {"score": 0.5} if numeric else {"passed": True}
    for name, ids in zip(("b.jsonl", "a.jsonl"), HELD, strict=True):
        (tmp_path / name).write_text("".join(json.dumps({"id": i, **field}) + "\n" for i in ids))
    args = ["compare", "b.jsonl", "a.jsonl", "--expected-ids", "ids.json"]
    proc = run_here([*args, "--field", "score", "--quiet"] if numeric else [*args, "--format", "json"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # expected ids unpaired: the complete-comparison gate fails
    if numeric:
        prefix = "ablation: note: "
        notes = [line.removeprefix(prefix) for line in proc.stderr.splitlines() if line.startswith(prefix)]
    else:
        notes = [n for n in json.loads(proc.stdout)["notes"] if n.startswith("Look-alike ids: ")]
        paired = json.loads(proc.stdout)["n_paired"]
        assert paired == len(set(EXPECTED) & set(HELD[0]) & set(HELD[1]))  # never merged
    pairs = _expected_oracle(EXPECTED, HELD, ("b.jsonl", "a.jsonl"))
    assert len(pairs) == 5
    assert notes == [
        f"Look-alike ids: {len(pairs)} pair(s) of ids, each in one file only, differ only by Unicode "
        f"normalisation (NFC) or surrounding whitespace, and were not paired: {'; '.join(pairs)}; ids are "
        "exact keys: write them alike in both files"
    ]
