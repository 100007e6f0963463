"""A comparison in which no task was paired says so, in every format and in its JSON.

With no pair there is nothing on which the arms could agree or differ: the sentence, the JSON
``summary`` and the McNemar note must say that no task was paired, never that "both arms agree
on every task". The case is built from the command's own input: ``--expected-ids`` that share no
id with the result files, so every expected id is missing and every seen id is unknown. Each
format runs through the ``ablation`` command (in this process: what is checked is the text it
writes, not the process).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.cli_shared import run_here


def _ablation(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_here(args, cwd=cwd)


def test_no_paired_task_is_said_in_every_format(tmp_path: Path) -> None:
    seen = ["t1", "t2", "t3"]
    expected = ["x1", "x2"]
    (tmp_path / "a.jsonl").write_text(
        "".join(json.dumps({"id": t, "passed": i % 2 == 0}) + "\n" for i, t in enumerate(seen))
    )
    (tmp_path / "ids.jsonl").write_text("".join(json.dumps({"id": t}) + "\n" for t in expected))
    args = ["compare", "a.jsonl", "a.jsonl", "--expected-ids", "ids.jsonl"]

    proc = _ablation(tmp_path, *args, "--format", "json")
    assert proc.returncode == 2, proc.stderr  # nothing to judge: the gates do not pass
    report = json.loads(proc.stdout)
    assert report["n_paired"] == 0
    assert report["summary"] == "no paired tasks"
    assert "agree" not in (report["mcnemar"]["note"] or "")
    assert "no paired tasks" in report["mcnemar"]["note"]

    texts = {}
    for fmt in ("terminal", "markdown"):
        texts[fmt] = _ablation(tmp_path, *args, "--format", fmt).stdout
    page = tmp_path / "report.html"
    _ablation(tmp_path, *args, "--format", "html", "--output", str(page))
    texts["html"] = page.read_text()
    for fmt, text in texts.items():
        flat = " ".join(text.replace("│", " ").split())
        assert "No paired tasks: 0 pairs of" in flat, fmt
        assert "agree on every task" not in flat, fmt
        assert "No discordant pairs" not in flat, fmt
