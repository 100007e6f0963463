"""Release gates of a sequential campaign, judged by its anytime-valid decisions.

After a data-dependent stop a fixed-n p-value is no longer valid (STATISTICS.md section 10), so in
sequential mode (``report.sequential`` set) two gates of :data:`~ablation.analysis.gates.GATES`
are judged here instead of by their fixed-n forms in :mod:`ablation.analysis.builtin_gates`:

- ``"no significant regression"``: fails when the regression e-process reached
  ``1/alpha_per_candidate`` (the monitor's ``regression`` decision); error ≤ alpha per candidate
  under "no regression" at any stopping time (Ville's inequality). When every task ran and no
  rule stopped the campaign early (``fixed_n_descriptive`` false), the report's fixed-n figures
  are not descriptive and its summary sentence states the fixed-n one-sided test; the gate then
  also fails when that test rejects at ``alpha``, so a PASS never stands beside "candidate is
  worse". This adds false failures (at most ``alpha`` more under "no regression"), never false
  passes. A campaign left undecided before every task ran (interrupted), or stopped at its
  futility limit (``SequentialPolicy.futility_after``, "stop as inconclusive") before every task
  ran, reached neither look: the gate fails when the e-process rejected and is otherwise
  inconclusive, so it never passes beside a descriptive fixed-n "candidate is worse".
- ``"non-inferiority"``: passes when the confidence sequence's lower bound cleared ``-margin``
  (``non_inferior``), fails when its upper bound fell below (``inferior``), and is inconclusive
  (counted as a failure) when the campaign stopped for another reason first.
"""

from __future__ import annotations

from ablation.analysis.builtin_gates import (
    GATE_NONINFERIORITY,
    GATE_REGRESSION,
    BuiltinGate,
    judge_significance,
    regression_test,
    short,
)
from ablation.analysis.gate_status import could_not_run
from ablation.config import GatePolicy
from ablation.report import AblationReport, GateResult, SequentialSummary

__all__ = [
    "SequentialNonInferiorityGate",
    "SequentialRegressionGate",
    "sequential_noninferiority_gate",
    "sequential_regression_gate",
]


def _where(s: SequentialSummary) -> str:
    ci = s.interval
    return (
        f"after {s.pairs} pairs ({s.regressions} regressions, {s.improvements} improvements; "
        f"anytime-valid {100 * ci.confidence_level:g}% interval for the uplift "
        f"[{ci.low:+.4f}, {ci.high:+.4f}])"
    )


def sequential_regression_gate(s: SequentialSummary, name: str) -> GateResult:
    """The regression gate from the e-process (sequential mode)."""
    threshold = 1 / s.alpha_per_candidate
    test = (
        f"mixture e-process on discordant pairs, e-value {short(s.e_value)} vs 1/alpha = "
        f"{short(threshold)} (alpha {short(s.alpha)}"
        + (f" split over {s.candidates} candidates" if s.candidates > 1 else "")
        + ")"
    )
    if s.gate == "regression":
        return GateResult(
            name=name,
            status="fail",
            evidence=f"significant regression (sequential): {test} {_where(s)}. {s.reason}",
        )
    return GateResult(
        name=name,
        status="pass",
        evidence=(
            f"no significant regression (sequential): the e-process never reached 1/alpha "
            f"{_where(s)}; {test}."
        ),
    )


def sequential_noninferiority_gate(s: SequentialSummary, name: str) -> GateResult:
    """The non-inferiority gate from the confidence sequence (sequential mode)."""
    margin = s.margin if s.margin is not None else 0.0
    if s.gate == "non_inferior":
        return GateResult(
            name=name,
            status="pass",
            evidence=f"non-inferior (sequential): lower bound above -{short(margin)} {_where(s)}.",
        )
    if s.gate == "inferior":
        return GateResult(
            name=name,
            status="fail",
            evidence=f"inferior (sequential): upper bound below -{short(margin)} {_where(s)}.",
        )
    return GateResult(
        name=name,
        status="inconclusive",
        evidence=(
            f"inconclusive (sequential): the interval still crosses -{short(margin)} {_where(s)} "
            f"when the campaign stopped ({s.gate}); an inconclusive gate counts as a failure."
        ),
    )


class SequentialNonInferiorityGate(BuiltinGate):
    """The non-inferiority gate in sequential mode: the confidence sequence decides."""

    name = GATE_NONINFERIORITY

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return report.sequential is not None and policy.noninferiority_margin is not None

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        assert report.sequential is not None
        return [sequential_noninferiority_gate(report.sequential, GATE_NONINFERIORITY)]


class SequentialRegressionGate(BuiltinGate):
    """The regression gate in sequential mode: the e-process decides (always on there)."""

    name = GATE_REGRESSION

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return report.sequential is not None

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        s = report.sequential
        assert s is not None
        gate = sequential_regression_gate(s, GATE_REGRESSION)
        futile = s.gate == "futility" and s.fixed_n_descriptive
        if gate.status != "fail" and (s.gate == "undecided" or futile):  # neither look was reached
            how = (
                f"at its futility limit ({s.futility_after} pairs, stop as inconclusive)"
                if futile else "undecided"
            )  # fmt: skip
            return [could_not_run(
                GATE_REGRESSION, "the sequential decision",
                f"the campaign stopped {how} before every task ran ({s.tasks_run} of "
                f"{s.n_tasks} tasks): the e-process had not reached 1/alpha (e = "
                f"{s.e_value:.4g} < {1 / s.alpha_per_candidate:.4g}) {_where(s)}, and the fixed-n "
                "look planned at the end of the suite was not reached"
                + ("" if futile else " (resume the campaign)"),
            )]  # fmt: skip
        if gate.status == "fail" or s.fixed_n_descriptive:
            return [gate]
        p, desc = regression_test(report)
        fixed = judge_significance(GATE_REGRESSION, p, desc, list(report.regressions), alpha)
        if fixed.status == "fail":
            return [
                fixed.model_copy(
                    update={
                        "evidence": "significant regression at the end of the suite (every task "
                        f"ran, so the fixed-n test is valid): {fixed.evidence} The e-process did "
                        f"not reach 1/alpha {_where(s)}."
                    }
                )
            ]
        return [gate.model_copy(update={"pvalue": p, "evidence": f"{gate.evidence} {fixed.evidence}"})]
