"""Number, interval and text formatting shared by every renderer.

One place decides how a p-value, a pass rate, an interval or a latency is written, so the
terminal, Markdown and HTML reports show the same figures. Functions here return plain text;
escaping for a target format (Markdown, HTML) is the caller's job.

Assumptions: rates and uplifts are fractions in [0, 1] / [-1, 1] and are shown as percentages
or percentage points; ``None`` means "not computed" and is shown as an em dash.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from ablation.report import AblationReport, Interval, PairDetail
from ablation.report_items import stop_words

__all__ = [
    "DASH",
    "cap_list",
    "category_of",
    "fmt_count",
    "fmt_excluded",
    "fmt_float",
    "fmt_interval",
    "fmt_level",
    "fmt_money",
    "fmt_noun",
    "fmt_p",
    "fmt_pct",
    "fmt_pp",
    "fmt_ratio",
    "fmt_seconds",
    "fmt_seconds_group",
    "fmt_signed",
    "fmt_signed_seconds",
    "headline",
    "left_out_text",
    "ordered_details",
    "ordered_regressions",
    "output_text",
    "printable",
    "single_line",
    "summary_sentence",
    "truncate",
    "verdict_line",
]

DASH = "—"


def _bad(x: float | None) -> bool:
    return x is None or not math.isfinite(x)


def fmt_money(x: float | None) -> str:
    """An amount of money in plain decimals (``0.0000158``, not ``1.58e-05``), 3 significant
    digits; as :func:`fmt_float` from 1e-4 on and below 1e-10 (past 12 decimals)."""
    if x is None or not math.isfinite(x) or not 1e-10 <= abs(x) < 1e-4:
        return fmt_float(x)
    return f"{float(f'{x:.3g}'):.12f}".rstrip("0")


def fmt_float(x: float | None, digits: int = 3) -> str:
    """A plain number with ``digits`` significant digits (``—`` for ``None``); whole numbers are
    written out from ``10**digits`` to 1e15 (``2093451``, not ``2.09e+06``)."""
    if x is None:
        return DASH
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if 1e-4 <= abs(x) < 1e15:
        text = f"{x:.{digits}g}"  # 999.7 rounds to "1e+03": written out instead
        return f"{x:.0f}" if "e" in text else text
    return f"{x:.{max(digits - 1, 1)}e}"


def fmt_signed(x: float | None, digits: int = 3) -> str:
    """A number with an explicit sign (``+0.12``, ``-0.5``)."""
    text = fmt_float(x, digits)
    if x is not None and math.isfinite(x) and x > 0:
        return "+" + text
    return text


def fmt_count(k: int, n: int) -> str:
    """``k/n``."""
    return f"{k}/{n}"


def fmt_pct(x: float | None, decimals: int = 1) -> str:
    """A fraction as a percentage: ``0.7 -> "70.0%"``."""
    if _bad(x):
        return DASH if x is None else fmt_float(x)
    assert x is not None
    return f"{100 * x:.{decimals}f}%"


def fmt_pp(x: float | None, decimals: int = 1) -> str:
    """A difference of fractions in percentage points, signed: ``0.15 -> "+15.0 pp"``."""
    if _bad(x):
        return DASH if x is None else fmt_float(x)
    assert x is not None
    value = 100 * x
    if round(value, decimals) == 0:
        return f"{0:.{decimals}f} pp"
    return f"{value:+.{decimals}f} pp"


def fmt_level(confidence_level: float) -> str:
    """``0.95 -> "95%"``, ``0.9 -> "90%"``, ``0.995 -> "99.5%"``."""
    text = f"{100 * confidence_level:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def fmt_p(p: float | None) -> str:
    """A p-value: three significant digits from 0.001 up, two below (``"0.00045"``, and scientific
    below 1e-4: ``"4.5e-05"``); ``"< 1e-300"`` for 0 (underflow), ``"nan"`` for NaN, a dash for
    ``None``."""
    if p is None:
        return DASH
    if math.isnan(p):
        return "nan"
    if p <= 0:
        return "< 1e-300"
    if p >= 0.001:
        return f"{p:.3g}"
    return f"{p:.2g}"


def fmt_seconds(s: float | None) -> str:
    """A duration: ``0.85 -> "850 ms"``, ``4.2 -> "4.20 s"``, ``3e7 -> "30000000 s"``, ``1e10 -> "1.00e+10 s"``; one that
    rounds to no whole millisecond with significant digits (``0.0003 -> "0.3 ms"``), so that a
    difference that is not zero never reads ``0 ms`` or ``-0 ms``; zero is ``0 ms``."""
    if _bad(s):
        return DASH if s is None else fmt_float(s)
    assert s is not None
    if abs(s) < 1:
        whole = f"{1000 * s:.0f}"
        return f"{fmt_float(1000 * s, 1)} ms" if whole in ("0", "-0") else f"{whole} ms"
    if abs(s) < 100:
        return f"{s:.2f} s"
    if abs(s) >= 1e9:  # past 30 years: 3 significant digits, not 10 or more written out
        return f"{s:.2e} s"
    return f"{fmt_float(s)} s"


def fmt_seconds_group(values: Sequence[float | None]) -> str:
    """Several durations in one unit: ``"4.82 / 4.1 / 8.7 s"`` or ``"0.93 / 0.949 / 1.29 ms"``."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return " / ".join(DASH for _ in values)
    scale, unit = (1000.0, "ms") if max(finite) < 1 else (1.0, "s")
    parts = [fmt_float(None if v is None else v * scale) for v in values]
    return " / ".join(parts) + f" {unit}"


