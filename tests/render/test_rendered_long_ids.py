"""The terminal, Markdown and HTML reports name long task ids by a bounded, marked text.

A task id may hold a million characters (``TASK_ID_LIMIT``). The reports printed every id whole
wherever they named a task: ten critical regressions with 1 Mi-character ids made a terminal report
of 47 MB that took rich about a minute to wrap (a regressions table, a drill-down title per task,
the excluded and error lists). The JSON report keeps ids whole, for programs.
"""

from __future__ import annotations

import hashlib

import pytest

from ablation import TaskResult, compare_results
from ablation.render import render
from ablation.schema import NAME_SHOWN

#: Ids that share their first 300,000 characters: only the digest of the whole tells them apart.
IDS = ["x" * 300_000 + f"{i:02d}" for i in range(12)]


def _report() -> object:
    """Regressions (some critical, some errored), improvements, flaky tasks and an excluded one."""
    def rows(arm: str) -> list[TaskResult]:
        out = []
        for i, tid in enumerate(IDS[:-1] if arm == "baseline" else IDS):  # the last one: excluded
            for run in range(2):
                passed = (i % 3 != 0) if arm == "baseline" else (i % 3 == 0 or (i == 4 and run == 0))
                error = arm == "candidate" and i % 3 == 1
                out.append(TaskResult(task_id=tid, arm=arm, run=run, passed=passed and not error,  # type: ignore[arg-type]
                                      status="error" if error else "completed", critical=i < 4,
                                      error_type="Boom" if error else None, error_stage="agent" if error else None))
        return out

    return compare_results(rows("baseline"), rows("candidate"))


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_a_report_with_long_ids_stays_bounded_and_names_them_apart(fmt: str) -> None:
    report = _report()
    assert report.regressions and report.improvements and report.excluded  # type: ignore[attr-defined]
    assert max(map(len, report.regressions)) == len(IDS[0])  # type: ignore[attr-defined]  # whole in the JSON
    text = render(report, fmt, details=True, width=200)  # type: ignore[arg-type]
    assert len(text) < len(IDS) * 20 * (NAME_SHOWN + 100)  # at most ~20 bounded names per task
    for tid in report.regressions:  # type: ignore[attr-defined]
        assert hashlib.sha256(tid.encode()).hexdigest()[:16] in text, fmt
