"""The pull-request comment of a report longer than a comment holds ends between two blocks.

The comment step cut the Markdown at 65,000 characters wherever that fell: inside a task's
``<details>`` or an output's ``<pre>``, with no word that anything was missing. It now ends
between two tasks of the drill-down (whose section it closes) or outside it, and says so. The oracle is an
HTML parser over the cut text (every block it opens is closed) and the report itself (the cut
text is its beginning).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from helpers.cli_shared import run_here

from ablation.cli.github_action import _COMMENT_LIMIT, comment_text


class _Blocks(HTMLParser):
    """The ``details`` and ``pre`` blocks left open at the end of the text fed."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in ("details", "pre"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("details", "pre") and self.open and self.open[-1] == tag:
            self.open.pop()


def _long_report(tmp_path: Path) -> str:
    """A ``--details`` Markdown report of 100 regressions with long outputs (~600 kB)."""
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    rows = range(300)
    before.write_text("".join(json.dumps({"id": f"task-{i:03d}", "passed": True,
                                          "output": f"line of output {i}\n\n" * 80}) + "\n" for i in rows))  # fmt: skip
    after.write_text("".join(json.dumps({"id": f"task-{i:03d}", "passed": i % 3 != 0,
                                         "output": f"other output {i}\n\n" * 80}) + "\n" for i in rows))  # fmt: skip
    out = tmp_path / "report.md"
    proc = run_here(["compare", str(before), str(after), "--format", "markdown", "--details", "-o", str(out)])
    assert proc.returncode == 2, proc.stderr
    return out.read_text(encoding="utf-8")


def _left_open(text: str) -> list[str]:
    parser = _Blocks()
    parser.feed(text)
    parser.close()
    return parser.open


def test_a_long_report_is_cut_between_blocks_and_says_so(tmp_path: Path) -> None:
    text = _long_report(tmp_path)
    assert len(text) > 5 * _COMMENT_LIMIT and _left_open(text) == []
    cut = comment_text(text, _COMMENT_LIMIT)
    assert len(cut) <= _COMMENT_LIMIT
    shown, _, note = cut.rpartition("\n\n*The report is cut here")
    kept, closed = shown.removesuffix("\n\n</details>"), shown.endswith("\n\n</details>")
    assert text.startswith(kept) and len(kept) > _COMMENT_LIMIT // 2
    assert _left_open(kept) == (["details"] if closed else []) and _left_open(shown) == []
    # between two tasks of the drill-down: the next line of the report opens the next task
    assert text[len(kept):].lstrip("\n").startswith("<details><summary>")
    assert f"(the first {len(kept):,} of {len(text):,} characters)" in note
    assert "ablation-report.md" in note


def test_every_limit_cuts_outside_the_blocks(tmp_path: Path) -> None:
    text = _long_report(tmp_path)
    for limit in range(3_000, 60_000, 997):  # cuts that fall in every part of a drill-down
        cut = comment_text(text, limit)
        shown = cut.rpartition("\n\n*The report is cut here")[0]
        assert len(cut) <= limit and _left_open(shown) == [], limit
        assert text.startswith(shown.removesuffix("\n\n</details>")), limit


def test_a_report_that_fits_is_posted_whole() -> None:
    text = "## ablation\n\n<details><summary>t</summary>\n\n<pre>x</pre>\n\n</details>\n"
    assert comment_text(text, len(text)) == text
