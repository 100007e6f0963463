"""The regressions table has a category column only when the tasks have categories.

Without categories every row read "default" (500 SWE-bench tasks: 25 rows of it); with them, the
column names each task's own category, in every format.
"""

from __future__ import annotations

import pytest

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.render import plots, render


def _report(categories: list[str]):  # type: ignore[no-untyped-def]
    flips = [(True, False)] * 6 + [(False, True)] * 3 + [(True, True)] * 11
    before, after = [], []
    for i, (x, y) in enumerate(flips):
        cat = categories[i % len(categories)]
        before.append(TaskResult(task_id=f"t{i}", arm="baseline", passed=x, category=cat))
        after.append(TaskResult(task_id=f"t{i}", arm="candidate", passed=y, category=cat))
    return compare_results(before, after, config=CampaignConfig(n_resamples=200))


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _regressions_part(text: str) -> str:
    start = text.lower().index("regressions (6)")
    return text[start : text.lower().index("improvements (3)", start)]


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_no_category_column_without_categories(fmt: str) -> None:
    part = _regressions_part(render(_report(["default"]), fmt, width=120))
    assert "category" not in part
    assert "default" not in part
    assert all(f"t{i}" in part for i in range(6))


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_the_column_names_each_tasks_category(fmt: str) -> None:
    cats = ["math", "code"]
    part = _regressions_part(render(_report(cats), fmt, width=120))
    assert "category" in part
    for i in range(6):  # each regressed task's row carries its own category
        row = next(line for line in part.splitlines() if f"t{i}" in line)
        assert cats[i % 2] in row, row
