"""Drill-downs that answer "why": every run of both arms, the task input, and a word diff.

References: the trials themselves as the store returns them (every run, with its verdict), the
suite's own input and expected output, and the diff's defining property (the kept and deleted
words rebuild the baseline's output, the kept and inserted words the candidate's).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import (
    AblationTask,
    CampaignConfig,
    RunStore,
    TaskResult,
    compare_results,
    run_ablation_campaign,
)
from ablation.analysis.details import MAX_DIFF_WORDS, word_diff
from ablation.analysis.stored import report_stored_campaign
from ablation.render import plots, render

TASKS = [
    AblationTask(task_id=f"t{i}", input_data={"q": f"say {i}"}, expected_output=f"the answer is {i}")
    for i in range(6)
]
HOSTILE = "an answer was <script>alert(1)</script>"


def _flaky_candidate() -> Any:
    """Fails run 1 of tasks t0-t3 only (a flaky regression run 0 would hide)."""
    seen: dict[str, int] = {}

    def cand(x: dict[str, str]) -> str:
        seen[x["q"]] = seen.get(x["q"], 0) + 1
        broken = seen[x["q"]] == 2 and int(x["q"][4:]) < 4
        return HOSTILE if broken else "the answer is " + x["q"][4:]

    return cand


def _base(x: dict[str, str]) -> str:
    return "the answer is " + x["q"][4:]


def _rebuilt(segments: list[Any], keep: str) -> str:
    return "".join(s.text for s in segments if s.op in ("equal", keep))


def test_every_run_input_expected_and_diff_survive_the_store(tmp_path: Path) -> None:
    config = CampaignConfig(runs=3, concurrency=1, n_resamples=200)
    report = run_ablation_campaign(_base, _flaky_candidate(), TASKS, config=config, store=tmp_path / "s.db")
    assert report.regressions == ["t0", "t1", "t2", "t3"]
    with RunStore(tmp_path / "s.db") as store:
        stored = {(r.task_id, r.arm, r.run): r for r in store.results(store.latest_campaign().campaign_id)}
        again, _ = report_stored_campaign(store)
    for d in report.details:
        task = next(t for t in TASKS if t.task_id == d.task_id)
        assert (d.input, d.expected_output) == (task.input_data, task.expected_output)
        for arm, views in (("baseline", d.baseline_runs), ("candidate", d.candidate_runs)):
            assert [v.run for v in views] == [0, 1, 2]
            assert [v.passed for v in views] == [stored[d.task_id, arm, k].passed for k in range(3)]
        assert d.candidate is not None and d.candidate.run == 1 and d.candidate.passed is False
        assert d.baseline is not None and d.baseline.passed is True
        assert _rebuilt(d.diff, "delete") == d.baseline.output
        assert _rebuilt(d.diff, "insert") == HOSTILE
    assert again.details == report.details  # `ablation report` keeps input, expected and runs


def test_renderers_show_runs_input_and_an_escaped_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])  # the drill-downs, not the figures
    report = run_ablation_campaign(
        _base, _flaky_candidate(), TASKS, config=CampaignConfig(runs=3, concurrency=1, n_resamples=200)
    )
    terminal = render(report, "terminal", details=True, width=200)
    assert "candidate runs: run 0: PASS, run 1: FAIL, run 2: PASS" in terminal
    assert '"q": "say 0"' in terminal
    assert "[-the-]{+an+}" in terminal
    for fmt in ("markdown", "html"):
        text = render(report, fmt, details=True)
        assert "<script>" not in text
        assert "<ins>&lt;script&gt;alert(1)&lt;/script&gt;</ins>" in text
        assert "candidate runs: run 0: PASS, run 1: FAIL, run 2: PASS" in text
        assert "&quot;q&quot;: &quot;say 0&quot;" in text


def test_compare_results_shows_every_run_of_result_lists() -> None:
    def trials(arm: str, fail_run: int | None) -> list[TaskResult]:
        return [
            TaskResult(task_id=t, arm=arm, run=r, passed=r != fail_run, output=f"{arm} {t} {r}")
            for t in ("a", "b") for r in range(3)
        ]  # fmt: skip

    report = compare_results(trials("baseline", None), trials("candidate", 2))
    assert report.regressions == ["a", "b"]
    d = report.details[0]
    assert [(v.run, v.passed) for v in d.candidate_runs] == [(0, True), (1, True), (2, False)]
    assert d.candidate is not None and d.candidate.output == "candidate a 2"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80), st.integers(0, 3))
def test_word_diff_rebuilds_both_outputs(a: str, b: str, repeat: int) -> None:
    a, b = a * repeat or a, b
    segments = word_diff(a, b)
    assert _rebuilt(segments, "delete") == a and _rebuilt(segments, "insert") == b
    assert all(x.op != y.op for x, y in itertools.pairwise(segments))


def test_word_diff_of_long_outputs_is_bounded_and_still_exact() -> None:
    a = " ".join(f"w{i}" for i in range(MAX_DIFF_WORDS))
    b = a.replace("w7 ", "seven ") + " tail"
    segments = word_diff(a, b)
    assert _rebuilt(segments, "delete") == a and _rebuilt(segments, "insert") == b
    assert {"op": "insert", "text": "seven"} in [s.model_dump() for s in segments]


def test_tool_sequences_mark_the_first_divergence() -> None:
    from ablation.render._drilldown import tool_lines
    from ablation.report import PairDetail, TrialView

    def pair(base: list[str], cand: list[str]) -> list[str]:
        views = [TrialView(status="completed", passed=p, tools=t) for p, t in ((True, base), (False, cand))]
        return tool_lines(PairDetail(task_id="x", kind="regression", baseline=views[0], candidate=views[1]))

    assert pair(["lookup"], []) == ["baseline tools: >> lookup", "candidate tools: >> (none)",
                                    "first divergence at tool call 1"]  # fmt: skip
    assert pair(["lookup", "policy"], ["lookup", "guess"])[2] == "first divergence at tool call 2"
    assert pair(["lookup", "policy"], ["lookup"])[1] == "candidate tools: lookup -> >> (end)"
    assert pair(["lookup"], ["lookup"]) == ["baseline tools: lookup", "candidate tools: lookup", "same tool calls"]
    assert pair([], []) == []
