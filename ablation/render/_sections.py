"""The report's tables as plain rows of text, shared by the Markdown, HTML and terminal renderers.

Each function returns plain strings (already formatted with :mod:`ablation.render._format`); the
renderer escapes them for its target and draws them. Keeping the rows here means the three reports
show the same quantities with the same method names.
"""

from __future__ import annotations

from collections.abc import Callable

from ablation.render._drilldown import task_label
from ablation.render._format import (
    DASH,
    cap_list,
    fmt_excluded,
    fmt_float,
    fmt_interval,
    fmt_level,
    fmt_money,
    fmt_p,
    fmt_pct,
    fmt_pp,
    fmt_ratio,
    fmt_seconds,
    fmt_seconds_group,
    fmt_signed,
    fmt_signed_seconds,
    left_out_text,
)
from ablation.report import AblationReport, ArmSummary, ContinuousComparison, TrialView
from ablation.report_items import stop_words

__all__ = [
    "METRIC_HEADERS",
    "TABLE_CAP",
    "arm_rows",
    "continuous_rows",
    "excluded_rows",
    "metric_notes",
    "metric_rows",
    "more_line",
    "no_regression_text",
    "noninferiority_decision",
    "noninferiority_text",
    "paired_note",
    "paired_rows",
    "provenance_lines",
    "regressions_title",
    "test_rows",
    "trial_facts",
]

Row = tuple[str, ...]
#: Rows of a long list (regressions, improvements, exclusions) an HTML page shows; the rest are
#: counted under it, and every one is in the JSON report.
TABLE_CAP = 50


def more_line(more: int, total: int, what: str) -> str:
    """The line under a capped list: how many are left out, and where the full list is."""
    return f"... and {more} more {what} ({total} in all; the full list is in --format json)"

METRIC_HEADERS = (
    "metric",
    "pairs",
    "left out",
    "baseline",
    "candidate",
    "difference",
    "interval method",
    "p",
    "test",
)
def paired_rows(report: AblationReport) -> list[Row]:
    """The 2x2 table with margins: rows baseline pass/fail/total, columns candidate pass/fail/total."""
    t = report.table
    return [
        (
            "baseline pass",
            str(t.both_pass),
            f"{t.regressions} (regressions)",
            str(t.both_pass + t.regressions),
        ),
        (
            "baseline fail",
            f"{t.improvements} (improvements)",
            str(t.both_fail),
            str(t.improvements + t.both_fail),
        ),
        ("total", str(t.both_pass + t.improvements), str(t.regressions + t.both_fail), str(t.n)),
    ]


def paired_note(report: AblationReport) -> str:
    """How many pairs, tasks, runs and exclusions the table covers."""
    note = f"{report.n_paired} pairs of {report.n_tasks} tasks"
    if report.runs > 1:
        note += f", {report.runs} runs per task"
    if report.excluded:
        note += f"; {fmt_excluded(report)} (listed below)"
    return note + "."


def counted(arm: ArmSummary) -> int:
    """The trials an arm's pass rate counts (its ``n_trials`` in a report that predates the field)."""
    return arm.n_trials if arm.counted_trials is None else arm.counted_trials


def _priced(arm: ArmSummary) -> str:
    """``", 8 of 12 trials priced"`` when some of the arm's trials stated no cost (its total and
    mean count the others only); empty when every trial did."""
    if arm.cost_trials is None or arm.cost_trials >= counted(arm):
        return ""
    return f", {arm.cost_trials} of {counted(arm)} trials priced"


