r"""The action's error text is safe where it lands: Markdown in the comment, the CI log.

When ``ablation`` produces no report, the ``run`` step writes its last error line to
``ablation-report.md`` and the job summary, and the ``comment`` step posts that file on the pull
request; the step also passes ablation's stderr on to the job's log. The line quotes user text:
``compare`` of a result file with a repeated id ``@octocat ![p](https://tracker.example/p.png)
#12`` once posted a comment that mentioned ``@octocat``, referenced issue 12 and loaded a
tracking image, and a repeated id ``##[error]pwn`` printed a line the runner reads as a
workflow command. The Markdown is checked by rendering it with a CommonMark parser and reading
its text nodes as GitHub does (:mod:`helpers.github_text`); the log line by line, as the runner
reads it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.github_text import LINKED, page_text
from markdown_it import MarkdownIt

from ablation.cli.github_action import step_run

HOSTILE = "@octocat ![p](https://tracker.example/p.png) #12 <img src=x>"


def _run_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task_id: str) -> Path:
    """The ``run`` step on a baseline that repeats ``task_id``; returns the job summary file."""
    rows = [{"id": task_id, "passed": True}, {"id": task_id, "passed": False}]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "t", "passed": True}) + "\n", encoding="utf-8")
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(tmp_path)
    for name, value in {"ABLATION_COMMAND": "compare a.jsonl b.jsonl", "ABLATION_OUTPUT_DIR": str(tmp_path),
                        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(tmp_path / "out")}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    assert step_run() == 0
    return summary


def test_an_error_line_posted_as_a_comment_is_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = _run_step(tmp_path, monkeypatch, HOSTILE)
    for written in (tmp_path / "ablation-report.md", summary):
        md = written.read_text(encoding="utf-8")
        assert "ablation could not produce a report" in md and "duplicate id" in md
        tokens = MarkdownIt("commonmark", {"html": True}).parse(md)
        inline = [child.type for tok in tokens for child in tok.children or []]
        assert not {"image", "link_open", "html_inline"} & set(inline), inline
        text = page_text(md)
        assert LINKED.findall("\n".join(text.scanned)) == []
        assert HOSTILE in "".join(text.scanned).replace("\u200b", "")  # still reads as written


def test_ablations_stderr_in_the_log_holds_no_workflow_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_step(tmp_path, monkeypatch, "##[error]pwn ##[add-mask]x")
    log = capsys.readouterr().err
    assert "duplicate id" in log and "pwn" in log
    commands = [line for line in re.split(r"\r\n|\r|\n", log) if line.strip().startswith("::") or "##[" in line]
    assert commands == []
