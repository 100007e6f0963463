"""Another tool's entries inside a peer tool's file are refused naming the first of them, also
when ``--where`` picks the rows: never left out as rows ``--where`` did not pick.

A promptfoo ``results.results`` list whose second half is pydantic-evals cases, an lm-eval
samples file with OpenAI evals lines appended, read with the ``--where`` each file needs
(``promptIdx=1``, ``filter=strict-match``): the foreign entries lack the field ``--where`` reads,
so they were skipped and the comparison ran on the rest, exit 0 or 2. Each entry is now checked to
hold the tool's id (or ``--key``) before ``--where`` picks it, as an export's ``arm`` is.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"


def test_pydantic_evals_cases_in_a_promptfoo_list_are_refused(tmp_path: Path) -> None:
    doc = json.loads((TOOLS / "promptfoo_results.json").read_text())
    kept = len(doc["results"]["results"])
    doc["results"]["results"] += json.loads((TOOLS / "pe_candidate.json").read_text())["cases"]
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(doc))
    before = str(TOOLS / "promptfoo_results.json")
    done = run_here(["compare", before, str(mixed), "--baseline-where", "promptIdx=0", "--where", "promptIdx=1", "-q"])
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr == f"ablation: error: {mixed}: results.results[{kept}]: no 'testIdx' field (the task id)\n"


def test_openai_evals_lines_in_an_lm_eval_file_are_refused(tmp_path: Path) -> None:
    samples = (TOOLS / "lm_eval_candidate.jsonl").read_text()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(samples + (TOOLS / "openai_evals_candidate.jsonl").read_text())
    before = str(TOOLS / "lm_eval_baseline.jsonl")
    done = run_here(["compare", before, str(mixed), "--where", "filter=strict-match", "-q"])
    first = len(samples.splitlines()) + 1
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr == f"ablation: error: {mixed}:{first}: no 'doc_id' field (the task id)\n"


def test_a_line_where_leaves_out_is_not_refused_for_its_verdict(tmp_path: Path) -> None:
    """Only the id is checked before ``--where``: a left-out line's other fields stay unread."""
    lines = [json.loads(line) for line in (TOOLS / "lm_eval_candidate.jsonl").read_text().splitlines()]
    for line in lines:
        if line["filter"] != "strict-match":
            line["exact_match"] = "not a verdict"
    odd = tmp_path / "odd.jsonl"
    odd.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = str(TOOLS / "lm_eval_baseline.jsonl")
    done = run_here(["compare", before, str(odd), "--where", "filter=strict-match", "-q", "--format", "json"])
    same = run_here(["compare", before, str(TOOLS / "lm_eval_candidate.jsonl"), "--where", "filter=strict-match",
                     "-q", "--format", "json"])  # fmt: skip
    assert done.returncode == same.returncode in (0, 2), done.stderr
    assert done.stdout.replace(str(odd), "AFTER") == same.stdout.replace(str(TOOLS / "lm_eval_candidate.jsonl"), "AFTER")
