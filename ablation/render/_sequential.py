"""The sequential section shared by the terminal, Markdown and HTML renderers."""

from __future__ import annotations

from ablation.render._format import fmt_float, fmt_interval, fmt_pp
from ablation.report import AblationReport
from ablation.report_items import stop_words

__all__ = ["SEQUENTIAL_TITLE", "sequential_note", "sequential_rows"]

SEQUENTIAL_TITLE = "Sequential campaign (anytime-valid)"


def sequential_rows(report: AblationReport) -> list[tuple[str, str]]:
    """``(quantity, value)`` rows of the sequential section (empty when not sequential)."""
    s = report.sequential
    if s is None:
        return []
    share = s.agent_calls_saved / s.agent_calls_planned if s.agent_calls_planned else 0.0
    split = f" ({fmt_float(s.alpha)} / {s.candidates} candidates)" if s.candidates > 1 else ""
    rows = [
        ("stopped early", "yes" if s.stopped_early else "no"),
        ("stopped", stop_words(s)),
        ("why", s.reason),
        ("pairs seen", f"{s.pairs} ({s.regressions} regressions, {s.improvements} improvements)"),
        ("tasks run", f"{s.tasks_run} of {s.n_tasks}"),
        ("agent calls", f"{s.agent_calls} of {s.agent_calls_planned} planned"),
        ("agent calls saved", f"{s.agent_calls_saved} ({100 * share:.1f}%)"),
        ("alpha per candidate", fmt_float(s.alpha_per_candidate) + split),
        ("regression e-value", f"{fmt_float(s.e_value)} (rejects at {fmt_float(1 / s.alpha_per_candidate)})"),
        ("uplift, anytime-valid", f"{fmt_pp(s.estimate)}, {fmt_interval(s.interval, 'pp')}"),
        ("uplift, fixed-n", f"{fmt_pp(report.uplift.estimate)}, {fmt_interval(report.uplift.ci, 'pp')}"
         + (" (descriptive)" if s.fixed_n_descriptive else "")),
        ("gates decided sequentially", ", ".join(s.gates_decided)),
        ("run order", s.order),
    ]
    if s.margin is not None:
        rows.insert(8, ("non-inferiority margin", fmt_pp(-s.margin)))
    if s.futility_after is not None:
        rows.insert(8, ("futility stop after", f"{s.futility_after} pairs"))
    return rows


def sequential_note(report: AblationReport) -> str:
    """The warning under the section: fixed-n figures are descriptive after a data-dependent stop,
    and, when the regression gate is inconclusive (a stop that was no decision of it), why."""
    s = report.sequential
    if s is None:
        return ""
    if s.fixed_n_descriptive:
        stop = (
            "The campaign stopped undecided before every task ran (interrupted, or tasks without "
            "a result)" if s.gate == "undecided" else "The campaign stopped on the data"
        )
        regression = next((g for g in report.gates if g.name == "no significant regression"), None)
        undecided = (
            ", and the regression gate, which this stop did not decide, is inconclusive: neither "
            "its e-process nor the fixed-n look planned at the end of the suite was reached"
            if regression is not None and regression.status == "inconclusive" else ""
        )  # fmt: skip
        return (
            f"{stop}, so the fixed-n p-values and intervals in this "
            "report are descriptive only; the gates use the anytime-valid decisions above"
            f"{undecided} (STATISTICS.md section 10)."
        )
    return (
        "The campaign ran the whole suite; the gates use the anytime-valid decisions above, which "
        "stay valid although the data were checked after every pair (STATISTICS.md section 10)."
    )
