"""An Inspect log that did not finish is read as it stands, and the ``ablation`` command says so.

A log whose run was killed (status ``"started"``; an ``.eval`` archive without its header reads
so) or failed (``"error"``) was read as if complete, its status never mentioned. Now one warning
line names the file and the status; the log of a finished run (the real fixture, ``"success"``)
gives none. The samples themselves are read the same either way (reference: the finished log's
own trials).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_here

from ablation import load_results

TOOLS = Path(__file__).resolve().parents[1] / "data" / "tools"


@pytest.mark.parametrize("status", ["started", "error", "cancelled"])
def test_an_unfinished_log_is_named_on_stderr(tmp_path: Path, status: str) -> None:
    doc = json.loads((TOOLS / "inspect_candidate.json").read_text(encoding="utf-8"))
    assert doc["status"] == "success"
    doc["status"] = status
    unfinished = tmp_path / "unfinished.json"
    unfinished.write_text(json.dumps(doc), encoding="utf-8")
    done = run_here(["compare", str(TOOLS / "inspect_baseline.json"), str(unfinished), "-q"])
    warned = [line for line in done.stderr.splitlines() if "status" in line]
    assert len(warned) == 1 and str(unfinished) in warned[0] and repr(status) in warned[0], done.stderr
    assert done.returncode in (0, 2)
    same = load_results(TOOLS / "inspect_candidate.json", arm="candidate")
    assert load_results(unfinished, arm="candidate") == same


def test_a_finished_log_gives_no_warning() -> None:
    done = run_here(["compare", str(TOOLS / "inspect_baseline.json"), str(TOOLS / "inspect_candidate.json"), "-q"])
    assert "status" not in done.stderr and done.returncode in (0, 2), done.stderr
