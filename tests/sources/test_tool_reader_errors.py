"""An entry of a tool's file that is not a result is refused in one line, in the tool's own words.

The promptfoo, pydantic-evals and Inspect readers read a list of entries (``results.results``,
``cases``/``failures``, ``samples``). An entry that is not an object, or whose id or verdict field
is absent or of the wrong type, is bad input: one line naming the file, the entry's JSON path,
the task id once known and the field as the tool's file spells it (``testIdx``, ``success``,
``assertions``, ``scores.match.value``), never skipped and never named by ablation's plain-row
defaults (``id``, ``passed``). Each case edits one entry of a committed fixture and compares the
whole message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ablation.cli.main import main
from ablation.errors import InputError
from ablation.sources.readers import read_results
from ablation.sources.readers.rows import ReadOptions

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"
#: tool -> (fixture edited, baseline fixture for ``compare``, compare flags, read options).
TOOL_FILES = {
    "promptfoo": ("promptfoo_results.json", "promptfoo_results.json",
                  ("--baseline-where", "promptIdx=1", "--where", "promptIdx=1"), {"promptIdx": "1"}),
    "pydantic-evals": ("pe_candidate.json", "pe_baseline.json", (), {}),
    "inspect": ("inspect_candidate.json", "inspect_baseline.json", (), {}),
}  # fmt: skip


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value

    return edit


def _delete(path: tuple[Any, ...]) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        del doc[path[-1]]

    return edit


def _both(*edits: Callable[[Any], None]) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        for one in edits:
            one(doc)

    return edit


PF = ("results", "results")
#: (tool, defect, edit of the fixture, the message after ``FILE: ``).
CASES = [
    ("promptfoo", "null entry", _set((*PF, 1), None), "results.results[1]: expected a JSON object, got NoneType"),
    ("promptfoo", "list entry", _set((*PF, 3), [1]), "results.results[3]: expected a JSON object, got list"),
    ("promptfoo", "no id", _delete((*PF, 1, "testIdx")), "results.results[1]: no 'testIdx' field (the task id)"),
    ("promptfoo", "id of a wrong type", _set((*PF, 3, "testIdx"), [1]),
     "results.results[3]: 'testIdx' must be a string or an integer, got [1]"),
    ("promptfoo", "no verdict", _delete((*PF, 1, "success")),
     "results.results[1]: no 'success' field (the verdict) (task id '0')"),
    ("promptfoo", "null verdict", _set((*PF, 1, "success"), None),
     "results.results[1]: 'success' must be true or false, got None (task id '0')"),
    ("promptfoo", "text verdict", _set((*PF, 3, "success"), "yes"),
     "results.results[3]: 'success' must be true or false, got 'yes' (task id '1')"),
    ("pydantic-evals", "null case", _set(("cases", 2), None), "cases[2]: expected a JSON object, got NoneType"),
    ("pydantic-evals", "number failure", _set(("failures", 0), 3), "failures[0]: expected a JSON object, got int"),
    ("pydantic-evals", "no id", _both(_delete(("cases", 2, "name")), _delete(("cases", 2, "source_case_name"))),
     "cases[2]: no 'name' field (the task id)"),
    ("pydantic-evals", "failure without id", _both(_delete(("failures", 0, "name")),
                                                   _set(("failures", 0, "source_case_name"), None)),
     "failures[0]: no 'name' field (the task id)"),
    ("pydantic-evals", "id of a wrong type", _set(("cases", 2, "source_case_name"), ["s1"]),
     "cases[2]: 'source_case_name' must be a string or an integer, got ['s1']"),
    ("pydantic-evals", "no verdict", _set(("cases", 2, "assertions"), {}),
     "cases[2]: no 'assertions' (the verdict): name a field with --field (task id 's1')"),
    ("pydantic-evals", "verdicts of a wrong type", _set(("cases", 2, "assertions"), [True]),
     "cases[2]: 'assertions' must be an object, got [True] (task id 's1')"),
    ("pydantic-evals", "null verdict", _set(("cases", 2, "assertions", "EqualsExpected", "value"), None),
     "cases[2]: 'assertions.EqualsExpected.value' must be true or false, got None (task id 's1')"),
    ("pydantic-evals", "assertion without value", _delete(("cases", 2, "assertions", "EqualsExpected", "value")),
     "cases[2]: no 'assertions.EqualsExpected.value' field (the verdict) (task id 's1')"),
    ("inspect", "null sample", _set(("samples", 1), None), "samples[1]: expected a JSON object, got NoneType"),
    ("inspect", "text sample", _set(("samples", 4), "s4"), "samples[4]: expected a JSON object, got str"),
    ("inspect", "no id", _delete(("samples", 1, "id")), "samples[1]: no 'id' field (the task id)"),
    ("inspect", "id of a wrong type", _set(("samples", 1, "id"), 1.5),
     "samples[1]: 'id' must be a string or an integer, got 1.5"),
    ("inspect", "no verdict", _delete(("samples", 1, "scores", "match")),
     "samples[1]: no 'scores.match.value' field (the verdict) (task id 's1')"),
    ("inspect", "null verdict", _set(("samples", 1, "scores", "match", "value"), None),
     "samples[1]: 'scores.match.value' must be a letter (C, I, P, N), a number or a boolean, got None "
     "(task id 's1')"),
    ("inspect", "list verdict", _set(("samples", 3, "scores", "match", "value"), ["C"]),
     "samples[3]: 'scores.match.value' must be a letter (C, I, P, N), a number or a boolean, got ['C'] "
     "(task id 's3')"),
    ("inspect", "scores of a wrong type", _set(("samples", 1, "scores"), ["match"]),
     "samples[1]: 'scores' must be an object, got ['match'] (task id 's1')"),
    ("inspect", "epoch of a wrong type", _set(("samples", 1, "epoch"), 0),
     "samples[1]: 'epoch' must be an integer from 1, got 0 (task id 's1')"),
]  # fmt: skip


def _edited(tmp_path: Path, tool: str, edit: Callable[[Any], None]) -> Path:
    doc = json.loads((TOOLS / TOOL_FILES[tool][0]).read_text())
    edit(doc)
    path = tmp_path / TOOL_FILES[tool][0]
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(("tool", "defect", "edit", "message"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_bad_entry_is_one_line_naming_the_file_the_entry_and_the_tools_field(
    tmp_path: Path, tool: str, defect: str, edit: Callable[[Any], None], message: str
) -> None:
    path = _edited(tmp_path, tool, edit)
    with pytest.raises(InputError) as caught:
        read_results(str(path), ReadOptions(where=TOOL_FILES[tool][3]))
    assert str(caught.value) == f"{path}: {message}"


@pytest.mark.parametrize("tool", sorted(TOOL_FILES))
def test_the_cli_exits_1_with_the_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str) -> None:
    tool_case = next(c for c in CASES if c[0] == tool and c[1].startswith("null "))
    path = _edited(tmp_path, tool, tool_case[2])
    _, baseline, flags, _ = TOOL_FILES[tool]
    code = main(["compare", str(TOOLS / baseline), str(path), "--quiet", *flags])
    assert (code, capsys.readouterr().err) == (1, f"ablation: error: {path}: {tool_case[3]}\n")


@pytest.mark.parametrize("tool", sorted(TOOL_FILES))
def test_the_fixtures_still_read_whole(tool: str) -> None:
    """The checks refuse nothing a tool wrote: every entry of each fixture is a trial."""
    name, _, _, where = TOOL_FILES[tool]
    doc = json.loads((TOOLS / name).read_text())
    entries = {"promptfoo": lambda: [e for e in doc["results"]["results"] if str(e["promptIdx"]) == "1"],
               "pydantic-evals": lambda: doc["cases"] + doc["failures"], "inspect": lambda: doc["samples"]}[tool]()
    assert len(read_results(str(TOOLS / name), ReadOptions(where=where))) == len(entries)
