"""A sequential campaign stopped at its futility limit leaves the regression gate inconclusive.

``SequentialPolicy.futility_after`` (``--stop-when-inconclusive-after``) stops the campaign "as
inconclusive" when no gate decided within that many pairs. The regression gate passed there: the
e-process had not reached 1/alpha, and the planned fixed-n look at the end of the suite was never
reached. Without a margin the verdict was PASS, exit 0, beside a summary sentence saying
"candidate is worse" with its interval below 0, on 60 of 120 tasks. The gate is now judged as for
a campaign left undecided before every task ran: a fail if the e-process rejected, otherwise
inconclusive. A futility limit at the suite's size reaches the end of the suite, where the
fixed-n look decides as usual.

Reference: scipy's one-sided binomial test of the stopped pairs' discordant counts (the
sentence's exact McNemar test) rejects at alpha; the e-value stays below 1/alpha.
"""

from __future__ import annotations

from scipy import stats as sps

from ablation import CampaignConfig, GatePolicy, SequentialPolicy, TaskResult, compare_results
from ablation.render._format import summary_sentence

N, ALPHA, GATE = 120, 0.05, "no significant regression"


def _rows(arm: str, broken: int) -> list[TaskResult]:
    """Tasks i % 4 != 0 pass; the candidate also fails those with i % 4 == 1 and i < ``broken``."""
    worse = arm == "candidate"
    return [
        TaskResult(task_id=f"t{i}", arm=arm, passed=i % 4 != 0 and not (worse and i % 4 == 1 and i < broken))  # type: ignore[arg-type]
        for i in range(N)
    ]


def _report(futility_after: int, broken: int = 40):  # type: ignore[no-untyped-def]
    config = CampaignConfig(
        n_resamples=200, alpha=ALPHA, sequential=SequentialPolicy(futility_after=futility_after),
        gates=GatePolicy(),
    )  # fmt: skip
    return compare_results(_rows("baseline", broken), _rows("candidate", broken), config=config)


def test_a_futility_stop_leaves_the_regression_gate_inconclusive() -> None:
    report = _report(60)
    s = report.sequential
    assert s is not None and s.gate == "futility" and s.tasks_run == 60 < N
    assert s.e_value < 1 / ALPHA  # the e-process did not reject
    b, c = report.mcnemar.b, report.mcnemar.c
    assert sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue < ALPHA
    assert summary_sentence(report).startswith("Candidate is worse")
    gate = next(g for g in report.gates if g.name == GATE)
    assert gate.status == "inconclusive", gate
    assert "futility" in gate.evidence and "60 of 120 tasks" in gate.evidence
    assert report.verdict == "fail"


def test_a_futility_limit_at_the_suite_size_reaches_the_fixed_n_look() -> None:
    report = _report(N, broken=12)
    s = report.sequential
    assert s is not None and s.tasks_run == N and not s.fixed_n_descriptive
    b, c = report.mcnemar.b, report.mcnemar.c
    p = sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue
    gate = next(g for g in report.gates if g.name == GATE)
    assert gate.status == ("fail" if p < ALPHA else "pass"), gate