def fmt_signed_seconds(s: float | None) -> str:
    """A signed duration difference: ``-0.71 -> "-710 ms"``."""
    text = fmt_seconds(s)
    if s is not None and math.isfinite(s) and s > 0:
        return "+" + text
    return text


def fmt_ratio(r: float | None) -> str:
    """A ratio: ``0.873 -> "0.873x"``."""
    if _bad(r):
        return DASH if r is None else fmt_float(r)
    return f"{fmt_float(r)}x"


def fmt_interval(iv: Interval | None, kind: str = "float", *, with_level: bool = True) -> str:
    """An interval as ``95% CI [low, high]``.

    Args:
        iv: The interval (``None`` gives ``—``).
        kind: How to write the bounds: ``"float"``, ``"pct"``, ``"pp"``, ``"ratio"``, ``"s"``.
        with_level: Prefix the confidence level.
    """
    if iv is None:
        return DASH
    writers: dict[str, Callable[[float | None], str]] = {
        "float": fmt_signed,
        "pct": fmt_pct,
        "pp": fmt_pp,
        "ratio": fmt_ratio,
        "s": fmt_signed_seconds,
    }
    writer = writers[kind]
    body = f"[{writer(iv.low)}, {writer(iv.high)}]"
    return f"{fmt_level(iv.confidence_level)} CI {body}" if with_level else body


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, saying how much was cut.

    The marker names the full length, so a reader knows the output was longer.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [truncated {len(text) - limit} of {len(text)} chars]"