def arm_rows(report: AblationReport) -> list[Row]:
    """Arm summaries transposed: one row per quantity, columns baseline and candidate."""
    b, c = report.baseline, report.candidate

    def both(fn: Callable[[ArmSummary], str]) -> tuple[str, str]:
        return fn(b), fn(c)

    rows: list[Row] = [
        ("agent", *both(lambda a: a.agent or DASH)),
        ("pass rate", *both(lambda a: f"{fmt_pct(a.pass_rate)} ({a.passes}/{counted(a)})")),
        (
            f"{fmt_level(b.pass_rate_ci.confidence_level)} CI ({b.pass_rate_ci.method})",
            *both(lambda a: fmt_interval(a.pass_rate_ci, "pct", with_level=False)),
        ),
        (
            "errors / timeouts / retried",
            *both(lambda a: f"{a.errors} / {a.timeouts} / {a.retried}"),
        ),
    ]
    if any(a.latency_mean_s is not None for a in (b, c)):
        rows.append(
            (
                "latency mean / median / p90",
                *both(
                    lambda a: fmt_seconds_group(
                        (a.latency_mean_s, a.latency_median_s, a.latency_p90_s)
                    )
                ),
            )
        )
    if any(a.cost_total is not None or a.cost_trials is not None for a in (b, c)):
        rows.append(
            (
                "cost total (mean)",
                *both(
                    lambda a: (f"{fmt_money(a.cost_total)} ({fmt_money(a.cost_mean)})"
                               if a.cost_total is not None or a.cost_trials is None else "not summed:")
                    + (f" {a.cost_currency}" if a.cost_currency else "")
                    + (f" [{a.cost_source}]" if a.cost_source else "")
                    + _priced(a)
                ),
            )
        )
    for name in sorted(set(b.quality_means) | set(c.quality_means)):
        rows.append(
            (
                f"quality: {name}",
                fmt_float(b.quality_means.get(name)),
                fmt_float(c.quality_means.get(name)),
            )
        )
    return rows


def test_rows(report: AblationReport) -> list[tuple[str, str, str, str]]:
    """(quantity, estimate, interval or counts, method): every test and interval, with its method."""
    m, u = report.mcnemar, report.uplift
    rows = [
        ("McNemar p", fmt_p(m.pvalue), f"b = {m.b}, c = {m.c}", m.method),
        ("McNemar mid-p", fmt_p(m.midp_pvalue), "", m.midp_method),
        ("uplift", fmt_pp(u.estimate), fmt_interval(u.ci, "pp"), u.ci.method),
    ]
    for extra in sorted(u.others(), key=lambda iv: iv.secondary):  # the secondary figures last
        label = "uplift (secondary)" if extra.secondary else "uplift"
        rows.append((label, "", fmt_interval(extra, "pp"), extra.method))
    if u.relative is not None:
        rows.append(
            (
                "relative uplift",
                fmt_pp(u.relative).replace(" pp", "%"),
                "",
                "uplift / baseline pass rate",
            )
        )
    if u.se_paired is not None or u.se_unpaired is not None:
        rows.append(
            (
                "SE paired / unpaired",
                f"{fmt_float(u.se_paired)} / {fmt_float(u.se_unpaired)}",
                f"correlation {fmt_float(u.correlation)}",
                "pairing removes between-task variance",
            )
        )
    if m.note:
        rows.append(("note", "", m.note, ""))
    if report.minimum_detectable_effect is not None:
        rows.append(
            (
                "min. detectable effect",
                fmt_pp(report.minimum_detectable_effect),
                "",
                report.minimum_detectable_effect_method or "Connor (1987), observed discordance",
            )
        )
    if report.zero_regression_upper_bound is not None:
        rows.append(
            (
                "regression rate bound",
                fmt_pct(report.zero_regression_upper_bound, 2),
                "one-sided upper bound",
                "Clopper-Pearson, 0 regressions",
            )
        )
    return rows


def continuous_rows(report: AblationReport) -> list[tuple[str, ContinuousComparison]]:
    """Paired continuous comparisons in report order: latency, cost, metrics, quality."""
    rows: list[tuple[str, ContinuousComparison]] = []
    if report.latency is not None:
        rows.append(("latency (s)", report.latency))
    if report.cost is not None:
        rows.append(("cost", report.cost))
    rows += [(name, comp) for name, comp in sorted(report.metrics.items())]
    rows += [(f"quality: {name}", comp) for name, comp in sorted(report.quality.items())]
    return rows


