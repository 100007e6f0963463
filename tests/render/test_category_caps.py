"""A report with thousands of categories: the HTML, Markdown and terminal reports show a bounded
category table and plot, say how many more there are and which rule chose the shown ones; the
JSON report keeps every category.

The report is built in-process from results: 2,000 one-task categories (some regress, some
improve, most do not change) and a few larger ones, so the rule "most tasks first, ties broken by
the largest |uplift|" has something to choose by.
"""

from __future__ import annotations

import json
import re
from functools import cache

import pytest

from ablation import CampaignConfig, compare_results
from ablation.render import plots, render
from ablation.render._breakdowns import CATEGORY_CAP
from ablation.report import AblationReport
from ablation.schema import TaskResult

pytestmark = pytest.mark.xdist_group("category-caps")  # one worker builds the report once

SINGLES = 2000
#: Larger categories: name -> tasks.
LARGE = {"large-a": 5, "large-b": 4, "large-c": 3}


@cache
def many_categories() -> AblationReport:
    """The report of the module docstring."""
    base: list[TaskResult] = []
    cand: list[TaskResult] = []
    tasks = [(f"t{i:05d}", f"single-{i:05d}") for i in range(SINGLES)]
    tasks += [(f"{name}-{j}", name) for name, n in LARGE.items() for j in range(n)]
    for i, (tid, cat) in enumerate(tasks):
        b, c = i % 7 != 0, i % 5 != 0  # regressions, improvements, both pass and both fail
        base.append(TaskResult(task_id=tid, passed=b, category=cat))
        cand.append(TaskResult(task_id=tid, passed=c, category=cat))
    return compare_results(base, cand, config=CampaignConfig(n_resamples=200, seed=1))


def expected_shown(report: AblationReport) -> set[str]:
    """The categories the rule picks, ranked here from the report's own figures."""
    ranked = sorted(report.categories, key=lambda c: (-c.n, -abs(c.uplift), c.category))
    return {c.category for c in ranked[:CATEGORY_CAP]}


def test_json_keeps_every_category() -> None:
    report = many_categories()
    total = SINGLES + len(LARGE)
    assert len(report.categories) == total
    assert len(json.loads(render(report, "json"))["categories"]) == total


def html_section(page: str) -> str:
    """The HTML page's categories section."""
    section = page[page.index('<section id="categories">') :]
    return section[: section.index("</section>")]


def html_names(page: str) -> list[str]:
    """The categories of the HTML page's category table, in order."""
    section = html_section(page)
    return re.findall(r"<tr><td>([^<]*)</td>", section[: section.index("</table>")])


def markdown_names(text: str) -> list[str]:
    """The categories of the Markdown report's category table, in order."""
    block = text[text.index("### Categories") :].split("\n\n")[0]
    rows = [line for line in block.splitlines() if line.startswith("| ")][1:]  # past the header
    return [r.split(" | ")[0].removeprefix("| ") for r in rows]


def terminal_part(text: str) -> str:
    """The terminal report's categories section."""
    part = text[text.index("Categories ─") :]
    return part[: part.index("Release gates")]


def terminal_names(text: str) -> list[str]:
    """The categories of the terminal report's category table, in order."""
    return re.findall(r"│ (single-\d{5}|large-[abc])\s", terminal_part(text))


def test_html_category_table_is_capped() -> None:
    report = many_categories()
    total = len(report.categories)
    page = render(report, "html")
    names = html_names(page)
    assert len(names) == CATEGORY_CAP
    assert set(names) == expected_shown(report)
    assert set(LARGE) <= set(names)
    section = html_section(page)
    assert (
        f"... and {total - CATEGORY_CAP} more categories ({total} in all; the full list is in "
        f"--format json); shown: the {CATEGORY_CAP} with the most tasks, ties broken by the "
        "largest |uplift|."
    ) in section
    assert '<figure class="plot">' in section
    assert len(page) < 2_000_000  # the whole page, plots included


def test_category_plot_is_capped() -> None:
    from matplotlib.figure import Figure

    report = many_categories()
    total = len(report.categories)
    figure = plots._categories(report, Figure)
    ax = figure.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == CATEGORY_CAP
    assert {re.sub(r" \(n=\d+\)$", "", s) for s in labels} == expected_shown(report)
    assert f"{CATEGORY_CAP} of {total} categories: the {CATEGORY_CAP} with the most tasks" in (
        ax.get_title(loc="left")
    )
    assert figure.get_size_inches()[1] < 0.8 + 0.4 * CATEGORY_CAP + 0.01


def test_markdown_and_terminal_category_tables_are_capped() -> None:
    report = many_categories()
    total = len(report.categories)
    more = f"and {total - CATEGORY_CAP} more categories ({total} in all"
    text = render(report, "markdown")
    names = markdown_names(text)
    assert len(names) == CATEGORY_CAP
    assert set(names) == expected_shown(report)
    assert more in text[text.index("### Categories") :]
    terminal = render(report, "terminal")
    names = terminal_names(terminal)
    assert len(names) == CATEGORY_CAP
    assert set(names) == expected_shown(report)
    assert more in terminal_part(terminal).replace("\n", " ")
    assert len(terminal.splitlines()) < 1000


def test_few_categories_are_all_shown_without_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    # The tables are checked; the HTML page's plots (glyph paths, no text) are left out (the
    # category plot's cap: test_category_plot_is_capped).
    monkeypatch.setattr(plots, "report_plots", lambda report: [])
    report = many_categories()
    few = report.model_copy(update={"categories": report.categories[:CATEGORY_CAP]})
    every = [c.category for c in few.categories]
    for fmt, names in (("html", html_names), ("markdown", markdown_names),
                       ("terminal", terminal_names)):  # fmt: skip
        text = render(few, fmt)
        assert "more categories" not in text, fmt
        assert names(text) == every, fmt
