"""A drill-down's diff is bounded in every report format: at most DIFF_PANELS output limits of the
format in all (each piece cut at one, as before), the rest counted in a note, as the viewer's
task page shows it. Two outputs of 300 lines of 3000 characters that differ on every other line
were a diff of 300 pieces, each within the limit: about 900 KB of HTML beside output panels cut
at 20,000 characters.
"""

from __future__ import annotations

import pytest

from ablation import AblationTask, CampaignConfig, TaskResult
from ablation.analysis.build import report_from_results
from ablation.render import html, markdown, plots, render, terminal
from ablation.render._drilldown import DIFF_PANELS
from ablation.report import AblationReport

LIMITS = {"terminal": terminal.OUTPUT_LIMIT, "markdown": markdown.OUTPUT_LIMIT, "html": html.OUTPUT_LIMIT}


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots, which no test here reads."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _report() -> AblationReport:
    """One regression whose outputs differ on every other of 300 long lines."""
    before = "\n".join(f"{i:04d}" + "a" * 3000 for i in range(300))
    after = "\n".join(f"{i:04d}" + ("a" if i % 2 else "b") * 3000 for i in range(300))
    tasks = [AblationTask(task_id="t0", input_data=0, expected_output=before)]
    results = [TaskResult(task_id="t0", arm="baseline", passed=True, output=before),
               TaskResult(task_id="t0", arm="candidate", passed=False, output=after)]  # fmt: skip
    return report_from_results(results, tasks=tasks, config=CampaignConfig(n_resamples=100))


@pytest.mark.parametrize("fmt", sorted(LIMITS))
def test_a_diff_of_many_pieces_is_cut_and_says_so(fmt: str) -> None:
    report = _report()
    [detail] = report.details
    assert len(detail.diff) > 100 and sum(len(s.text) for s in detail.diff) > 20 * LIMITS[fmt]
    without = report.model_copy(update={"details": [detail.model_copy(update={"diff": []})]})
    full, bare = (render(r, fmt, details=True, width=90) for r in (report, without))
    budget = DIFF_PANELS * LIMITS[fmt]
    assert len(full) - len(bare) < 2 * budget, (fmt, len(full) - len(bare))
    assert f"The diff is cut after {budget} characters; the rest is not shown" in " ".join(full.split())
