"""What a passing verdict rests on, in words for the verdict line (``AblationReport.verdict_note``).

A pass of the significant-regression gate means only that the gate's one-sided test did not
reach ``alpha``. The note names how large a regression that test could have detected (the
report's minimum detectable effect, 80% power, at the observed discordance), and, when the
headline interval lies entirely below 0 while the exact test did not reject, says so in the same
line, so a PASS never stands silently beside an interval on the harmful side.

Assumptions: the report's ``minimum_detectable_effect`` is that of the gate's test (one-sided,
H1 "candidate worse"); a sequential report that stopped early is judged by anytime-valid
decisions and gets no note (its fixed-n figures are descriptive); one that ran every task gets
the note as a fixed-n report does.
"""

from __future__ import annotations

from ablation.report import AblationReport, GateResult

__all__ = ["pass_note"]

GATE_REGRESSION = "no significant regression"


def _points(x: float) -> str:
    """A difference of proportions in percentage points, one decimal."""
    return f"{100 * x:.1f} pp"


def pass_note(report: AblationReport, gates: list[GateResult], alpha: float) -> str | None:
    """The verdict line's note for a passing report, or ``None`` when there is nothing to add.

    Args:
        report: The analysed report.
        gates: Its judged gates.
        alpha: The level the gates used.

    Returns:
        A clause for the verdict line, or ``None`` (a sequential report that stopped early, or
        the regression gate did not pass).
    """
    gate = next((g for g in gates if g.name == GATE_REGRESSION), None)
    seq = report.sequential
    if (seq is not None and seq.fixed_n_descriptive) or gate is None or gate.status != "pass":
        return None
    parts: list[str] = []
    ci, t = report.uplift.ci, report.table
    if ci.high < 0 and gate.pvalue is not None:
        parts.append(
            f"the {100 * ci.confidence_level:g}% {ci.method} ({_points(ci.low)} to {_points(ci.high)}) "
            f"lies below 0, but the gate's one-sided test gives p = {gate.pvalue:.4g} >= alpha "
            f"{alpha:g}: too few discordant pairs for it to establish a regression"
        )
    psi = (t.regressions + t.improvements) / report.n_paired if report.n_paired else 0.0
    mde = report.minimum_detectable_effect
    if mde is not None:
        parts.append(f"smallest regression the gate could detect at 80% power: {_points(mde)}")
    elif psi > 0:
        parts.append(
            f"underpowered: no regression within the observed discordance ({_points(psi)}) was "
            "detectable at 80% power"
        )
    elif report.zero_regression_upper_bound is not None:
        parts.append(
            "no discordant pairs; regression rate below "
            f"{_points(report.zero_regression_upper_bound)} (one-sided upper bound)"
        )
    return "; ".join(parts) or None