def provenance_lines(report: AblationReport) -> list[str]:
    """Provenance facts as short lines."""
    p = report.provenance
    lines = [
        f"seed {p.seed}, {p.n_resamples} resamples, confidence {fmt_level(p.confidence_level)}, "
        f"alpha {fmt_float(p.alpha)}, runs {p.runs}, on_error={p.on_error}, source {p.source}"
        + (f", isolation={p.isolation}" if p.isolation == "process" else "")
        + (f", sandbox={p.sandbox}" if p.sandbox == "process" else ""),
        f"baseline: {p.baseline_agent or DASH}; candidate: {p.candidate_agent or DASH}",
        f"suite fingerprint {(p.suite_fingerprint or DASH)[:12]}; campaign {p.campaign_id or DASH}; "
        + (f"{p.started_at or DASH} -> {p.finished_at or DASH}" if p.started_at or p.finished_at
           else "times not recorded (--timestamps records them)"),
    ]
    if p.versions:
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in sorted(p.versions.items())))
    if p.baseline_reused_from:
        lines.append(
            f"baseline reused from campaign {p.baseline_reused_from}"
            + (f" (ran {p.baseline_ran_at})" if p.baseline_ran_at else "")
        )
    if p.labels:
        lines.append("labels: " + ", ".join(f"{k}={v}" for k, v in sorted(p.labels.items())))
    return lines


def metric_rows(report: AblationReport) -> list[Row]:
    """One row per paired continuous metric (see :data:`METRIC_HEADERS`), latency ratio second."""
    rows: list[Row] = []
    for label, comp in continuous_rows(report):
        seconds = comp is report.latency
        fmt = fmt_seconds if seconds else (fmt_money if comp is report.cost else fmt_float)
        diff = (fmt_signed_seconds if seconds else fmt_signed)(comp.mean_difference)
        rows.append(
            (
                label,
                str(comp.n_pairs),
                str(comp.n_left_out),
                fmt(comp.baseline_mean),
                fmt(comp.candidate_mean),
                f"{diff} {fmt_interval(comp.ci, 's' if seconds else 'float')}",
                comp.ci.method if comp.ci else DASH,
                fmt_p(comp.wilcoxon_pvalue),
                comp.wilcoxon_method or DASH,
            )
        )
    lat = report.latency
    if lat is not None and lat.geometric_mean_ratio is not None:
        ratio = (
            "latency ratio (geometric mean)",
            str(lat.n_pairs),
            str(lat.n_left_out),
            "",
            "",
            f"{fmt_ratio(lat.geometric_mean_ratio)} {fmt_interval(lat.ratio_ci, 'ratio')}",
            lat.ratio_ci.method if lat.ratio_ci else DASH,
            fmt_p(lat.ratio_pvalue),
            f"median ratio {fmt_ratio(lat.median_ratio)}, faster on "
            f"{fmt_pct(lat.share_faster)} of pairs",
        )
        rows.insert(1, ratio)
    return rows


def metric_notes(report: AblationReport) -> list[str]:
    """Why pairs were left out of each metric or the latency ratio is missing, scorer errors, notes."""
    notes = [
        f"{label}: {left_out_text(comp.n_left_out, comp.left_out_reason)}"
        for label, comp in continuous_rows(report)
        if comp.n_left_out
    ]
    if report.latency is not None and report.latency.ratio_note is not None:
        notes.append(report.latency.ratio_note)
    notes += [
        f"quality: {q.metric}: scorer errors baseline {q.scorer_errors_baseline}, "
        f"candidate {q.scorer_errors_candidate}"
        for q in report.quality.values()
        if q.scorer_errors_baseline or q.scorer_errors_candidate
    ]
    notes += [f"{label}: {comp.ci_note}" for label, comp in continuous_rows(report) if comp.ci_note]
    return notes


