"""Release gates: turn a report and a :class:`~ablation.config.GatePolicy` into a verdict.

Gates, in the order they are reported:

0. ``"paired tasks present"`` (always, shown only when it fails): a report in which no task was
   paired (every task excluded or present on one side only) has nothing to judge and fails,
   never passes silently.
1. ``"critical tasks must not regress"`` (``policy.critical_must_not_regress``, on by default):
   fails when any critical task regressed, whatever any p-value says.
2. ``"complete comparison"`` (``policy.require_complete``, on by default): every expected pair is
   present and each arm completed at least ``policy.min_completed`` of its trials
   (:mod:`ablation.analysis.completeness`).
3. ``"non-inferiority"`` (``policy.noninferiority_margin``, opt-in): reads the report's exact
   non-inferiority test (the analysis computes it when a margin is configured). ``"non-inferior"``
   passes; ``"inconclusive"`` is reported as inconclusive and counts as a failure; ``"regression"``
   fails; a missing test fails (nothing is recomputed here), unless no task was paired: then
   the test could not run and the gate is inconclusive.
4. ``"non-inferiority of METRIC"`` (``policy.metric_margins``, opt-in): the report's paired t
   non-inferiority test of each named metric, judged the same way; with fewer than two pairs
   holding the metric in both arms the test could not run and the gate is inconclusive, saying
   why (:func:`ablation.analysis.gate_data.too_few_pairs`).
5. ``"no significant regression"`` (``policy.no_significant_regression``, on by default):
   one-sided exact McNemar for "candidate worse" (with repeated runs: the one-sided exact
   sign-flip test on the per-task pass-fraction differences; with no paired task no test runs
   and the gate is inconclusive), and
6. ``"no significant latency regression"`` (``policy.max_latency_ratio``, opt-in): one-sided test
   that the geometric-mean latency ratio exceeds the limit (inconclusive when the ratio cannot be
   tested: :mod:`ablation.analysis.latency_gate`).

Gates 5 and 6 are significance tests that fail when significant; each is judged at ``alpha`` on
its own (no Holm adjustment between them: adjusting gates that fail when significant would
protect against false failures and let a regression that fails alone pass beside another gate). A default gate the user turned off is
listed with status ``"off"``, the :class:`~ablation.config.GatePolicy` field that turned it off,
and what it would have said; a gate whose test could not run is ``"inconclusive"``, never a pass
(:mod:`ablation.analysis.gate_status`). The verdict is ``"fail"`` as soon as one gate is neither
``"pass"`` nor ``"off"`` (:func:`~ablation.analysis.gate_status.verdict_of`).

In sequential mode (``report.sequential`` set) gates 3 and 5 are judged by the anytime-valid
decisions of :mod:`ablation.analysis.sequential_gates` (gate 5 is then always on), not by fixed-n
p-values, which are not valid after a data-dependent stop.

Every gate is an object of one shape (:class:`Gate`): a ``name``, ``applies(policy, report)``,
``judge(policy, report, alpha) -> list[GateResult]``, ``fail_if_significant`` and an optional
``holm_family``. :data:`GATES` lists them (the built-in ones are in
:mod:`ablation.analysis.builtin_gates`, :mod:`ablation.analysis.sequential_gates` and
:mod:`ablation.analysis.latency_gate`) and
:func:`evaluate_gates` judges every gate that applies, in list order; a gate added with
:func:`register_gate` is judged like the built-in ones and reads its settings from
``GatePolicy.custom[gate.name]``. A ``GatePolicy.custom`` key that names no added gate is read
by no gate (the built-in gates read none): like a margin of a metric the results do not hold, it
is listed as an inconclusive gate of that name, naming the gates added; so is a key whose added
gate did not apply or returned no result (it was configured but judged nothing). An added gate
whose ``applies`` or ``judge`` raised an :class:`Exception`, or whose ``judge`` returned anything
but a list of :class:`~ablation.report.GateResult`, is an inconclusive gate naming the error: a
check that could not run is neither a pass nor a fail. Results of a
fail-if-significant gate that ran no test (turned off, or no data for the test) are listed after
the tested ones. Gates sharing a ``holm_family``
are gates that pass when their test is significant: their p-values are Holm-adjusted across the
family (``adjusted_pvalue``), and a passing one whose adjusted p-value is not below ``alpha``
fails. A fail-if-significant gate has no family (see above).

The gates judge at the alpha the report was built at (``report.provenance.alpha``): the claim in
``summary``, ``uplift_test`` and the evidence use that test, so :func:`evaluate_gates` refuses
another alpha rather than judge a test the report does not hold.

Assumptions: the report's counts, intervals and non-inferiority decision come from
:mod:`ablation.analysis`; the gates only judge them (and run the exact McNemar tail, which is
cheap and exact). A gate is stateless: ``judge`` reads only its arguments.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Protocol

from ablation.analysis.builtin_gates import (
    GATE_COMPLETENESS,
    GATE_CRITICAL,
    GATE_INVENTORY,
    GATE_LATENCY,
    GATE_METRIC,
    GATE_NONINFERIORITY,
    GATE_REGRESSION,
    CompletenessGate,
    CriticalGate,
    InventoryGate,
    MetricNonInferiorityGate,
    NonInferiorityGate,
    RegressionGate,
    short,
)
from ablation.analysis.gate_status import could_not_run, verdict_of
from ablation.analysis.latency_gate import LatencyGate
from ablation.analysis.pass_note import verdict_note
from ablation.analysis.sequential_gates import (
    SequentialNonInferiorityGate,
    SequentialRegressionGate,
)
from ablation.config import GatePolicy
from ablation.errors import ConfigError, exception_message
from ablation.report import AblationReport, GateResult
from ablation.schema import safe_text

__all__ = [
    "GATES",
    "GATE_COMPLETENESS",
    "GATE_CRITICAL",
    "GATE_INVENTORY",
    "GATE_LATENCY",
    "GATE_METRIC",
    "GATE_NONINFERIORITY",
    "GATE_REGRESSION",
    "Gate",
    "evaluate_gates",
    "exit_code_for",
    "register_gate",
]


class Gate(Protocol):
    """The shape of a release gate.

    Attributes:
        name: The gate's name (its results' ``name``, and its key in ``GatePolicy.custom``).
        fail_if_significant: The gate is a test that fails when significant; it is judged at
            ``alpha`` on its own and never Holm-adjusted.
        holm_family: Gates that pass when significant and share this name are Holm-adjusted
            together (``None``: judged on its own).
    """

    name: str
    fail_if_significant: bool
    holm_family: str | None

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        """Whether the gate is judged (listed) for this policy and report."""
        ...

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        """The gate's results (none, one, or one per judged item such as a metric)."""
        ...


