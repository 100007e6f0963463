r"""A Markdown report posted as a pull-request comment notifies nobody and links no issue.

GitHub reads ``@name`` and ``@org/team`` in a comment's text as mentions (each notifies) and
``#123`` or ``org/repo#123`` as references (each links, and notes the comment in that issue's
timeline), everywhere but inside ``<pre>``, ``<code>`` and links. Task ids, categories, file names
and labels are user text: ``compare --format markdown --details`` of result files whose ids were
``@octocat ping`` and ``see #123 and org/repo#45`` once pinged ``@octocat`` and cross-referenced
``org/repo#45`` from the tables and the drill-down's ``<summary>``. Checked by rendering the
Markdown with a CommonMark parser (markdown-it-py), reading the page's text with an HTML parser
and matching GitHub's patterns against every text node GitHub would read.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from helpers.cli import run_here
from markdown_it import MarkdownIt

#: A superset of what GitHub links: ``@`` then a name character, ``#`` then a digit.
_MENTION = re.compile(r"(?:^|\W)@[A-Za-z0-9]|#[0-9]")
#: Elements whose text GitHub does not scan for mentions or references.
_UNSCANNED = {"pre", "code", "a"}
IDS = ["@octocat ping", "@org/team x", "see #123 and org/repo#45", "plain"]
CATEGORIES = ["@cat-person", "c#1"]


class _Text(HTMLParser):
    """Text nodes of a page, each with whether GitHub scans it (character references decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.scanned: list[str] = []
        self.unscanned: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "hr", "img"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        (self.unscanned if _UNSCANNED & set(self.open) else self.scanned).append(data)


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
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(proc.stdout)
    text = _Text()
    text.feed(page)
    scanned = "\n".join(text.scanned)
    assert _MENTION.findall(scanned) == []
    # every id, category, file name and label still reads as written
    shown = scanned.replace("\u200b", "")
    for written in (*IDS, *CATEGORIES, "@base.jsonl", "cand#7.jsonl", "@owner=#9"):
        assert written in shown, written
    assert "REGRESSION: @octocat ping [@cat-person]" in shown  # the drill-down's <summary>
    # inside <pre> the output is left as it was: GitHub links nothing there
    assert any("out @octocat ping" in t for t in text.unscanned)
