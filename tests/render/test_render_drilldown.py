"""Drill-downs show the expected output and the verifier's note, escaped, in every format."""

from __future__ import annotations

import pytest

from ablation import AblationTask, CampaignConfig, TaskResult
from ablation.analysis.build import report_from_results
from ablation.render import plots, render

EVIL = "<script>alert('x')</script>"


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _report():
    tasks = [
        AblationTask(task_id="t1", input_data=1, expected_output=f"want {EVIL}"),
        AblationTask(task_id="t2", input_data=2, expected_output="ok"),
    ]
    results = [
        TaskResult(task_id="t1", arm="baseline", passed=True, output="fine"),
        TaskResult(task_id="t1", arm="candidate", passed=False, output=EVIL,
                   verifier_note=f"timeout: ran past 2 s {EVIL}"),
        TaskResult(task_id="t2", arm="baseline", passed=True, output="ok"),
        TaskResult(task_id="t2", arm="candidate", passed=True, output="ok"),
    ]
    return report_from_results(results, tasks=tasks, config=CampaignConfig(n_resamples=200))


def test_drilldown_has_expected_output_and_note() -> None:
    report = _report()
    detail = report.details[0]
    assert detail.expected_output == f"want {EVIL}"
    assert detail.candidate is not None and detail.candidate.note is not None
    terminal = render(report, "terminal", details=True, width=100)
    assert "expected: want" in terminal and "verifier: timeout: ran past 2 s" in terminal
    for fmt in ("markdown", "html"):
        text = render(report, fmt, details=True)
        assert EVIL not in text, fmt
        assert "&lt;script&gt;" in text and "timeout: ran past 2 s" in text, fmt
