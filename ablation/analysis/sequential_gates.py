"""Release gates of a sequential campaign, judged by its anytime-valid decisions.

After a data-dependent stop a fixed-n p-value is no longer valid (STATISTICS.md section 10), so in
sequential mode (``report.sequential`` set) two gates of :data:`~ablation.analysis.gates.GATES`
are judged here instead of by their fixed-n forms in :mod:`ablation.analysis.builtin_gates`:

- ``"no significant regression"``: fails when the regression e-process reached
  ``1/alpha_per_candidate`` by the stop: the monitor's ``regression`` decision, or the e-value at
  the pair where another rule (a critical regression, say) stopped the campaign first; error ≤
  alpha per candidate under "no regression" at any stopping time (Ville's inequality). It also
  fails when the anytime-valid interval lies below 0 at the stop (the confidence sequence is a
  test of its own, valid at any stopping time; the two together can fail falsely up to twice
  alpha, never pass falsely more). Otherwise:

  - every task ran (``fixed_n_descriptive`` false: the end of the suite, or a decision at its
    last task): the report's fixed-n figures are not descriptive and its summary sentence states
    the fixed-n one-sided test; the gate also fails when that test rejects at ``alpha``, so a
    PASS never stands beside "candidate is worse". This adds false failures (at most ``alpha``
    more under "no regression"), never false passes;
  - the campaign stopped "non-inferior" before every task ran: the gate passes when none of the
    report's fixed-n figures (descriptive after the stop) says "worse": the one-sided test its
    summary sentence states, and every uplift interval it lists. That stop is the one decision
    that can pass, and its pass is non-inferiority within the margin, not "no worse": the
    evidence says so. When one of those figures says "worse", the gate is inconclusive: it
    cannot pass beside them, and the planned fixed-n look was not reached;
  - any other stop before every task ran (a critical regression, "inferior", the futility
    limit, or undecided at a gap: interrupted): neither the e-process nor the fixed-n look
    planned at the end of the suite was reached, so the gate is inconclusive (it could not
    run). A stop that is no decision of this gate is never its pass.
- ``"non-inferiority"``: passes when the confidence sequence's lower bound cleared ``-margin``
  (``non_inferior``), fails when its upper bound fell below (``inferior``, or an upper bound
  below ``-margin`` at a stop another rule decided first: the sequence is valid at any stop),
  and is otherwise inconclusive (counted as a failure): the campaign stopped for another reason
  first, with the interval across ``-margin`` or, above it, before every critical task ran.
"""

from __future__ import annotations

import math

from ablation.analysis.builtin_gates import (
    GATE_NONINFERIORITY,
    GATE_REGRESSION,
    BuiltinGate,
    judge_significance,
    no_pair,
    regression_test,
    short,
)
from ablation.analysis.gate_status import could_not_run
from ablation.config import GatePolicy
from ablation.report import AblationReport, GateResult, SequentialSummary
from ablation.report_items import stop_words

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


def _rejected(s: SequentialSummary) -> bool:
    """Whether the regression e-process reached ``1/alpha_per_candidate`` by the stop.

    A rejection ends the campaign with the ``regression`` decision, so at a stop by another rule
    the e-value can have reached the threshold only at the stopping pair (the critical rule is
    checked first): the stored e-value, the one at the stop, then decides, compared in logs as
    :meth:`~ablation.stats.SequentialRegressionTest.rejected` compares them.
    """
    if s.gate == "regression":
        return True
    return s.e_value > 0 and math.log(s.e_value) >= -math.log(s.alpha_per_candidate)


def sequential_regression_gate(s: SequentialSummary, name: str) -> GateResult:
    """The regression gate from the e-process (sequential mode): a fail when it reached 1/alpha
    by the stop, else a pass on the e-process alone (:class:`SequentialRegressionGate` adds the
    rules of the other stops)."""
    threshold = 1 / s.alpha_per_candidate
    test = (
        f"mixture e-process on discordant pairs, e-value {short(s.e_value)} vs 1/alpha = "
        f"{short(threshold)} (alpha {short(s.alpha)}"
        + (f" split over {s.candidates} candidates" if s.candidates > 1 else "")
        + ")"
    )
    if _rejected(s):
        first = "" if s.gate == "regression" else (
            f" The e-process reached 1/alpha at the pair where the campaign stopped "
            f"{stop_words(s)}; the rejection is valid at any stopping time."
        )  # fmt: skip
        return GateResult(
            name=name,
            status="fail",
            evidence=f"significant regression (sequential): {test} {_where(s)}. {s.reason}{first}",
        )
    return GateResult(
        name=name,
        status="pass",
        evidence=(
            f"no significant regression (sequential): the e-process never reached 1/alpha "
            f"{_where(s)}; {test}."
        ),
    )


def _interval_fail(s: SequentialSummary, gate: GateResult) -> GateResult:
    """The regression gate's failure when the anytime-valid interval lies below 0 at the stop."""
    return gate.model_copy(update={"status": "fail", "evidence": (
        f"significant regression (sequential): the anytime-valid interval lies below 0 {_where(s)} "
        f"when the campaign stopped {stop_words(s)}; the confidence sequence is valid at any "
        f"stopping time, so the candidate is worse, although the e-process did not reach 1/alpha "
        f"(e = {short(s.e_value)} < {short(1 / s.alpha_per_candidate)})."
    )})  # fmt: skip