def output_text(value: Any) -> str:
    """An agent output as text: strings as they are, anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def cap_list(items: Sequence[str], cap: int) -> tuple[list[str], int]:
    """The first ``cap`` items and how many were left out (never hidden by the caller)."""
    items = list(items)
    if cap <= 0 or len(items) <= cap:
        return items, 0
    return items[:cap], len(items) - cap


def ordered_regressions(report: AblationReport) -> list[str]:
    """Regressed task ids, critical ones first (in the report's order), then the rest."""
    critical = list(report.critical_regressions)
    seen = set(critical)
    return critical + [t for t in report.regressions if t not in seen]


def ordered_details(report: AblationReport) -> list[PairDetail]:
    """Drill-down entries in reading order.

    Regressions come first, in the order of :func:`ordered_regressions` (critical first), then
    improvements in the report's order; several runs of one task stay in run order.
    """
    rank = {tid: i for i, tid in enumerate(ordered_regressions(report))}
    offset = len(rank)
    for i, tid in enumerate(report.improvements):
        rank.setdefault(tid, offset + i)

    def key(d: PairDetail) -> tuple[int, int, str, int]:
        kind = 0 if d.kind == "regression" else 1
        return kind, rank.get(d.task_id, len(rank)), d.task_id, -1 if d.run is None else d.run

    return sorted(report.details, key=key)


def category_of(report: AblationReport) -> dict[str, str]:
    """Task id -> category, from the drill-down and the per-category breakdowns."""
    found: dict[str, str] = {}
    for cat in report.categories:
        for tid in (*cat.regressions, *cat.improvements):
            found.setdefault(tid, cat.category)
    for d in report.details:
        if d.category is not None:
            found.setdefault(d.task_id, d.category)
    return found


_SUMMARY_WORDS = {
    "improvement": "candidate is better",
    "regression": "candidate is worse",
    "no significant difference": "no significant difference",
    "no discordant pairs": "no discordant pairs (both arms agree on every task)",
    "no paired tasks": "no paired tasks",
}


def fmt_noun(n: int, noun: str) -> str:
    """``"1 regression"``, ``"0 regressions"``, ``"2 regressions"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def fmt_excluded(report: AblationReport) -> str:
    """``"2 tasks excluded"``, ``"10 tasks and 10 runs excluded"``: the tasks left out of the pairs
    and, apart, the runs left out of tasks (an entry of ``excluded`` with a ``run``: a failed trial
    under ``on_error="exclude"``, a run the other arm lacks), so that the pairs and the tasks left
    out add up to the tasks whatever the entries listed."""
    tasks = len({e.task_id for e in report.excluded if e.run is None})
    runs = sum(e.run is not None for e in report.excluded)
    parts = [fmt_noun(tasks, "task")] * bool(tasks) + [fmt_noun(runs, "run")] * bool(runs)
    return " and ".join(parts) + " excluded"


def _test_words(report: AblationReport) -> str:
    """The headline interval and the one-sided test the sentence's claim (and the gate) rest on;
    with several candidates, a claim of improvement names its Holm-adjusted p beside its own."""
    ci, test, holm = report.uplift.ci, report.uplift_test, report.improvement_holm_pvalue
    interval = f"{fmt_level(ci.confidence_level)} CI {fmt_pp(ci.low)} to {fmt_pp(ci.high)}"
    if test is None:
        return f"{interval}, McNemar p = {fmt_p(report.mcnemar.pvalue)} at alpha {fmt_float(report.provenance.alpha)}"
    better = report.summary == "improvement" or (
        report.summary != "regression" and report.uplift.estimate > 0
    )
    p = test.pvalue_better if better else test.pvalue_worse
    at = " at" if holm is None or not better else f", Holm-adjusted {fmt_p(holm)} {'<' if holm < test.alpha else '>='}"
    return f"{interval}; {test.method}, H1: candidate {'better' if better else 'worse'}, p = {fmt_p(p)}{at} alpha {fmt_float(test.alpha)}"


def _summary_words(report: AblationReport) -> str:
    """The sentence's claim; with several candidates, an improvement holds after Holm adjustment."""
    words, test, k = _SUMMARY_WORDS.get(report.summary, report.summary), report.uplift_test, report.improvement_holm_candidates
    if report.summary == "no discordant pairs" and report.runs > 1:  # runs may differ one by one
        words = "no discordant pairs (both arms pass each task equally often over its runs)"
    if report.improvement_holm_pvalue is None or test is None:
        return words
    if report.summary == "improvement":
        return f"{words} (after Holm adjustment across {k} candidates)"
    lost = report.summary == "no significant difference" and test.pvalue_better < test.alpha
    return f"not significant after Holm adjustment across {k} candidates" if lost else words


def summary_sentence(report: AblationReport) -> str:
    """What the data show, in one sentence (plain text); with no pair, that there was none."""
    t = report.table
    if report.n_paired == 0:
        left = f", {fmt_excluded(report)}" if report.excluded else ""
        return f"No paired tasks: 0 pairs of {fmt_noun(report.n_tasks, 'task')}{left}; nothing to compare."
    critical = len(report.critical_regressions)
    summary = _summary_words(report)
    counts = (
        fmt_noun(t.regressions, "regression")
        + (f" ({critical} critical)" if critical else "")
        + f", {fmt_noun(t.improvements, 'improvement')} in {fmt_noun(report.n_paired, 'pair')}"
    )
    stats = f"uplift {fmt_pp(report.uplift.estimate)}, " + _test_words(report)
    seq = report.sequential
    if seq is not None and seq.fixed_n_descriptive:  # the stop in the sequential section's words
        how = stop_words(seq) + (", not every task ran" if seq.gate == "undecided" else "")
        stats += f" (descriptive: the sequential campaign stopped after {seq.pairs} pairs {how})"
    return f"{summary[:1].upper()}{summary[1:]}: {counts}; {stats}."


def verdict_line(report: AblationReport) -> str:
    """``Verdict: PASS (all 3 gates passed)`` or which gates did not pass: ``failed: ...`` and,
    apart, ``inconclusive: ...`` (could not be judged), never one list read as failures."""
    head = f"Verdict: {report.verdict.upper()}"
    if not report.gates:
        return f"{head} (no gates evaluated)"
    named = {s: [g.name for g in report.gates if g.status == s] for s in ("fail", "inconclusive", "off")}
    judged, bad = len(report.gates) - len(named["off"]), len(named["fail"]) + len(named["inconclusive"])
    turned_off = f"; turned off: {', '.join(named['off'])}" if named["off"] else ""
    note = f"; {report.verdict_note}" if report.verdict_note else ""
    if bad:  # a gate that could not be judged is named apart from one that failed
        said = [f"{w}: {', '.join(named[s])}" for s, w in (("fail", "failed"), ("inconclusive", "inconclusive")) if named[s]]
        return f"{head} ({bad} of {judged} gates not passed; {'; '.join(said)}{turned_off}{note})"
    return f"{head} (all {judged} gates passed{turned_off}{note})"


def headline(report: AblationReport) -> str:
    """Verdict and summary in one line of plain text."""
    return f"{verdict_line(report)}. {summary_sentence(report)}"


def left_out_text(n_left_out: int, reason: str | None) -> str:
    """``"3 left out: reason"`` or an empty string."""
    if not n_left_out:
        return ""
    return f"{n_left_out} left out" + (f": {reason}" if reason else "")


#: Printable to Python yet invisible (default-ignorable; variation selectors are left for emoji).
_INVISIBLE = frozenset((0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x3164, 0xFFA0))


def printable(text: str) -> str:
    r"""Make untrusted text safe for a terminal: control and bidi characters become ``\xNN``.

    Newlines and tabs are kept; escape sequences, carriage returns, backspaces, bidi overrides and
    zero-width or other invisible characters (:data:`_INVISIBLE`) are shown as escapes, never acted on.
    """
    if text.isprintable() and _INVISIBLE.isdisjoint(map(ord, text)):
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or (ch.isprintable() and code not in _INVISIBLE):
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def single_line(text: str) -> str:
    r""":func:`printable` text on one line: each newline is shown as ``\n`` as well.

    For titles and summaries, where a raw newline would end the element it sits in (a Markdown
    HTML block ends at a blank line) or start a line a CI runner reads (a workflow command).
    """
    return printable(text).replace("\n", "\\n")
