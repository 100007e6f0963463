r"""Only a critical regression is marked **CRITICAL** in the Markdown regressions table.

The table's bold mark was restored after escaping by replacing every ``\*\*CRITICAL\*\*`` in the
finished table, so a task id or category ``**CRITICAL**`` (escaped as that very text) was
un-escaped too, and a regression that is not critical read as critical. Checked by parsing the
Markdown (markdown-it) and counting the bold ``CRITICAL`` of each table row.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here
from markdown_it import MarkdownIt

ROWS = [  # id, category, critical
    ("**CRITICAL**", "**CRITICAL**", False),
    ("real", "plain", True),
    ("other", "plain", False),
]


def test_a_task_id_cannot_mark_itself_critical(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, passed in ((a, True), (b, False)):
        path.write_text("".join(json.dumps({"id": t, "category": c, "critical": k, "passed": passed}) + "\n"
                                for t, c, k in ROWS), encoding="utf-8")  # fmt: skip
    proc = run_here(["compare", str(a), str(b), "--format", "markdown", "--no-critical-gate"])
    assert proc.returncode in (0, 2), proc.stderr
    tokens = MarkdownIt("commonmark").enable("table").parse(proc.stdout)
    bold: dict[str, int] = {}
    row: list[str] = []
    for tok in tokens:
        if tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and tok.level >= 4:  # a cell of a table row
            row.append(tok.content)
            kids = [c.type for c in tok.children or []]
            if len(row) > 1 and "strong_open" in kids:
                bold[row[1]] = bold.get(row[1], 0) + 1
    critical = {t for t, _, k in ROWS if k}
    assert set(bold) == {"real"} == critical, bold
    assert bold["real"] == 1
