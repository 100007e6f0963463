"""An lm-eval or OpenAI evals line with a bad id or verdict is named in the tool's own words.

The line-based tool readers give their rows to the shared checks of
:func:`~ablation.sources.readers.rows.checked_rows`, whose messages named the plain-row defaults
(``'id'``, ``'passed'``) where the file has lm-eval's ``doc_id`` and metric (``exact_match``) or
OpenAI evals' ``sample_id`` and ``data.correct``: a user looking for an ``id`` field in a file that
has none. Each case edits one line of a committed fixture and compares the whole message; with
``--key`` / ``--field`` the message names those paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ablation.errors import InputError
from ablation.sources.result_files import load_results

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"


def _edited(tmp_path: Path, fixture: str, line: int, edit: Callable[[dict[str, Any]], None]) -> Path:
    lines = (TOOLS / fixture).read_text().splitlines()
    obj = json.loads(lines[line - 1])
    edit(obj)
    lines[line - 1] = json.dumps(obj)
    path = tmp_path / fixture
    path.write_text("\n".join(lines) + "\n")
    return path


def _match_line(fixture: str) -> tuple[int, str]:
    """The last line that is a result read here (lm-eval: a ``strict-match`` line; OpenAI evals: a
    ``match`` event), and its id: not the first line, from which the format is detected."""
    found = [(number, json.loads(raw)) for number, raw in enumerate((TOOLS / fixture).read_text().splitlines(), 1)]
    kept = [(n, o) for n, o in found if o.get("filter", "strict-match") == "strict-match" and o.get("type", "match") == "match"
            and "spec" not in o and "final_report" not in o]  # fmt: skip
    number, obj = kept[-1]
    return number, str(obj.get("doc_id", obj.get("sample_id")))


CASES = {
    "lm-eval: no doc_id": ("lm_eval_candidate.jsonl", lambda o: o.pop("doc_id"), {},
                           "no 'doc_id' field (the task id)"),
    "lm-eval: blank doc_id": ("lm_eval_candidate.jsonl", lambda o: o.update(doc_id="  "), {},
                              "'doc_id' (the task id) is only whitespace: '  '"),
    "lm-eval: no metric": ("lm_eval_candidate.jsonl", lambda o: o.pop("exact_match"), {},
                           "no 'exact_match' field (the verdict) (task id 'TASK')"),
    "lm-eval: ambiguous metric": ("lm_eval_candidate.jsonl", lambda o: o.update(exact_match="maybe"), {},
                                  "verdict 'exact_match' is not an unambiguous boolean: 'maybe' (use true/false, "
                                  "1/0, pass/fail or yes/no, or --pass-values) (task id 'TASK')"),
    "lm-eval: --key": ("lm_eval_candidate.jsonl", lambda o: o.pop("doc_hash"), {"key": "doc_hash"},
                       "no 'doc_hash' field (the task id)"),
    "openai evals: no sample_id": ("openai_evals_candidate.jsonl", lambda o: o.pop("sample_id"), {},
                                   "no 'sample_id' field (the task id)"),
    "openai evals: no verdict": ("openai_evals_candidate.jsonl", lambda o: o["data"].pop("correct"), {},
                                 "no 'data.correct' field (the verdict) (task id 'TASK')"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_messages_name_the_tools_fields(tmp_path: Path, case: str) -> None:
    fixture, edit, options, problem = CASES[case]
    line, task_id = _match_line(fixture)
    path = _edited(tmp_path, fixture, line, edit)
    where = {"where": {"filter": "strict-match"}} if fixture.startswith("lm_eval") else {}
    with pytest.raises(InputError) as caught:
        load_results(path, **options, **where)
    assert str(caught.value) == f"{path}:{line}: {problem.replace('TASK', task_id)}"