#: The gates :func:`evaluate_gates` judges, in the order they are listed.
GATES: list[Gate] = [
    InventoryGate(), CriticalGate(), CompletenessGate(), SequentialNonInferiorityGate(),
    NonInferiorityGate(), MetricNonInferiorityGate(), SequentialRegressionGate(), RegressionGate(),
    LatencyGate(),
]


#: The built-in gates: they read no ``GatePolicy.custom`` key.
_BUILTIN: tuple[Gate, ...] = tuple(GATES)


class _UnreadSetting:
    """A ``GatePolicy.custom`` key that no added gate is named: an inconclusive gate of that name."""

    fail_if_significant = False
    holm_family: str | None = None

    def __init__(self, name: str, added: list[str]) -> None:
        self.name, self.added = name, added

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return True

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        added = ", ".join(repr(n) for n in self.added) if self.added else "none"
        return [could_not_run(
            self.name, f"the gate {self.name!r} set in GatePolicy.custom",
            f"no gate of that name was added with register_gate (gates added: {added}), so no "
            "gate reads the setting",
        )]  # fmt: skip


def _unread_settings(policy: GatePolicy) -> list[Gate]:
    """One :class:`_UnreadSetting` per ``policy.custom`` key that no added gate is named."""
    added = [g.name for g in GATES if not any(g is b for b in _BUILTIN)]
    return [_UnreadSetting(key, added) for key in sorted(policy.custom) if key not in added]


def _is_added(gate: Gate) -> bool:
    """Whether ``gate`` was added with :func:`register_gate` (not built in, not an unread key)."""
    return not isinstance(gate, _UnreadSetting) and not any(gate is b for b in _BUILTIN)


#: Characters of an added gate's error message its inconclusive result keeps (a line of the
#: gates table: the gate's own code is where the rest is).
GATE_MESSAGE_LIMIT = 500


def _cut(message: str) -> str:
    """``message`` made encodable and cut to :data:`GATE_MESSAGE_LIMIT` characters, saying so."""
    if len(message) > GATE_MESSAGE_LIMIT:
        message = f"{message[:GATE_MESSAGE_LIMIT]}... [{len(message) - GATE_MESSAGE_LIMIT} more characters cut]"
    return safe_text(message)


