"""``ablation plan --results BEFORE AFTER`` of two files that agree on every paired task (no
discordant pair: the discordance is 0) is one line naming the files and what to give instead,
exit 1, with nothing on stdout. It printed the "observed" line on stdout, then an error about
``--alpha 0.05 --power 0.8``, values the user gave right or not at all.

The reference: ``ablation compare`` of the same files, whose JSON report has no discordant pair.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli_shared import run_here


def test_files_that_flip_no_task_are_one_line_naming_them(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"id": f"t{i}", "passed": i % 3 > 0}) + "\n" for i in range(12))
    before, after = tmp_path / "b.jsonl", tmp_path / "a.jsonl"
    before.write_text(rows)
    after.write_text(rows + json.dumps({"id": "extra", "passed": True}) + "\n")
    report = json.loads(run_here(["compare", str(before), str(after), "--format", "json"]).stdout)
    assert (report["n_paired"], report["table"]["regressions"], report["table"]["improvements"]) == (12, 0, 0)
    done = run_here(["plan", "--results", str(before), str(after)])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"ablation: error: ablation plan: --results {before} {after}: no task flipped in 12 paired tasks; "
        "1 task excluded, listed by ablation compare (discordance 0): nothing to plan from; give "
        "--discordance P, the share of tasks you expect to flip\n"
    )
