"""A sequential campaign that stops "non-inferior" beside figures on the harmful side does not
pass its regression gate. It stood "Verdict: PASS (all 4 gates passed)" beside "Candidate is
worse: ..." and an anytime-valid 90% interval of [-20.0 pp, -0.4 pp], then the same PASS with a
note: the gate now fails when the anytime-valid interval lies below 0 (the confidence sequence is
valid at any stop), and is inconclusive when only the descriptive figures (the sentence's
fixed-n test, the headline interval) say worse.

The data: 400 tasks, 76 regressions and 43 improvements spread evenly, margin 0.2; the seed sets
the sequential order. The references are the same numbers without the stop (a fixed-n report:
the regression gate fails) and a seed whose stop comes with both intervals across 0 (a pass, no
note).
"""

from __future__ import annotations

import re

import pytest
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.config import SequentialPolicy
from ablation.render import plots, render
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


def test_a_stop_beside_an_anytime_valid_interval_below_0_fails_the_regression_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plots, "report_plots", lambda report: [])  # the gate's words, not the figures
    report = _report(19)
    s = report.sequential
    assert s is not None and s.gate == "non_inferior" and s.fixed_n_descriptive
    assert s.interval.high < 0  # the stop's own interval: worse
    gate = next(g for g in report.gates if g.name == "no significant regression")
    assert gate.status == "fail" and report.verdict == "fail"
    assert "the anytime-valid interval lies below 0" in gate.evidence and "e = 1.283 < 20" in gate.evidence
    for fmt in ("markdown", "html", "json"):
        assert "the anytime-valid interval lies below 0" in " ".join(render(report, fmt).split()), fmt
    assert re.search(r"no significant regression │ FAIL", " ".join(render(report, "terminal").split()))


def test_a_stop_beside_a_descriptive_headline_below_0_is_inconclusive() -> None:
    report = _report(0)
    s = report.sequential
    assert s is not None and s.gate == "non_inferior"
    assert s.interval.high >= 0 and report.uplift.ci.high < 0
    assert str(report.summary) == "regression"  # the sentence: "Candidate is worse ... (descriptive"
    gate = next(g for g in report.gates if g.name == "no significant regression")
    assert gate.status == "inconclusive" and report.verdict == "fail"
    ci = report.uplift.ci
    assert f"the 95% Tango score interval [{ci.low:+.4f}, {ci.high:+.4f}]" in gate.evidence
    t = report.table  # the sentence's exact test, by scipy
    p = sps.binomtest(t.regressions, t.regressions + t.improvements, 0.5, alternative="greater").pvalue
    assert f"p = {p:.4g} < alpha 0.05" in gate.evidence and "below 0, descriptive" in gate.evidence


def test_references_fixed_n_fails_and_a_stop_across_0_has_no_note() -> None:
    assert _report(19, sequential=False).verdict == "fail"  # the same numbers, no stop
    across = _report(1)
    assert across.verdict == "pass" and across.sequential is not None
    assert across.sequential.interval.high >= 0 and across.uplift.ci.high >= 0
    assert across.verdict_note is None
