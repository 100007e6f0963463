r"""The action's error report is Markdown-escaped like any report.

When ``ablation`` produces no report, the ``run`` step writes its last error line to
``ablation-report.md`` and the job summary, and the ``comment`` step posts that file on the pull
request. The line quotes user text: ``compare`` of a result file with a repeated id
``@octocat ![p](https://tracker.example/p.png) #12`` once posted a comment that mentioned
``@octocat``, referenced issue 12 and loaded a tracking image. Checked by rendering the file with
a CommonMark parser and reading its text nodes as GitHub does (:mod:`helpers.github_text`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.github_text import LINKED, page_text
from markdown_it import MarkdownIt

from ablation.cli.github_action import step_run

HOSTILE = "@octocat ![p](https://tracker.example/p.png) #12 <img src=x>"


def test_an_error_line_posted_as_a_comment_is_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"id": HOSTILE, "passed": True}, {"id": HOSTILE, "passed": False}]  # a repeated id
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "t", "passed": True}) + "\n", encoding="utf-8")
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(tmp_path)
    for name, value in {"ABLATION_COMMAND": "compare a.jsonl b.jsonl", "ABLATION_OUTPUT_DIR": str(tmp_path),
                        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(tmp_path / "out")}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    assert step_run() == 0
    for written in (tmp_path / "ablation-report.md", summary):
        md = written.read_text(encoding="utf-8")
        assert "ablation could not produce a report" in md and "duplicate id" in md
        tokens = MarkdownIt("commonmark", {"html": True}).parse(md)
        inline = [child.type for tok in tokens for child in tok.children or []]
        assert not {"image", "link_open", "html_inline"} & set(inline), inline
        text = page_text(md)
        assert LINKED.findall("\n".join(text.scanned)) == []
        assert HOSTILE in "".join(text.scanned).replace("\u200b", "")  # still reads as written
