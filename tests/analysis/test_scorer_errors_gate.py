"""A quality scorer that failed on a trial is an error: its metric gate is inconclusive (never a
pass on the pairs that happened to be scored), and the errors section lists it by scorer and
error type in every format."""

from __future__ import annotations

import json

import pytest

from ablation import AblationTask, TaskResult, compare_results, run_ablation_campaign
from ablation.config import CampaignConfig, GatePolicy
from ablation.render import plots, render

GATE = "non-inferiority of judge"
MARGIN = GatePolicy(metric_margins={"judge": 0.1})


def _results(arm: str, errors: dict[str, str]) -> list[TaskResult]:
    """104 completed, passing trials scored 0.8 (100 pairs scored in both arms after the errors
    below: a margin needs MEAN_DIFFERENCE_MIN_N); the tasks in ``errors`` have the scorer's error."""
    return [
        TaskResult(
            task_id=f"t{i:02d}", arm=arm, passed=True, latency_s=1.0,  # type: ignore[arg-type]
            quality={} if f"t{i:02d}" in errors else {"judge": 0.8},
            quality_errors={"judge": errors[f"t{i:02d}"]} if f"t{i:02d}" in errors else {},
        )
        for i in range(104)
    ]  # fmt: skip


def _compare(base_errors: dict[str, str], cand_errors: dict[str, str]):  # type: ignore[no-untyped-def]
    return compare_results(
        _results("baseline", base_errors), _results("candidate", cand_errors),
        config=CampaignConfig(gates=MARGIN),
    )  # fmt: skip


def _gate(report):  # type: ignore[no-untyped-def]
    return next(g for g in report.gates if g.name == GATE)


def test_without_scorer_errors_the_gate_passes() -> None:
    report = _compare({}, {})
    assert _gate(report).status == "pass"
    assert report.errors is not None and report.errors.scorer_groups == []
    assert report.verdict == "pass" and report.exit_code == 0


def test_a_scorer_error_in_either_arm_makes_the_metric_gate_inconclusive() -> None:
    report = _compare(
        {"t03": "RuntimeError: judge crashed"},
        {"t01": "ValueError: bad output", "t02": "ValueError: worse output", "t05": "RuntimeError: x"},
    )
    gate = _gate(report)
    assert gate.status == "inconclusive"
    assert gate.evidence.startswith(
        "inconclusive: quality scorer 'judge' failed on 1 of 104 baseline and 3 of 104 candidate "
        "trial(s), first: RuntimeError: judge crashed."
    )
    ni = report.metric_noninferiority["judge"]
    assert ni.decision == "inconclusive"
    assert "100 pairs (the pairs with a value in both arms)" in ni.method
    assert "quality scorer 'judge' failed on 1 of 104 baseline and 3 of 104 candidate" in ni.method
    assert report.verdict == "fail" and report.exit_code == 2
    q = report.quality["judge"]
    assert (q.scorer_errors_baseline, q.scorer_errors_candidate) == (1, 3)
    assert q.n_pairs == 100 and q.n_left_out == 4  # an errored score is a missing value


def test_scorer_errors_are_grouped_by_arm_scorer_and_error_type() -> None:
    report = _compare(
        {"t03": "RuntimeError: judge crashed"},
        {"t01": "ValueError: bad output", "t02": "ValueError: worse output", "t05": "RuntimeError: x"},
    )
    assert report.errors is not None
    assert report.errors.groups == []  # every trial completed
    assert report.errors.completed == {"baseline": 104, "candidate": 104}
    got = [
        (g.arm, g.stage, g.scorer, g.error_type, g.count, g.n_tasks, g.task_ids, g.example)
        for g in report.errors.scorer_groups
    ]
    assert got == [
        ("baseline", "scorer", "judge", "RuntimeError", 1, 1, ["t03"], "RuntimeError: judge crashed"),
        ("candidate", "scorer", "judge", "ValueError", 2, 2, ["t01", "t02"], "ValueError: bad output"),
        ("candidate", "scorer", "judge", "RuntimeError", 1, 1, ["t05"], "RuntimeError: x"),
    ]


def test_every_format_shows_the_scorer_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])  # the errors section, not the figures
    report = _compare({"t03": "RuntimeError: judge crashed"}, {"t01": "ValueError: bad output"})
    terminal = render(report, "terminal", width=200)
    assert "Scorer errors (2 trials)" in terminal
    assert "baseline / scorer judge / RuntimeError: 1 trial(s) on 1 task(s): t03" in terminal
    assert "candidate / scorer judge / ValueError: 1 trial(s) on 1 task(s): t01" in terminal
    assert "e.g. ValueError: bad output" in terminal
    markdown = render(report, "markdown")
    assert "### Scorer errors (2 trials)" in markdown
    assert "| baseline | scorer judge | RuntimeError | 1 | 1 | t03 | RuntimeError: judge crashed |" in markdown
    html = render(report, "html")
    assert "Scorer errors (2 trials)" in html and "scorer judge" in html
    doc = json.loads(render(report, "json"))
    assert [g["scorer"] for g in doc["errors"]["scorer_groups"]] == ["judge", "judge"]
    assert "scorer judge" in render(report, "junit")


class _Judge:
    """A scorer that raises on most outputs and scores the rest."""

    name = "judge"

    def __call__(self, output: object, task: AblationTask) -> float:
        if int(task.task_id[1:]) % 4:
            raise RuntimeError(f"judge crashed on {task.task_id}")
        return 0.9


def test_a_campaign_with_a_crashing_scorer_cannot_pass_its_metric_gate() -> None:
    tasks = [AblationTask(task_id=f"t{i:02d}", input_data=i, expected_output=i) for i in range(12)]
    report = run_ablation_campaign(
        lambda x: x, lambda x: x, tasks, quality_scorers=[_Judge()],
        config=CampaignConfig(gates=MARGIN),
    )  # fmt: skip
    gate = _gate(report)
    assert gate.status == "inconclusive"
    assert "quality scorer 'judge' failed on 9 of 12 baseline and 9 of 12 candidate trial(s)" in gate.evidence
    assert "first: RuntimeError: judge crashed on t01" in gate.evidence
    assert report.verdict == "fail" and report.exit_code == 2
    assert report.errors is not None
    (base, cand) = report.errors.scorer_groups
    assert (base.arm, base.scorer, base.error_type, base.count, base.n_tasks) == (
        "baseline", "judge", "RuntimeError", 9, 9,
    )
    assert (cand.arm, cand.count) == ("candidate", 9)
    assert "baseline / scorer judge / RuntimeError: 9 trial(s) on 9 task(s)" in render(report, "terminal", width=200)
    assert "| candidate | scorer judge | RuntimeError | 9 | 9 |" in render(report, "markdown")


@pytest.mark.parametrize("errors", [{"t00": "boom"}, {}])
def test_a_message_without_a_type_is_an_error(errors: dict[str, str]) -> None:
    report = _compare(errors, {})
    assert report.errors is not None
    kinds = [g.error_type for g in report.errors.scorer_groups]
    assert kinds == (["error"] if errors else [])
    assert _gate(report).status == ("inconclusive" if errors else "pass")
