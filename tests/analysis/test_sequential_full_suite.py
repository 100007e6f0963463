"""A sequential campaign that ran every task: its gate and its fixed-n sentence agree.

No rule stopped such a campaign, so its fixed-n figures are not descriptive and the summary
sentence states the one-sided exact McNemar test. The regression gate once read only the
e-process, and printed PASS beside "Candidate is worse, p < alpha" and an interval below 0.
References: ``scipy.stats.binomtest`` for the one-sided exact McNemar p-value.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, SequentialPolicy, compare_results

CONFIG = CampaignConfig(sequential=SequentialPolicy(), n_resamples=200, seed=0)
GATE = "no significant regression"


def _records(table: list[tuple[bool, bool]]) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    before = [{"id": f"t{i:03d}", "passed": b} for i, (b, _) in enumerate(table)]
    after = [{"id": f"t{i:03d}", "passed": c} for i, (_, c) in enumerate(table)]
    return before, after


def test_eight_regressions_in_ten_tasks_fail_the_gate_the_sentence_names() -> None:
    table = [(True, False)] * 8 + [(False, True), (True, True)]
    report = compare_results(*_records(table), config=CONFIG)
    s = report.sequential
    assert s is not None and s.gate == "end_of_suite" and not s.fixed_n_descriptive
    assert s.e_value < 1 / s.alpha_per_candidate  # the e-process alone would pass it
    p = sps.binomtest(8, 9, 0.5, alternative="greater").pvalue
    assert report.uplift_test is not None
    assert abs(report.uplift_test.pvalue_worse - p) < 1e-12 and report.summary == "regression"
    gate = next(g for g in report.gates if g.name == GATE)
    assert gate.status == "fail" and abs((gate.pvalue or 0) - p) < 1e-12
    assert report.verdict == "fail" and report.exit_code == 2
    assert gate.tasks == [f"t{i:03d}" for i in range(8)]


@settings(max_examples=60, deadline=None)
@given(
    counts=st.tuples(
        st.integers(0, 30), st.integers(0, 15), st.integers(0, 15), st.integers(0, 10)
    ).filter(lambda c: sum(c) > 0),
    order=st.randoms(use_true_random=False),
)
def test_a_full_suite_pass_never_stands_beside_candidate_is_worse(
    counts: tuple[int, int, int, int], order: object
) -> None:
    n11, n10, n01, n00 = counts
    table = [(True, True)] * n11 + [(True, False)] * n10 + [(False, True)] * n01 + [(False, False)] * n00
    order.shuffle(table)  # type: ignore[attr-defined]
    report = compare_results(
        *_records(table),
        config=CONFIG.model_copy(update={"gates": GatePolicy(critical_must_not_regress=False)}),
    )
    s = report.sequential
    assert s is not None and report.uplift_test is not None
    gate = next(g for g in report.gates if g.name == GATE)
    worse = report.uplift_test.pvalue_worse < report.uplift_test.alpha
    if not s.fixed_n_descriptive:
        # the sentence and the gate state the same test
        assert (report.summary == "regression") == worse
        if worse:
            assert gate.status == "fail" and report.verdict == "fail"
        if gate.status == "pass" and report.uplift.ci.high < 0:
            assert report.verdict_note is not None and "lies below 0" in report.verdict_note
    if s.gate == "regression":
        assert gate.status == "fail"
