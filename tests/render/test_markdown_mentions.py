r"""A Markdown report posted as a pull-request comment notifies nobody and links nothing.

GitHub reads ``@name`` and ``@org/team`` in a comment's text as mentions (each notifies) and
``#123`` or ``org/repo#123`` as references (each links, and notes the comment in that issue's
timeline), everywhere but inside ``<pre>``, ``<code>`` and links. Task ids, categories, file names
and labels are user text: ``compare --format markdown --details`` of result files whose ids were
``@octocat ping`` and ``see #123 and org/repo#45`` once pinged ``@octocat`` and cross-referenced
``org/repo#45`` from the tables and the drill-down's ``<summary>``. Checked by rendering the
Markdown with a CommonMark parser (markdown-it-py), reading the page's text with an HTML parser
and matching GitHub's patterns against every text node GitHub would read. URLs, ``www.`` names
and e-mail addresses in user text once became links too (GFM autolinks); checked with
markdown-it's GFM preset, whose linkify finds them.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_here
from helpers.github_text import LINKED, page_text
from markdown_it import MarkdownIt

IDS = ["@octocat ping", "@org/team x", "see #123 and org/repo#45 and GH-7", "https://evil.example/login",
       "www.evil.example", "mail me@evil.example"]
CATEGORIES = ["@cat-person", "c#1"]


def _results(tmp_path: Path) -> tuple[Path, Path]:
    base, cand = [], []
    for i, tid in enumerate(IDS):
        category = CATEGORIES[i % len(CATEGORIES)]
        base.append({"id": tid, "passed": i % 2 == 0, "category": category, "output": f"out {tid}"})
        cand.append({"id": tid, "passed": i % 2 == 1, "category": category, "output": f"new {tid}"})
    a, b = tmp_path / "@base.jsonl", tmp_path / "cand#7.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in base), encoding="utf-8")
    b.write_text("".join(json.dumps(r) + "\n" for r in cand), encoding="utf-8")
    return a, b


def test_user_text_in_a_markdown_report_mentions_and_references_nothing(tmp_path: Path) -> None:
    a, b = _results(tmp_path)
    args = ["compare", str(a), str(b), "--format", "markdown", "--details", "--label", "@owner=#9"]
    proc = run_here(args)
    assert proc.returncode in (0, 2), proc.stderr
    text = page_text(proc.stdout)
    scanned = "\n".join(text.scanned)
    assert LINKED.findall(scanned) == []
    # every id, category, file name and label still reads as written
    shown = scanned.replace("\u200b", "")
    for written in (*IDS, *CATEGORIES, "@base.jsonl", "cand#7.jsonl", "@owner=#9"):
        assert written in shown, written
    assert "REGRESSION: @octocat ping [@cat-person]" in shown  # the drill-down's <summary>
    # inside <pre> the output is left as it was: GitHub links nothing there
    assert any("out @octocat ping" in t for t in text.unscanned)
    # and a GFM reader (linkify on) finds no URL, www. name or address to link in the page
    assert "<a " not in MarkdownIt("gfm-like", {"html": True}).render(proc.stdout)