def _judge_added(gate: Gate, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
    """An added gate's results; what it could not judge is one inconclusive result of its name.

    Inconclusive: ``applies`` or ``judge`` raised an :class:`Exception` (named with its message),
    ``judge`` returned anything but a list of :class:`GateResult`, or the gate's
    ``GatePolicy.custom`` key is set and the gate did not apply or judged nothing (the setting
    would otherwise be ignored). An added gate without a key that does not apply is not listed.
    """
    configured = gate.name in policy.custom
    test = f"the gate {gate.name!r} added with register_gate"
    try:
        if not gate.applies(policy, report):
            if not configured:
                return []
            return [could_not_run(
                gate.name, test, "it is set in GatePolicy.custom but did not apply to this "
                "policy and report (its applies() returned False), so it judged nothing",
            )]  # fmt: skip
        results = gate.judge(policy, report, alpha)
    except Exception as exc:  # a user's gate: its error is an inconclusive gate, never pass/fail
        return [could_not_run(gate.name, test, f"it raised {type(exc).__name__}: {_cut(exception_message(exc))}")]
    if not isinstance(results, (list, tuple)) or not all(isinstance(r, GateResult) for r in results):
        wrong = results if not isinstance(results, (list, tuple)) else next(
            r for r in results if not isinstance(r, GateResult)
        )
        return [could_not_run(
            gate.name, test, f"its judge() returned {type(wrong).__name__} where a list of "
            "GateResult was expected",
        )]  # fmt: skip
    if not results and configured:
        return [could_not_run(
            gate.name, test, "it is set in GatePolicy.custom but its judge() returned no "
            "result, so it judged nothing",
        )]  # fmt: skip
    return list(results)


def register_gate(gate: Gate) -> Gate:
    """Add ``gate`` to :data:`GATES` (after the built-in gates) and return it.

    Raises:
        ValueError: when a fail-if-significant gate asks for a Holm family (adjusting gates that
            fail when significant would let a regression that fails alone pass beside another).
    """
    if gate.fail_if_significant and gate.holm_family is not None:
        raise ValueError(
            f"gate {gate.name!r} fails when significant: it is judged on its own, not in a Holm "
            "family"
        )
    GATES.append(gate)
    return gate


def _holm(results: list[tuple[Gate, GateResult]], alpha: float) -> list[tuple[Gate, GateResult]]:
    """Holm-adjust the p-values of the results of gates sharing a family; a passing result whose
    adjusted p-value is not below ``alpha`` fails."""
    families: dict[str, list[int]] = defaultdict(list)
    for i, (gate, r) in enumerate(results):
        if gate.holm_family is not None and r.pvalue is not None and r.status != "off":
            families[gate.holm_family].append(i)
    if not families:
        return results
    from ablation.stats import adjust_pvalues

    out = list(results)
    for family, members in families.items():
        raw = [float(results[i][1].pvalue or 0.0) for i in members]  # members have a p-value
        for i, adj in zip(members, adjust_pvalues(raw, method="holm"), strict=True):
            gate, r = results[i]
            update: dict[str, object] = {"adjusted_pvalue": float(adj)}
            if r.status == "pass" and adj >= alpha:
                update["status"] = "fail"
                update["evidence"] = (
                    f"{r.evidence} Holm-adjusted across the {len(members)} gate(s) of family "
                    f"{family!r}: p = {short(float(adj))} >= alpha {short(alpha)}: fails."
                )
            out[i] = (gate, r.model_copy(update=update))
    return out


def evaluate_gates(
    report: AblationReport,
    policy: GatePolicy,
    *,
    alpha: float | None = None,
) -> AblationReport:
    """Judge ``report`` against ``policy`` with every gate of :data:`GATES` that applies.

    Args:
        report: The analysed report (its existing gates are replaced).
        policy: Which gates apply.
        alpha: Significance level of the test gates: ``None`` or the report's own
            (``report.provenance.alpha``, the level of its summary and ``uplift_test``).

    Returns:
        A copy of the report with ``gates`` and ``verdict`` set.

    Raises:
        ConfigError: if ``alpha`` is not in (0, 1), or differs from the report's alpha (the
            summary sentence, ``uplift_test`` and the gates would then judge at two levels;
            rebuild the report at that alpha instead).
    """
    a = report.provenance.alpha if alpha is None else alpha
    if not 0 < a < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {a!r}")
    if a != report.provenance.alpha:
        raise ConfigError(
            f"alpha {a!r} differs from the alpha {report.provenance.alpha!r} the report was built "
            "at: its summary, uplift_test and evidence use that level. Rebuild the report at "
            f"alpha {a!r} (CampaignConfig(alpha={a!r}) or --alpha) to judge it there."
        )
    judged = [
        (gate, result)
        for gate in [*GATES, *_unread_settings(policy)]
        for result in (
            _judge_added(gate, policy, report, a)
            if _is_added(gate)
            else gate.judge(policy, report, a) if gate.applies(policy, report) else []
        )
    ]
    judged = _holm(judged, a)
    untested = [g.fail_if_significant and (r.status == "off" or r.pvalue is None) for g, r in judged]
    gates = [r for _, (_, r) in sorted(zip(untested, judged, strict=True), key=lambda x: x[0])]
    verdict = verdict_of(gates)
    note = verdict_note(report, gates, a, policy.max_latency_ratio)
    return report.model_copy(update={"gates": gates, "verdict": verdict, "verdict_note": note})


def exit_code_for(report: AblationReport) -> int:
    """The process exit code for a judged report: 0 when the verdict is pass, 2 when it fails."""
    return 0 if report.verdict == "pass" else 2
