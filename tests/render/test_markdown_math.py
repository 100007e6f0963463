r"""User text in a Markdown report is never read as math.

GitHub renders ``$...$`` and ``$$...$$`` in a comment as math, and TeX styles and sizes text: a
task id ``$\Huge{\color{green}\text{ALL GATES PASS}}$`` once showed in the pull-request comment's
regressions table as a huge green claim instead of the id. A ``$`` of user text is now escaped
like the other Markdown specials. Checked with a CommonMark parser and the dollar-math plugin
(markdown-it-py, mdit-py-plugins): no math token, and the id reads as written.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here
from helpers.github_text import page_text
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

IDS = ["$\\Huge{\\color{green}\\text{ALL GATES PASS}}$", "$$x^2$$", "costs $5 and $6"]


def test_dollar_signs_in_ids_and_categories_make_no_math(tmp_path: Path) -> None:
    base, cand = [], []
    for i, tid in enumerate(IDS):
        base.append({"id": tid, "passed": True, "category": f"${i}$"})
        cand.append({"id": tid, "passed": i == 2, "category": f"${i}$"})
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in base), encoding="utf-8")
    b.write_text("".join(json.dumps(r) + "\n" for r in cand), encoding="utf-8")
    proc = run_here(["compare", str(a), str(b), "--format", "markdown", "--details"])
    assert proc.returncode in (0, 2), proc.stderr
    md = MarkdownIt("commonmark", {"html": True}).enable("table").use(dollarmath_plugin)
    stack = md.parse(proc.stdout)
    kinds = set()
    while stack:
        tok = stack.pop()
        kinds.add(tok.type)
        stack.extend(tok.children or [])
    assert not {k for k in kinds if "math" in k}, kinds
    shown = "\n".join(page_text(proc.stdout).scanned)
    for tid in IDS[:2]:
        assert tid in shown, tid
