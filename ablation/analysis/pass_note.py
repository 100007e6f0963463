"""What a passing verdict rests on, in words for the verdict line (``AblationReport.verdict_note``).

A pass of the significant-regression gate means only that the gate's one-sided test did not
reach ``alpha``. The note names how large a regression that test could have detected (the
report's minimum detectable effect, 80% power, at the observed discordance), and, when the
headline interval lies entirely below 0 while the exact test did not reject, says so in the same
line; so does any other uplift interval the report lists (the paired t with repeated runs, the
bootstrap, Newcombe's) that lies below 0, naming it: a PASS never stands silently beside an
interval on the harmful side. The latency gate
is read the same way: a pass beside a latency-ratio interval wholly above the limit (possible
when ``--confidence`` is not ``1 - 2 alpha``) is said in the note. So is a category that got
significantly worse by the categories section's own test (two-sided McNemar, Benjamini-Hochberg
across the categories, below ``alpha``, more regressions than improvements): categories are
exploratory slices no gate judges, but a pass does not stand silently beside one.

A failing verdict gets the note too when one of these gates passed beside an interval on the
harmful side (:func:`verdict_note`): the clauses on that interval alone, since whether another
gate failed (a missing pair, say) changes nothing in what the passing gate's test showed.

Assumptions: the report's ``minimum_detectable_effect`` is that of the gate's test (one-sided,
H1 "candidate worse"); a sequential report that stopped early is judged by anytime-valid
decisions and gets no regression note (its fixed-n figures are descriptive); one that ran every
task gets the note as a fixed-n report does. A sequential regression gate never passes beside an
anytime-valid interval below 0, nor, at a "non-inferior" stop, beside a descriptive figure on the
harmful side (:mod:`ablation.analysis.sequential_gates`), so no clause is needed for them.
"""

from __future__ import annotations

from ablation.analysis.builtin_gates import GATE_LATENCY, GATE_REGRESSION, short
from ablation.report import AblationReport, GateResult

__all__ = ["pass_note", "verdict_note"]


def _points(x: float) -> str:
    """A difference of proportions in percentage points, one decimal."""
    return f"{100 * x:.1f} pp"


def pass_note(
    report: AblationReport,
    gates: list[GateResult],
    alpha: float,
    latency_limit: float | None = None,
) -> str | None:
    """The verdict line's note for a passing report, or ``None`` when there is nothing to add.

    Args:
        report: The analysed report.
        gates: Its judged gates.
        alpha: The level the gates used.
        latency_limit: The latency gate's ratio limit, when that gate is on.

    Returns:
        A clause for the verdict line, or ``None`` (nothing to add: the regression gate did not
        pass as a test of fixed n, and no passing latency gate stands beside an interval above
        its limit).
    """
    harmful, power = _regression_parts(report, gates, alpha)
    return "; ".join(harmful + power + _category_parts(report, alpha) + _latency_parts(report, gates, alpha, latency_limit)) or None


def verdict_note(
    report: AblationReport,
    gates: list[GateResult],
    alpha: float,
    latency_limit: float | None = None,
) -> str | None:
    """The report's ``verdict_note``: :func:`pass_note` when every gate holds; with a failing
    verdict, the clauses saying why a gate that passed stands beside an interval on the harmful
    side (the same words), or ``None``.

    Args:
        report: The analysed report.
        gates: Its judged gates.
        alpha: The level the gates used.
        latency_limit: The latency gate's ratio limit, when that gate is on.
    """
    if all(g.holds for g in gates):
        return pass_note(report, gates, alpha, latency_limit)
    harmful = _regression_parts(report, gates, alpha)[0] + _latency_parts(report, gates, alpha, latency_limit)
    return "; ".join(harmful) or None


def _latency_parts(
    report: AblationReport, gates: list[GateResult], alpha: float, latency_limit: float | None
) -> list[str]:
    """The clause on a passing latency gate beside a ratio interval wholly above its limit."""
    latency = next((g for g in gates if g.name == GATE_LATENCY), None)
    ratio = report.latency.ratio_ci if report.latency is not None else None
    if (
        latency is None
        or latency.status != "pass"
        or latency_limit is None
        or ratio is None
        or not ratio.low > latency_limit
    ):
        return []
    return [
        f"the {100 * ratio.confidence_level:g}% interval of the latency ratio "
        f"({short(ratio.low)}x to {short(ratio.high)}x) lies above the limit "
        f"{short(latency_limit)}x, but the latency gate's one-sided test gives p = "
        f"{short(latency.pvalue if latency.pvalue is not None else 1.0)} >= alpha "
        f"{alpha:g}: the interval is at another level than the gate"
    ]


def _regression_parts(
    report: AblationReport, gates: list[GateResult], alpha: float
) -> tuple[list[str], list[str]]:
    """The note's clauses on the regression gate (none when it did not pass at fixed n): those
    on an interval below 0 beside its pass, and those on the power of its test."""
    gate = next((g for g in gates if g.name == GATE_REGRESSION), None)
    seq = report.sequential
    if (seq is not None and seq.fixed_n_descriptive) or gate is None or gate.status != "pass":
        return [], []
    parts: list[str] = []
    ci, t = report.uplift.ci, report.table
    if ci.high < 0 and gate.pvalue is not None:
        parts.append(
            f"the {100 * ci.confidence_level:g}% {ci.method} ({_points(ci.low)} to {_points(ci.high)}) "
            f"lies below 0, but the regression gate's one-sided test gives p = {gate.pvalue:.4g} >= alpha "
            f"{alpha:g}: too few discordant pairs for it to establish a regression"
        )
    below = [iv for iv in report.uplift.intervals if iv.name != report.uplift.headline and iv.high < 0]
    if below and gate.pvalue is not None:
        shown = ", ".join(f"{iv.method} ({_points(iv.low)} to {_points(iv.high)})" for iv in below)
        parts.append(
            f"{'these intervals lie' if len(below) > 1 else 'this interval lies'} below 0: {shown}; "
            f"they are not the regression gate's test, whose one-sided p = {gate.pvalue:.4g} >= alpha "
            f"{alpha:g}, and may not hold their level here (docs/STATISTICS.md)"
        )
    psi = (t.regressions + t.improvements) / report.n_paired if report.n_paired else 0.0
    mde = report.minimum_detectable_effect
    power: list[str] = []
    if mde is not None:
        power.append(f"smallest regression the gate could detect at 80% power: {_points(mde)}")
    elif psi > 0:
        power.append(
            f"underpowered: no regression within the observed discordance ({_points(psi)}) was "
            "detectable at 80% power"
        )
    elif report.zero_regression_upper_bound is not None:
        power.append(
            "no discordant pairs; regression rate below "
            f"{_points(report.zero_regression_upper_bound)} (one-sided upper bound)"
        )
    return parts, power


def _category_parts(report: AblationReport, alpha: float) -> list[str]:
    """The note's clause on categories significantly worse by the section's own adjusted test."""
    worse = [
        c for c in report.categories
        if c.adjusted_pvalue is not None and c.adjusted_pvalue < alpha
        and c.table.regressions > c.table.improvements
    ]  # fmt: skip
    if not worse:
        return []
    shown = ", ".join(
        f"{c.category!r} ({c.table.regressions} regressions, {c.table.improvements} improvements, "
        f"adjusted p = {short(c.adjusted_pvalue or 0.0)})"
        for c in worse
    )
    return [
        f"{'categories' if len(worse) > 1 else 'category'} significantly worse (two-sided McNemar, "
        f"Benjamini-Hochberg across the categories, at alpha {alpha:g}): {shown}; categories are "
        "exploratory slices that no gate judges"
    ]
