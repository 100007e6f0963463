"""A numeric comparison's result (:class:`NumericComparison`) and its two release gates.

:func:`ablation.analysis.numeric.compare_numeric` computes the comparison, and
:func:`completeness_gate` and :func:`regression_gate` judge it, named and worded as the report's
gates of :mod:`ablation.analysis.completeness` and :mod:`ablation.analysis.builtin_gates`
(:mod:`ablation.analysis.numeric` says when each passes). A regression gate that passes beside an
interval of the mean difference lying wholly past its threshold (possible when the interval's
``confidence_level`` is below ``1 - 2 alpha``, the two-sided level of the gate's one-sided test)
says so in its evidence, as the verdict note of a pass-rate report does
(:mod:`ablation.analysis.pass_note`): a PASS never stands silently beside an interval on the
harmful side, and every rendering shows the evidence.

Assumptions: ``gate_pvalue`` is the gate's one-sided p (``None`` when every per-task difference
is the same and the t is undefined); ``ci_low``/``ci_high`` the paired t interval of the mean
difference at ``confidence_level``, ``None`` when it is not shown.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ablation.analysis.builtin_gates import GATE_REGRESSION, short
from ablation.analysis.completeness import GATE_COMPLETENESS
from ablation.analysis.gate_status import could_not_run, listed_ids, turned_off
from ablation.config import GatePolicy
from ablation.report import GateResult

__all__ = ["GATE_NAMES", "NumericComparison", "completeness_gate", "regression_gate"]

#: The two gates' names, those of the pass-rate report's gates.
GATE_NAMES = (GATE_COMPLETENESS, GATE_REGRESSION)
_SHOWN = 10



class NumericComparison(BaseModel):
    """The paired analysis of one numeric field (see the module docstring).

    ``only_baseline``/``only_candidate``: ids with a value in that arm only; ``missing_baseline``/
    ``missing_candidate``: expected ids with no value in that arm; ``unknown``: ids outside
    ``expected_ids``; ``trials``: per arm ``[trials with a value, expected trials]``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str
    n_pairs: int
    baseline_mean: float
    candidate_mean: float
    mean_difference: float
    ci_low: float | None
    ci_high: float | None
    confidence_level: float
    ci_note: str | None = None
    t_pvalue: float | None
    wilcoxon_pvalue: float
    sign_pvalue: float
    regression_delta: float
    lower_is_better: bool = False
    regressions: list[str]
    improvements: list[str]
    only_baseline: list[str]
    only_candidate: list[str]
    gate_pvalue: float | None
    verdict: str
    n_expected: int = 0
    missing_baseline: list[str] = Field(default_factory=list)
    missing_candidate: list[str] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list)
    trials: dict[str, list[int]] = Field(default_factory=dict)
    alpha: float = 0.05
    gates: list[GateResult] = Field(default_factory=list)
    t_note: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when every gate holds (or is off), 2 when one fails."""
        return 0 if self.verdict == "pass" else 2


def completeness_gate(c: NumericComparison, policy: GatePolicy) -> GateResult:
    """``"complete comparison"``: every expected task paired, each arm's share of trials with a
    value at least ``policy.min_completed`` (worded as :mod:`ablation.analysis.completeness`)."""
    lack_b, lack_c = set(c.missing_baseline), set(c.missing_candidate)
    missing = [t for t in dict.fromkeys([*c.missing_baseline, *c.missing_candidate])]
    facts = []
    if missing:
        kinds = (
            ("baseline only", len(lack_c - lack_b)), ("candidate only", len(lack_b - lack_c)),
            ("in neither arm", len(lack_b & lack_c)),
        )
        facts.append(
            f"{len(missing)} of {c.n_expected} expected task(s) without a pair ("
            + "; ".join(f"{n} {what}" for what, n in kinds if n) + f"), first: {listed_ids(missing, _SHOWN)}"
        )
    for arm, (done, total) in c.trials.items():
        share = done / total if total else 0.0
        if not total or share < policy.min_completed:
            facts.append(
                f"{arm} has a value for {done} of {total} expected trial(s) ({100 * share:.1f}%, "
                f"below {100 * policy.min_completed:g}%)"
            )
    counts = ", ".join(f"{arm} {done}/{total} trials with a value" for arm, (done, total) in c.trials.items())
    name = GATE_NAMES[0]
    if not policy.require_complete:
        return GateResult(
            name=name, status="off", tasks=missing,
            evidence=f"{turned_off('require_complete')}; "
            + ("; ".join(facts) if facts else f"all {c.n_expected} expected tasks paired, {counts}")
            + ".",
        )  # fmt: skip
    if facts:
        return GateResult(name=name, status="fail", evidence="; ".join(facts) + ".", tasks=missing)
    return GateResult(
        name=name, status="pass",
        evidence=f"all {c.n_expected} expected task(s) paired; {counts} "
        f"(at least {100 * policy.min_completed:g}% each).",
    )  # fmt: skip


def regression_gate(c: NumericComparison, policy: GatePolicy) -> GateResult:
    """``"no significant regression"``: one-sided paired t of ``d + delta < 0`` at ``alpha``, on
    its own (worded as :func:`ablation.analysis.builtin_gates.judge_significance`)."""
    p, a = c.gate_pvalue, c.alpha
    desc = (
        f"one-sided paired t on per-task {c.field} (H1: candidate worse"
        f"{' (higher: lower is better)' if c.lower_is_better else ''} by more than "
        f"{c.regression_delta:g}), mean difference {c.mean_difference:+.4g} over {c.n_pairs} pairs"
    )
    if p is None:  # every difference is the same: the t is undefined, the direction is not
        shift = c.mean_difference - c.regression_delta if c.lower_is_better else -(c.mean_difference + c.regression_delta)
        on, off = policy.no_significant_regression, turned_off("no_significant_regression")
        if shift <= 0:  # no task is worse by more than the delta: nothing regressed
            said = f"{desc}; {c.t_note}; no task is worse by more than {c.regression_delta:g}"
            return GateResult(name=GATE_NAMES[1], status="pass" if on else "off",
                              evidence=f"{said}: passes." if on else f"{off}; {said}: would have passed.")  # fmt: skip
        if on:  # every task is worse by the same amount: not a test
            return could_not_run(GATE_NAMES[1], f"the {desc}", str(c.t_note))
        return GateResult(name=GATE_NAMES[1], status="off", evidence=f"{off}; {desc}; could not have run: {c.t_note}.")
    failed = p < a
    if not policy.no_significant_regression:
        would = "would have failed" if failed else "would have passed"
        return GateResult(
            name=GATE_NAMES[1], status="off", pvalue=p,
            evidence=f"{turned_off('no_significant_regression')}; {desc}; p = {short(p)} vs "
            f"alpha {short(a)}: {would}.",
        )  # fmt: skip
    outcome = "significant: fails" if failed else "not significant: passes"
    return GateResult(
        name=GATE_NAMES[1], status="fail" if failed else "pass", pvalue=p,
        tasks=list(c.regressions) if failed else [],
        evidence=f"{desc}; p = {short(p)} (each fail-if-significant gate at alpha on its own, "
        f"not adjusted) {'<' if failed else '>='} alpha {short(a)}: {outcome}."
        + ("" if failed else _interval_past(c)),
    )  # fmt: skip


def _interval_past(c: NumericComparison) -> str:
    """Words for a passing regression gate beside an interval of the mean difference lying
    wholly past the gate's threshold (``-regression_delta``; ``+regression_delta`` when lower is
    better), or ``""`` (no interval shown, or one that reaches the threshold)."""
    if c.ci_low is None or c.ci_high is None:
        return ""
    edge = (c.regression_delta if c.lower_is_better else -c.regression_delta) or 0.0  # never -0
    if not (c.ci_low > edge if c.lower_is_better else c.ci_high < edge):
        return ""
    return (
        f" The {100 * c.confidence_level:g}% CI of the mean difference [{c.ci_low:.4g}, "
        f"{c.ci_high:.4g}] lies {'above' if c.lower_is_better else 'below'} {edge:g}, but the "
        f"gate's one-sided test gives p = {short(c.gate_pvalue or 0.0)} >= alpha {short(c.alpha)}: "
        f"the interval is at another level than the gate (a one-sided test at alpha {short(c.alpha)} "
        f"matches a two-sided {100 * (1 - 2 * c.alpha):g}% interval), and the test decides."
    )
