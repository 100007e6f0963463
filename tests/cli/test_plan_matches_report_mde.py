"""``ablation plan`` by default prints the MDE the report will print for a suite of that size.

The report's "smallest regression the gate could detect at 80% power" is the MDE of the
regression gate's one-sided exact McNemar test at ``alpha`` and the observed discordance. For
several suite sizes, discordances and alphas, a report is built by :func:`compare_results` from
results with that many tasks and flips, and ``plan --tasks N --discordance P --alpha A`` (and
``plan --results`` of the same results written as files) must print the same figure. The
reference is the report, not the planning code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.cli import main

# (tasks, regressions, improvements, alpha): discordances 0.2, 0.1, 0.1, 0.05; each gate passes
CASES = [(40, 3, 5, 0.05), (120, 5, 7, 0.05), (200, 8, 12, 0.1), (300, 6, 9, 0.01)]


def _results(n: int, regressions: int, improvements: int) -> tuple[list[TaskResult], list[TaskResult]]:
    """``n`` tasks, the first ``regressions`` passing then failing, the next ``improvements`` the
    reverse, the rest passing in both arms."""
    base, cand = [], []
    for i in range(n):
        before, after = (True, False) if i < regressions else (False, True) if i < regressions + improvements else (True, True)
        base.append(TaskResult(task_id=f"t{i}", arm="baseline", passed=before))
        cand.append(TaskResult(task_id=f"t{i}", arm="candidate", passed=after))
    return base, cand


def _plan_exact(out: str) -> float:
    """The exact test's MDE ``plan`` printed (``0.0365 (3.65 points; ...``)."""
    found = re.search(r"with the exact McNemar test the report runs: ([0-9.]+) \(", out)
    assert found, out
    return float(found.group(1))


def _report_mde(n: int, b: int, c: int, alpha: float) -> tuple[float, str]:
    report = compare_results(*_results(n, b, c), config=CampaignConfig(alpha=alpha))
    assert report.n_paired == n and (report.table.regressions, report.table.improvements) == (b, c)
    mde = report.minimum_detectable_effect
    assert mde is not None and report.verdict_note is not None
    return mde, report.verdict_note


@pytest.mark.parametrize(("n", "b", "c", "alpha"), CASES)
def test_plan_default_prints_the_report_mde(
    n: int, b: int, c: int, alpha: float, capsys: pytest.CaptureFixture[str]
) -> None:
    mde, note = _report_mde(n, b, c, alpha)
    assert f"smallest regression the gate could detect at 80% power: {100 * mde:.1f} pp" in note
    psi = (b + c) / n
    for extra in ([], ["--one-sided"]):
        assert main(["plan", "--tasks", str(n), "--discordance", repr(psi), "--alpha", str(alpha), *extra]) == 0
        out = capsys.readouterr().out
        assert _plan_exact(out) == pytest.approx(mde, abs=5e-5), out  # printed to 4 decimals
        assert "one-sided (H1 candidate worse" in out and "could detect at 80% power" in out


def test_plan_results_prints_the_report_mde(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n, b, c, alpha = CASES[0]
    files = []
    for arm, rows in zip(("before", "after"), _results(n, b, c), strict=True):
        path = tmp_path / f"{arm}.jsonl"
        path.write_text("".join(json.dumps({"id": r.task_id, "passed": r.passed}) + "\n" for r in rows))
        files.append(str(path))
    assert main(["plan", "--results", *files, "--alpha", str(alpha)]) == 0
    assert _plan_exact(capsys.readouterr().out) == pytest.approx(_report_mde(n, b, c, alpha)[0], abs=5e-5)


def test_two_sided_is_the_old_plan_and_differs(capsys: pytest.CaptureFixture[str]) -> None:
    n, b, c, alpha = CASES[1]
    mde = _report_mde(n, b, c, alpha)[0]
    assert main(["plan", "--tasks", str(n), "--discordance", repr((b + c) / n), "--two-sided"]) == 0
    out = capsys.readouterr().out
    assert "0.05 two-sided" in out and "could detect" not in out
    assert _plan_exact(out) > mde + 1e-3  # a two-sided test at the same alpha needs a larger effect


def test_one_sided_and_two_sided_together_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--tasks", "100", "--discordance", "0.1", "--one-sided", "--two-sided"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "--one-sided and --two-sided" in captured.err
