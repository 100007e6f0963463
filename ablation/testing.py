"""Assertions for using ablation reports inside a test suite (pytest or any other runner).

Write a test that runs (or loads) a campaign and asserts on its report::

    from ablation import compare_results
    from ablation.testing import assert_gates, assert_no_regressions

    def test_candidate_can_ship():
        report = compare_results(baseline_results, candidate_results)
        assert_gates(report)                       # every release gate holds

    def test_no_new_failures():
        report = compare_results(baseline_results, candidate_results)
        assert_no_regressions(report, allow=["flaky/*"])   # known-flaky tasks tolerated

Both raise :class:`AssertionError` with a message that names the failing gates with their
evidence and the regressed task ids (critical ones first), so the test output says what broke.
No pytest plugin is needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from ablation.analysis.gates import evaluate_gates
from ablation.config import GatePolicy
from ablation.report import AblationReport

__all__ = ["assert_gates", "assert_no_regressions"]

_MAX_IDS = 50


def _id_list(ids: list[str], critical: set[str]) -> str:
    shown = [f"{t} (CRITICAL)" if t in critical else t for t in ids[:_MAX_IDS]]
    more = len(ids) - _MAX_IDS
    return ", ".join(shown) + (f" ... and {more} more" if more > 0 else "")


def _ordered(report: AblationReport, ids: Iterable[str]) -> list[str]:
    wanted = set(ids)
    critical = [t for t in report.critical_regressions if t in wanted]
    return critical + sorted(wanted - set(critical))


def assert_gates(
    report: AblationReport,
    policy: GatePolicy | None = None,
    *,
    alpha: float | None = None,
) -> None:
    """Fail unless every release gate holds.

    Args:
        report: The report. When ``policy`` is given the gates are evaluated afresh with
            :func:`ablation.analysis.gates.evaluate_gates`; otherwise the report's own gates are used, or
            the default :class:`GatePolicy` (critical tasks, no significant regression,
            completeness) when the report carries none. A gate turned off (status ``"off"``)
            does not fail.
        policy: Gates to apply instead of the report's.
        alpha: Significance level when evaluating: ``None`` or the report's own
            (another level raises :class:`ablation.errors.ConfigError`; rebuild the report
            at that alpha instead).

    Raises:
        AssertionError: naming each gate that did not pass, with its evidence, and the regressed
            task ids.
    """
    if policy is not None or not report.gates:
        report = evaluate_gates(report, policy or GatePolicy(), alpha=alpha)
    failing = [g for g in report.gates if not g.holds]
    if report.verdict == "pass" and not failing:
        return
    crit = set(report.critical_regressions)
    lines = [
        f"release gates failed (verdict {report.verdict.upper()}, "
        f"{len(failing)} of {len(report.gates)} gates not passed):"
    ]
    for g in failing:
        lines.append(f"  - {g.name} [{g.status.upper()}]: {g.evidence}")
        if g.tasks:
            lines.append(f"      tasks: {_id_list(_ordered(report, g.tasks), crit)}")
    if report.regressions:
        ids = _ordered(report, report.regressions)
        lines.append(f"regressed tasks ({len(ids)}): {_id_list(ids, crit)}")
    raise AssertionError("\n".join(lines))


def assert_no_regressions(report: AblationReport, *, allow: Iterable[str] = ()) -> None:
    """Fail if any task regressed (baseline passed, candidate failed), except allowed ones.

    Args:
        report: The report.
        allow: Task ids, or ``fnmatch`` patterns such as ``"flaky/*"``, whose regression is
            tolerated.

    Raises:
        AssertionError: listing the regressed task ids that are not allowed (critical first).
    """
    patterns = list(allow)
    bad = [t for t in report.regressions if not any(fnmatchcase(t, p) for p in patterns)]
    if not bad:
        return
    crit = set(report.critical_regressions)
    ids = _ordered(report, bad)
    n_crit = sum(1 for t in ids if t in crit)
    tolerated = len(report.regressions) - len(bad)
    message = (
        f"{len(ids)} task(s) regressed"
        + (f", {n_crit} critical" if n_crit else "")
        + f" ({report.table.regressions} regressions, {report.table.improvements} improvements "
        f"in {report.n_paired} pairs"
        + (f"; {tolerated} allowed" if tolerated else "")
        + f"): {_id_list(ids, crit)}"
    )
    raise AssertionError(message)
