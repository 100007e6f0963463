"""An Inspect log whose every sample failed (the model API down for the whole run) is read as
error trials; one with no samples at all is refused saying so.

A failed sample has an ``error`` and no ``scores``: with no sample scored, the reader found no
scorer to take the verdict from and refused the log with "choose the scorer with --field
(scorers: none)", though error trials need no verdict (naming any scorer with ``--field`` read
it). An empty ``samples`` list got the same words.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"
BEFORE = str(TOOLS / "inspect_baseline.json")


def _failed_log(tmp_path: Path) -> Path:
    doc = json.loads((TOOLS / "inspect_candidate.json").read_text())
    for sample in doc["samples"]:
        sample.pop("scores")
        sample["error"] = {"message": "RuntimeError('upstream model unavailable')", "traceback": "..."}
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_log_whose_every_sample_failed_is_read_as_error_trials(tmp_path: Path) -> None:
    failed = _failed_log(tmp_path)
    done = run_here(["compare", BEFORE, str(failed), "--format", "json"])
    assert done.returncode in (0, 2), done.stderr
    named = run_here(["compare", BEFORE, str(failed), "--format", "json", "--field", "match"])
    assert (done.returncode, done.stdout) == (named.returncode, named.stdout)
    report = json.loads(done.stdout)
    assert report["candidate"]["errors"] == report["candidate"]["n_trials"] > 0, report["candidate"]


def test_a_log_with_an_unscored_sample_that_ran_still_asks_for_the_scorer(tmp_path: Path) -> None:
    failed = _failed_log(tmp_path)
    doc = json.loads(failed.read_text())
    del doc["samples"][0]["error"]
    failed.write_text(json.dumps(doc))
    done = run_here(["compare", BEFORE, str(failed), "-q"])
    assert (done.returncode, done.stderr) == (1, f"ablation: error: {failed}: choose the scorer with --field (scorers: none)\n")


def test_a_log_with_no_samples_says_so(tmp_path: Path) -> None:
    doc = json.loads((TOOLS / "inspect_candidate.json").read_text())
    doc["samples"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(doc))
    done = run_here(["compare", BEFORE, str(empty), "-q"])
    assert (done.returncode, done.stderr) == (1, f"ablation: error: {empty}: the Inspect log's samples list is empty: no results\n")
