"""A sequential campaign that stops "non-inferior" passes; when its anytime-valid interval, or the
descriptive headline interval, lies entirely below 0 the verdict line says that the pass is
non-inferiority within the margin, not "no worse". It stood silently, "Verdict: PASS (all 4
gates passed)", beside "Candidate is worse: ..." and an anytime-valid 90% interval of
[-20.0 pp, -0.4 pp] (a fixed-n report passing beside an interval below 0 has had its note since
``analysis/pass_note.py``; an early stop was left out as "descriptive", although its own
anytime-valid interval is not).

The data: 400 tasks, 76 regressions and 43 improvements spread evenly, margin 0.2; the seed sets
the sequential order. The references are the same numbers without the stop (a fixed-n report:
the regression gate fails) and a seed whose stop comes with both intervals across 0 (no note).
"""

from __future__ import annotations

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.config import SequentialPolicy
from ablation.render import render
from ablation.report import AblationReport

N, B, C, MARGIN = 400, 76, 43, 0.2


def _arms() -> tuple[list[TaskResult], list[TaskResult]]:
    kinds = ["both pass"] * N
    for j in range(B):
        kinds[j * N // B] = "regression"
    rest = [i for i in range(N) if kinds[i] == "both pass"]
    for j in range(C):
        kinds[rest[j * len(rest) // C]] = "improvement"
    base = [TaskResult(task_id=f"t{i}", passed=k != "improvement") for i, k in enumerate(kinds)]
    cand = [TaskResult(task_id=f"t{i}", passed=k != "regression") for i, k in enumerate(kinds)]
    return base, cand


def _report(seed: int, sequential: bool = True) -> AblationReport:
    config = CampaignConfig(
        seed=seed, n_resamples=200, gates=GatePolicy(noninferiority_margin=MARGIN),
        sequential=SequentialPolicy() if sequential else None,
    )  # fmt: skip
    return compare_results(*_arms(), config=config)


def test_a_pass_beside_an_anytime_valid_interval_below_0_says_so() -> None:
    report = _report(19)
    s = report.sequential
    assert s is not None and s.gate == "non_inferior" and s.fixed_n_descriptive
    assert report.verdict == "pass" and s.interval.high < 0  # the stop's own interval: worse
    note = report.verdict_note or ""
    assert note.startswith("the anytime-valid 90% interval (-20.0 pp to -0.4 pp) lies below 0")
    assert "passed as non-inferior within the margin 0.2" in note and "e = 1.283 < 20" in note
    for fmt in ("markdown", "terminal", "html"):
        assert "not as no worse than" in " ".join(render(report, fmt).split()), fmt


def test_a_pass_beside_a_descriptive_headline_below_0_says_so() -> None:
    report = _report(0)
    s = report.sequential
    assert s is not None and s.gate == "non_inferior" and report.verdict == "pass"
    assert s.interval.high >= 0 and report.uplift.ci.high < 0
    assert str(report.summary) == "regression"  # the sentence: "Candidate is worse ... (descriptive"
    assert (report.verdict_note or "").startswith(
        "the descriptive 95% Tango score interval (-15.3 pp to -0.3 pp) lies below 0"
    )


def test_references_fixed_n_fails_and_a_stop_across_0_has_no_note() -> None:
    assert _report(19, sequential=False).verdict == "fail"  # the same numbers, no stop
    across = _report(1)
    assert across.verdict == "pass" and across.sequential is not None
    assert across.sequential.interval.high >= 0 and across.uplift.ci.high >= 0
    assert across.verdict_note is None
