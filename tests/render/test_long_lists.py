"""Long lists are capped in the HTML and Markdown reports, with a count; JSON keeps them whole.

A comparison with thousands of regressions made a page that opened with a table of every one.
The reference is the report itself: its JSON lists (regressions, improvements, exclusions) are
compared with what each page shows and with the counts written under the shown part.
"""

from __future__ import annotations

import json
import re

import pytest

from ablation import TaskResult, compare_results
from ablation.config import CampaignConfig
from ablation.render import markdown as md
from ablation.render import plots, render
from ablation.render._sections import TABLE_CAP


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    ids = [f"t{i:04d}" for i in range(1000)]
    # 700 regressions, 200 improvements, 100 both pass; 130 tasks only in the baseline
    baseline = [TaskResult(task_id=t, passed=i < 800) for i, t in enumerate(ids)]
    candidate = [TaskResult(task_id=t, passed=i >= 700) for i, t in enumerate(ids)]
    baseline += [TaskResult(task_id=f"x{i:03d}", passed=True) for i in range(130)]
    return compare_results(baseline, candidate, config=CampaignConfig(n_resamples=200))


def _count(text: str, what: str) -> tuple[int, int] | None:
    found = re.search(rf"and (\d+) more {what} \((\d+) in all; the full list is in --format json\)", text)
    return None if found is None else (int(found[1]), int(found[2]))


def test_json_keeps_every_item(report) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(render(report, "json"))
    assert len(data["regressions"]) == 700 and len(data["improvements"]) == 200
    assert len(data["excluded"]) == 130


@pytest.mark.parametrize("details", [False, True])
def test_html_shows_the_first_items_and_counts_the_rest(report, details: bool) -> None:  # type: ignore[no-untyped-def]
    page = render(report, "html", details=details)
    section = page[page.index('id="regressions"') : page.index('id="improvements"')]
    shown = re.findall(r"<td>(?:<a [^>]*>)?(t\d{4})", section)
    assert shown == report.regressions[:TABLE_CAP]
    assert _count(section, "regressions") == (700 - TABLE_CAP, 700)
    improvements = page[page.index('id="improvements"') :]
    assert re.findall(r"<span>(t\d{4})</span>", improvements) == report.improvements[:TABLE_CAP]
    assert _count(page, "improvements") == (200 - TABLE_CAP, 200)
    assert _count(page, "exclusions") == (130 - TABLE_CAP, 130)
    excluded = page[page.index('id="excluded"') :]
    assert len(re.findall(r"<td>x\d{3}</td>", excluded)) == TABLE_CAP


@pytest.mark.parametrize("details", [False, True])
def test_markdown_shows_the_first_items_and_counts_the_rest(report, details: bool) -> None:  # type: ignore[no-untyped-def]
    text = render(report, "markdown", details=details)
    table = text[text.index("### Regressions (700)") : text.index("### Improvements")]
    rows = re.findall(r"^\| \d+ \| (t\d{4}) \|", table, flags=re.MULTILINE)
    assert rows == report.regressions[: md.REGRESSION_CAP]
    assert _count(table, "regressions") == (700 - md.REGRESSION_CAP, 700)
    assert _count(text, "improvements") == (200 - md.IMPROVEMENT_CAP, 200)
    excluded = text[text.index("### Excluded") :]
    cap = md.EXCLUDED_CAP
    assert f"... and {130 - cap} more" in excluded
    assert f"x{cap - 1:03d}" in excluded and f"x{cap:03d}" not in excluded
