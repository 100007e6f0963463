"""Errors and timeouts are named in every format by default, and errored regressions are marked."""

from __future__ import annotations

import json

import pytest

from ablation.analysis.build import report_from_results
from ablation.config import CampaignConfig
from ablation.render import plots, render
from ablation.schema import TaskResult


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _report():
    results = []
    for i in range(30):
        tid = f"t{i:02d}"
        results.append(TaskResult(task_id=tid, arm="baseline", passed=True))
        if i < 17:
            results.append(
                TaskResult(
                    task_id=tid, arm="candidate", status="error", passed=False, error_stage="agent",
                    error_type="ConnectionError", error_message=f"reset by peer on {tid}",
                )
            )
        elif i < 19:
            results.append(
                TaskResult(
                    task_id=tid, arm="candidate", status="timeout", passed=False,
                    error_stage="timeout", error_type="Timeout", error_message="over 300 s",
                )
            )
        else:
            results.append(TaskResult(task_id=tid, arm="candidate", passed=i != 20))
    return report_from_results(results, config=CampaignConfig(n_resamples=200))


def test_the_error_summary_counts_by_arm_stage_and_type() -> None:
    report = _report()
    assert report.errors is not None
    groups = [(g.arm, g.stage, g.error_type, g.count) for g in report.errors.groups]
    assert groups == [("candidate", "agent", "ConnectionError", 17), ("candidate", "timeout", "Timeout", 2)]
    assert report.errors.completed == {"baseline": 30, "candidate": 11}
    assert report.errored_regressions == [f"t{i:02d}" for i in range(19)]
    assert "t20" in report.regressions and "t20" not in report.errored_regressions


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html", "json"])
def test_every_format_names_the_errors_without_details(fmt: str) -> None:
    text = render(_report(), fmt)
    if fmt == "json":
        data = json.loads(text)
        assert data["errors"]["groups"][0]["error_type"] == "ConnectionError"
        assert data["errored_regressions"][0] == "t00"
        return
    assert "Errors and timeouts (19 trials)" in text
    assert "ConnectionError" in text and "reset by peer on t00" in text
    assert "ERROR" in text  # the errored regressions are marked in the regressions table
    assert "candidate: 11 of 30 trials completed" in text