def excluded_rows(report: AblationReport, cap: int) -> list[Row]:
    """Excluded items grouped by reason: (reason, count, ids capped at ``cap`` with a count)."""
    groups: dict[str, list[str]] = {}
    for item in report.excluded:
        label = task_label(item.task_id) + (f" (run {item.run})" if item.run is not None else "")
        groups.setdefault(item.reason, []).append(label)
    rows: list[Row] = []
    for reason, ids in groups.items():
        shown, more = cap_list(ids, cap)
        rows.append(
            (reason, str(len(ids)), ", ".join(shown) + (f" ... and {more} more" if more else ""))
        )
    return rows


_SEQUENTIAL_NI = {"pass": "non-inferior", "fail": "inferior", "inconclusive": "inconclusive", "off": "off"}


def noninferiority_decision(report: AblationReport) -> str | None:
    """The decision the non-inferiority section leads with: in sequential mode the gate's, by the
    anytime-valid confidence sequence (``"not judged"`` before the gates ran), else the fixed-n
    test's; ``None`` when not tested."""
    if report.noninferiority is None or report.sequential is None:
        return None if report.noninferiority is None else report.noninferiority.decision
    gate = next((g for g in report.gates if g.name == "non-inferiority"), None)
    return "not judged" if gate is None else _SEQUENTIAL_NI[gate.status]


def noninferiority_text(report: AblationReport) -> str | None:
    """The non-inferiority result (``None`` when not tested). In sequential mode the gate's
    decision by the anytime-valid confidence sequence comes first and the fixed-n test follows
    as descriptive, never read as the decision beside an inconclusive gate."""
    ni, s = report.noninferiority, report.sequential
    if ni is None:
        return None
    interval = fmt_interval(ni.ci, "pp")
    if ni.ci.method != ni.method:
        interval += f" ({ni.ci.method})"
    fixed = f"{ni.decision.upper()}: {interval}; {ni.method}: z = {fmt_float(ni.statistic)}, p = {fmt_p(ni.pvalue)}, alpha {fmt_float(ni.alpha)}"
    if s is None:
        return f"margin {fmt_pp(-ni.margin)}: {fixed}"
    return (
        f"margin {fmt_pp(-ni.margin)}: the gate is judged by the anytime-valid confidence sequence: "
        f"{(noninferiority_decision(report) or '').upper()}: anytime-valid "
        f"{fmt_interval(s.interval, 'pp')}, the campaign stopped {stop_words(s)} after {s.pairs} "
        f"pairs. Fixed-n test (descriptive, not the gate's): {fixed}"
    )


def trial_facts(trial: TrialView) -> str:
    """Verdict, status, latency, attempts and quality of one trial, in one line."""
    verdict = {True: "PASS", False: "FAIL", None: "no verdict"}[trial.passed]
    facts = [f"{verdict} ({trial.status})", f"latency {fmt_seconds(trial.latency_s)}"]
    if trial.attempts != 1:
        facts.append(f"{trial.attempts} attempts")
    if trial.quality:
        facts.append(
            "quality " + ", ".join(f"{k} {fmt_float(v)}" for k, v in sorted(trial.quality.items()))
        )
    usage = trial.usage or {}
    if usage:  # a count left out is 0 (the dump leaves defaults out); None is unknown
        tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        known = tokens_in is not None and tokens_out is not None
        tokens = f"tokens {tokens_in} in / {tokens_out} out" if known else "tokens unknown"
        facts.append(f"{tokens}, {usage.get('model_requests', 0)} model requests")
    return ", ".join(facts)


def regressions_title(report: AblationReport) -> str:
    """``"Regressions (N)"``, with the critical count when there is one."""
    n, crit = len(report.regressions), len(report.critical_regressions)
    return f"Regressions ({n}" + (f", {crit} critical)" if crit else ")")


def no_regression_text(report: AblationReport) -> str:
    """What to say when nothing regressed: the pair count and the zero-failure upper bound."""
    text = f"No task regressed in {report.n_paired} pairs."
    if report.zero_regression_upper_bound is not None:
        text += (
            f" One-sided {fmt_level(report.provenance.confidence_level)} upper bound on the "
            f"regression rate: {fmt_pct(report.zero_regression_upper_bound, 2)}."
        )
    return text
