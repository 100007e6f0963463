"""The drill-down's heading counts its tasks in words: "1 task", "2 tasks"."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.verdict_files import write_verdicts

from ablation.cli.main import main
from ablation.render import plots


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


@pytest.mark.parametrize("improved", [1, 2])
def test_the_drilldown_heading_says_task_or_tasks(
    improved: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = write_verdicts(tmp_path / "before.jsonl", [False] * 4)
    after = write_verdicts(tmp_path / "after.jsonl", [i < improved for i in range(4)])
    words = "1 task" if improved == 1 else f"{improved} tasks"
    markdown_words = f"{improved} regressed and improved task" + ("" if improved == 1 else "s")
    expected = {
        "terminal": f"Drill-down ({words})",
        "html": f"Drill-down ({words})<",
        "markdown": f"<summary>Drill-down: {markdown_words}</summary>",
    }
    for fmt, heading in expected.items():
        out = tmp_path / f"report.{fmt}"
        main(["compare", str(before), str(after), "--details", "--format", fmt, "-o", str(out)])
        capsys.readouterr()
        text = out.read_text(encoding="utf-8")
        assert heading in text, fmt
        assert "(1 tasks)" not in text and ": 1 regressed and improved tasks" not in text