def _descriptive_worse(report: AblationReport, alpha: float) -> str:
    """What of the report's fixed-n figures says the candidate is worse ("" when none does): the
    one-sided test its summary sentence states, the headline interval or another uplift
    interval lying below 0."""
    said = []
    p, _ = regression_test(report)
    if p < alpha or report.summary == "regression":
        level = report.uplift_test.alpha if report.uplift_test is not None and p >= alpha else alpha
        said.append(f"the summary sentence's one-sided test gives p = {short(p)} < alpha {short(level)}")
    below = [iv for iv in (report.uplift.ci, *report.uplift.others()) if iv.high < 0]
    if below:
        said.append(
            ", ".join(f"the {100 * iv.confidence_level:g}% {iv.method} [{iv.low:+.4f}, {iv.high:+.4f}]" for iv in below)
            + (" lie" if len(below) > 1 else " lies") + " below 0"
        )
    return " and ".join(said)


def _non_inferior_pass(s: SequentialSummary, gate: GateResult) -> GateResult:
    """The pass of the regression gate at a non-inferior stop, said as what it is."""
    margin = f" {short(s.margin)}" if s.margin is not None else ""
    return gate.model_copy(update={"evidence": (
        f"not significant (sequential): the e-process did not reach 1/alpha (e = "
        f"{short(s.e_value)} < {short(1 / s.alpha_per_candidate)}) {_where(s)}; the "
        f"campaign stopped non-inferior within the margin{margin} before every task ran ("
        f"{s.tasks_run} of {s.n_tasks} tasks), so this pass is that decision's: it does not show "
        "that the candidate is no worse than the baseline."
    )})  # fmt: skip


def sequential_noninferiority_gate(s: SequentialSummary, name: str) -> GateResult:
    """The non-inferiority gate from the confidence sequence (sequential mode)."""
    margin = s.margin if s.margin is not None else 0.0
    ci = s.interval
    if s.gate == "non_inferior":
        return GateResult(
            name=name,
            status="pass",
            evidence=(
                f"non-inferior (sequential): lower bound above -{short(margin)} {_where(s)}. "
                f"{s.reason}"
            ),
        )
    if s.gate == "inferior" or ci.high < -margin:
        first = f". {s.reason}" if s.gate == "inferior" else (
            f" when the campaign stopped {stop_words(s)} (the sequence is valid at any stop)."
        )  # fmt: skip
        return GateResult(
            name=name,
            status="fail",
            evidence=f"inferior (sequential): upper bound below -{short(margin)} {_where(s)}{first}",
        )
    where = (
        f"the lower bound is above -{short(margin)} {_where(s)}, but the non-inferior stop waits "
        "until every critical task has run"
        if ci.low > -margin
        else f"the interval still crosses -{short(margin)} {_where(s)}"
    )
    return GateResult(
        name=name,
        status="inconclusive",
        evidence=(
            f"inconclusive (sequential): {where} when the campaign stopped {stop_words(s)}; an "
            "inconclusive gate counts as a failure."
        ),
    )


class SequentialNonInferiorityGate(BuiltinGate):
    """The non-inferiority gate in sequential mode: the confidence sequence decides."""

    name = GATE_NONINFERIORITY

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return report.sequential is not None and policy.noninferiority_margin is not None

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        assert report.sequential is not None
        unpaired = no_pair(report, GATE_NONINFERIORITY, "the sequential non-inferiority decision")
        if unpaired is not None:
            return [unpaired]
        return [sequential_noninferiority_gate(report.sequential, GATE_NONINFERIORITY)]


class SequentialRegressionGate(BuiltinGate):
    """The regression gate in sequential mode: the e-process decides (always on there)."""

    name = GATE_REGRESSION

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return report.sequential is not None

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        s = report.sequential
        assert s is not None
        unpaired = no_pair(report, GATE_REGRESSION, "the sequential decision")
        if unpaired is not None:
            return [unpaired]
        gate = sequential_regression_gate(s, GATE_REGRESSION)
        if gate.status == "fail":
            return [gate]
        if s.interval.high < 0:  # the confidence sequence is a test of its own, valid at any stop
            return [_interval_fail(s, gate)]
        if s.fixed_n_descriptive and s.gate == "non_inferior":
            harmful = _descriptive_worse(report, alpha)
            if harmful:
                return [could_not_run(
                    GATE_REGRESSION, "the sequential decision",
                    f"the campaign stopped non-inferior before every task ran ({s.tasks_run} of "
                    f"{s.n_tasks} tasks) with the e-process short of 1/alpha (e = "
                    f"{short(s.e_value)} < {short(1 / s.alpha_per_candidate)}) {_where(s)}, while "
                    f"{harmful}, descriptive after this stop: the gate cannot pass beside them, and "
                    "the fixed-n look planned at the end of the suite was not reached (run every "
                    "task: without --sequential, or with a smaller margin)",
                )]  # fmt: skip
            return [_non_inferior_pass(s, gate)]
        if s.fixed_n_descriptive:  # a stop that is no decision of this gate: neither look reached
            return [could_not_run(
                GATE_REGRESSION, "the sequential decision",
                f"the campaign stopped {stop_words(s)} before every task ran ({s.tasks_run} of "
                f"{s.n_tasks} tasks), a stop that is no decision of this gate: the e-process had "
                f"not reached 1/alpha (e = "
                f"{s.e_value:.4g} < {1 / s.alpha_per_candidate:.4g}) {_where(s)}, and the fixed-n "
                "look planned at the end of the suite was not reached"
                + (" (resume the campaign)" if s.gate == "undecided" else ""),
            )]  # fmt: skip
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
