r"""The text ``ablation compare --field NUMBER`` prints shows a task id's control characters as
escapes, as the pass-rate report's terminal text does (:func:`ablation.render._format.printable`).

A result file's ids are untrusted text (an agent's output can reach them): an escape sequence
(``\x1b[2J`` clears the screen), a carriage return (a line rewritten over its own start), a
bidirectional override or a newline (a line of its own, which a CI runner may read as a workflow
command) must reach the terminal as visible text. The references: the JSON document of the same
comparison (which holds the ids as written) and the text's own line count.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here

HOSTILE = ["\x1b[2Jclear", "over\rwrite", "\u202eevil", "two\n::error::lines", "plain"]


def _write(path: Path, score: float, ids: list[str]) -> str:
    path.write_text("".join(json.dumps({"id": t, "score": score + i / 100}) + "\n" for i, t in enumerate(ids)))
    return str(path)


def _control(text: str) -> set[str]:
    return {ch for ch in text if ch != "\n" and (not ch.isprintable() or ch == "\u202e")}


def test_numeric_text_shows_control_characters_of_ids_as_escapes(tmp_path: Path) -> None:
    ids = HOSTILE + [f"t{i}" for i in range(5)]
    before, after = _write(tmp_path / "b.jsonl", 0.9, ids), _write(tmp_path / "a.jsonl", 0.2, ids)
    as_json = run_here(["compare", before, after, "--field", "score", "--format", "json"])
    assert set(json.loads(as_json.stdout)["regressions"]) == set(ids)  # the ids as written
    done = run_here(["compare", before, after, "--field", "score"])
    assert done.returncode == 2, done.stderr
    assert _control(done.stdout) == set()
    lines = done.stdout.splitlines()
    assert len(lines) == 7  # field, means, regressions, improvements, two gates, verdict
    assert not any(line.startswith("::") for line in lines)
    assert "\\x1b[2Jclear" in lines[2] and "over\\x0dwrite" in lines[2]
    assert "\\u202eevil" in lines[2] and "two\\n::error::lines" in lines[2]


def test_numeric_text_of_several_candidates_escapes_their_file_names(tmp_path: Path) -> None:
    ids = [f"t{i}" for i in range(6)]
    before = _write(tmp_path / "b.jsonl", 0.5, ids)
    first = _write(tmp_path / "c1.jsonl", 0.5, ids)
    second = _write(tmp_path / "c\x1b[31m2\n::warning::x.jsonl", 0.4, ids)
    done = run_here(["compare", before, first, second, "--field", "score"])
    assert done.returncode == 2, done.stderr
    assert _control(done.stdout) == set()
    assert not any(line.startswith("::") for line in done.stdout.splitlines())
    assert "candidate: " + str(tmp_path / "c\\x1b[31m2\\n::warning::x.jsonl") in done.stdout
