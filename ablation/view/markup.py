"""HTML building blocks of the viewer's pages: the layout, escaping, links, tables and numbers.

Every string that comes from the store (task ids, categories, agent names, outputs, errors,
labels) enters a page through :func:`esc`, which shows control characters as ``\\xNN`` (ANSI
escapes included) and HTML-escapes the rest, quotes too, so it is text wherever it lands. Links
are built here from ids (percent-encoded, then escaped), never taken from stored text. Pages load
one stylesheet and one script from ``/static/`` and hold no inline script, style or event
handler, as the Content-Security-Policy of :mod:`ablation.view.app` requires. A figure and its
interval are written with one precision (:func:`figure`), the least from the report's own that
writes every two different numbers among them differently.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from urllib.parse import quote, urlencode

from ablation.render._breakdowns import repeated_rows
from ablation.render._format import (
    DASH,
    fmt_float,
    fmt_interval,
    fmt_level,
    fmt_p,
    fmt_pct,
    fmt_pp,
    fmt_ratio,
    truncate,
    verdict_line,
)
from ablation.render._sections import (
    METRIC_HEADERS,
    arm_rows,
    counted,
    metric_notes,
    metric_rows,
    paired_note,
    paired_rows,
    provenance_lines,
)
from ablation.render._sequential import SEQUENTIAL_TITLE, sequential_note, sequential_rows
from ablation.render.html import LONG_WORD, esc, long_word
from ablation.report import AblationReport, Interval
from ablation.view.tasks import KEYED

__all__ = ["ALL_LISTED", "LIST_CAP", "LONG_WORD", "Answer", "arms_and_metrics", "count", "damaged", "distinct", "errored_mark", "esc", "excluded", "figure", "id_text", "interval", "layout", "link", "long_word", "more", "number", "outcomes", "pct", "provenance", "sequential", "table", "task_link", "text", "url", "verdict_badge", "verdict_notes"]  # fmt: skip

#: Rows a long table or list of a page shows (what the pairing left out, the categories, a
#: comparison's regressions and improvements) and options a filter lists; the rest are counted
#: under it (:func:`more`).
LIST_CAP = 200
#: Where a list capped at :data:`LIST_CAP` is whole, said under it.
ALL_LISTED = " (ablation report --format json lists them all)"

#: How each kind of figure is written at a precision (the report's writers: decimals of a
#: percentage, significant digits of a ratio), and the report's own precision.
_WRITERS: dict[str, tuple[Callable[[float | None, int], str], int]] = {
    "pct": (fmt_pct, 1),
    "pp": (fmt_pp, 1),
    "ratio": (lambda r, digits: fmt_ratio(r) if not finite(r) else f"{fmt_float(r, digits)}x", 3),
}
#: At most this many more digits than the report's, so float noise never shows as 12 digits.
_MORE_DIGITS = 4


@dataclasses.dataclass(frozen=True)
class Answer:
    """A whole page and its HTTP status, for a page whose status is not 200 although it is the
    page itself (a form with an error line under it)."""

    html: str
    status: int = 200


def url(path: str, **params: object) -> str:
    """``path`` with ``params`` as a query string (``None`` and ``""`` left out), not escaped."""
    query = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    return f"{path}?{urlencode(query)}" if query else path


def campaign_url(campaign_id: str, page: str = "") -> str:
    """The path of a campaign's page (``page``: ``""``, ``"tasks"`` or ``"task"``)."""
    base = f"/campaign/{quote(campaign_id, safe='')}"
    return f"{base}/{page}" if page else base


def suite_url(fingerprint: str) -> str:
    """The path of a suite's history page."""
    return f"/suite/{quote(fingerprint, safe='')}"


def link(href: str, text: object, *, cls: str = "") -> str:
    """An ``<a>`` to one of the viewer's own paths, its text escaped (class ``long`` added when
    it holds a long word, which may then wrap anywhere)."""
    cls = " ".join(c for c in (cls, "long" if long_word(str(text)) else "") if c)
    klass = f' class="{esc(cls)}"' if cls else ""
    return f'<a href="{esc(href)}"{klass}>{esc(text)}</a>'


def id_text(task_id: str) -> str:
    """A task id as a list shows it: cut at :data:`~ablation.view.tasks.KEYED` characters,
    saying how long it is (a task id may hold a million; its page shows it whole)."""
    return truncate(task_id, KEYED)


def task_link(href: str, task_id: str, *, cls: str = "task") -> str:
    """A link to a task's page (``href``: :func:`~ablation.view.tasks.task_query`), its text :func:`id_text`."""
    return link(href, id_text(task_id), cls=cls)


def number(value: float | None, text: str) -> str:
    """``text`` in a span that carries the exact value (``data-value``) for readers and tests."""
    exact = "" if value is None else repr(float(value))
    return f'<span class="num" data-value="{esc(exact)}">{esc(text)}</span>'


def pct(value: float | None) -> str:
    """A fraction as a percentage, with its exact value."""
    return number(value, fmt_pct(value))


def distinct(values: Sequence[float | None], kind: str) -> list[str]:
    """``values`` written as ``kind`` (:data:`_WRITERS`) with one precision: the report's, or
    the least above it (up to :data:`_MORE_DIGITS` more) that writes every two different
    values differently; the report's when none does."""
    write, base = _WRITERS[kind]
    for digits in range(base, base + _MORE_DIGITS + 1):
        texts = [write(v, digits) for v in values]
        if all(
            texts[i] != texts[j] or values[i] == values[j]
            for i in range(len(values)) for j in range(i + 1, len(values))
        ):  # fmt: skip
            return texts
    return [write(v, base) for v in values]


def figure(estimate: float | None, iv: Interval | None, kind: str) -> str:
    """An estimate (its exact value kept) and its interval with its level and method, written
    with one precision (:func:`distinct`): ``1x 95% CI [0.9994x, 1.001x]`` for 1.0003 in
    [0.99938, 1.0012], where the report's precision writes ``1x 95% CI [0.999x, 1x]``."""
    if iv is None:
        return f"{number(estimate, distinct([estimate], kind)[0])} {DASH}"
    est, low, high = distinct([estimate, iv.low, iv.high], kind)
    return (
        f"{number(estimate, est)} {esc(fmt_level(iv.confidence_level))} CI "
        f'[{number(iv.low, low)}, {number(iv.high, high)}] <span class="method">{esc(iv.method)}</span>'
    )


def interval(iv: Interval | None, kind: str = "pct") -> str:
    """An interval with its level and method."""
    if iv is None:
        return DASH
    return f'{esc(fmt_interval(iv, kind))} <span class="method">{esc(iv.method)}</span>'


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "", tid: str = ""
) -> str:
    """A table whose cells are **already markup** (escape text with :func:`esc` first); headers
    that are all empty (a key-value table) give no header row, and a cell of plain text with a
    long word is of class ``long``."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    attrs = (f' class="{esc(cls)}"' if cls else "") + (f' id="{esc(tid)}"' if tid else "")
    return f"<table{attrs}>{thead}<tbody>{body}</tbody></table>"


def text(value: object) -> str:
    """``value`` escaped, in a ``long`` span when it holds a long word."""
    shown = esc(value)
    return f'<span class="long">{shown}</span>' if long_word(str(value)) else shown


def _cell(content: str) -> str:
    plain = "<" not in content and long_word(html.unescape(content))
    return f'<td class="long">{content}</td>' if plain else f"<td>{content}</td>"


def verdict_badge(verdict: str | None) -> str:
    """The verdict as a coloured badge (``—`` when the report could not be built)."""
    if verdict is None:
        return f'<span class="badge">{DASH}</span>'
    return f'<span class="badge {esc(verdict)}">{esc(verdict.upper())}</span>'


def options(values: Iterable[tuple[str, str]], selected: str) -> str:
    """``<option>`` elements (value, label), the ``selected`` one marked."""
    return "".join(
        f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(label)}</option>'
        for v, label in values
    )


def hidden(params: Mapping[str, object]) -> str:
    """Hidden form inputs that carry ``params`` (empty values left out)."""
    return "".join(
        f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">'
        for k, v in params.items()
        if v is not None and v != ""
    )


def headline(report: AblationReport) -> str:
    """The report's headline figures: McNemar, uplift, both arms' pass rates, with methods."""
    m, u = report.mcnemar, report.uplift
    rows = [
        ["Regressions (b)", number(m.b, str(m.b))],
        ["Improvements (c)", number(m.c, str(m.c))],
        ["McNemar p", f'<span id="mcnemar-p">{number(m.pvalue, fmt_p(m.pvalue))}</span>'
         f' <span class="method">{esc(m.method)}</span>'],
        ["mid-p", f"{number(m.midp_pvalue, fmt_p(m.midp_pvalue))}"
         f' <span class="method">{esc(m.midp_method)}</span>'],
        ["Uplift", f'<span id="uplift">{figure(u.estimate, u.ci, "pp")}</span>'],
        *([f"Uplift ({'secondary' if iv.secondary else 'another interval'})", interval(iv, "pp")]
          for iv in sorted(u.others(), key=lambda iv: iv.secondary)),  # the report's order
    ]
    for arm in (report.baseline, report.candidate):
        name = "Baseline" if arm is report.baseline else "Candidate"
        rows.append([f"{name} pass rate ({esc(arm.agent or '')})",
                     f"{figure(arm.pass_rate, arm.pass_rate_ci, 'pct')} "
                     f"({arm.passes}/{counted(arm)})"])  # fmt: skip
    if report.latency is not None and report.latency.geometric_mean_ratio is not None:
        lat = report.latency
        rows.append(["Latency ratio (geometric mean)",
                     f'<span id="latency-ratio">{figure(lat.geometric_mean_ratio, lat.ratio_ci, "ratio")}'
                     "</span>"])  # fmt: skip
    if report.minimum_detectable_effect is not None:
        mde = report.minimum_detectable_effect
        rows.append(["Minimum detectable effect", f"{number(mde, fmt_pp(mde))} "
                     f'<span class="method">{esc(report.minimum_detectable_effect_method or "")}'
                     "</span>"])  # fmt: skip
    bound = report.zero_regression_upper_bound
    if bound is not None:
        rows.append(["Regression rate bound", f"{number(bound, fmt_pct(bound, 2))} "
                     '<span class="method">one-sided upper bound, Clopper-Pearson, 0 regressions</span>'])  # fmt: skip
    seq = report.sequential
    caveat = sequential_note(report) if seq is not None and seq.fixed_n_descriptive else ""
    note = f'<p class="note" id="descriptive">{esc(caveat)}</p>' if caveat else ""
    return note + table(["figure", "value"], rows, cls="figures", tid="headline")


#: The mark of a regression whose candidate trial failed (the report's ``errored_regressions``).
ERRORED = "candidate error or timeout"


def errored_mark(row: Mapping[str, object]) -> str:
    """`` <span class="errored">...</span>`` for a task table row (:meth:`~ablation.view.tasks.TaskTable.row`)
    that is a regression whose candidate failed a trial (an error or a timeout, not a wrong
    answer: the report's ``errored_regressions``); ``""`` for any other row."""
    if row["outcome"] == "regression" and row["candidate_errors"]:
        return f' <span class="errored">{ERRORED}</span>'
    return ""


def verdict_notes(report: AblationReport) -> str:
    """What ``ablation report`` writes with its verdict beside the summary the verdict box
    shows: the gates' line (how many passed, which did not, and the verdict's note: the smallest
    regression the gate could detect, or the bound on the regression rate when nothing
    regressed) and the report's notes (costs in different currencies, a tool whose use changed
    significantly), each escaped."""
    head = f"Verdict: {report.verdict.upper()}"
    line = verdict_line(report).removeprefix(head).strip().removeprefix("(").removesuffix(")")
    gates = f'<p class="note" id="verdict-gates">Gates: {esc(line)}.</p>' if line else ""
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    return gates + (f'<ul class="report-notes" id="notes">{notes}</ul>' if notes else "")


def sequential(report: AblationReport) -> str:
    """The report's sequential section (its rows and note, as ``ablation report`` writes them);
    empty for a fixed-n campaign. After a stop on the data the note (the fixed-n figures are
    descriptive) heads the :func:`headline` table instead, which follows this section."""
    rows = [[esc(k), esc(v)] for k, v in sequential_rows(report)]
    if report.sequential is None or not rows:
        return ""
    note = "" if report.sequential.fixed_n_descriptive else sequential_note(report)
    return (
        f"<h2>{esc(SEQUENTIAL_TITLE)}</h2>{table(['', ''], rows, cls='meta', tid='sequential')}"
        + (f'<p class="note" id="sequential-note">{esc(note)}</p>' if note else "")
    )


def gates(report: AblationReport) -> str:
    """The gates table: name, status, evidence, p-values."""
    rows = [
        [esc(g.name), f'<span class="status-{esc(g.status)}">{esc(g.status.upper())}</span>',
         esc(g.evidence), number(g.pvalue, fmt_p(g.pvalue)),
         number(g.adjusted_pvalue, fmt_p(g.adjusted_pvalue))]
        for g in report.gates
    ]  # fmt: skip
    return table(["gate", "status", "evidence", "p", "adjusted p"], rows, tid="gates")


def arms_and_metrics(report: AblationReport) -> str:
    """The report's arm summaries (errors, latency, cost: a cost some trials did not state is
    said to be, never summed as 0) and paired metrics (latency, cost, token usage, quality), with
    their notes: the renderers' own rows (``ablation report``'s Arms and Paired metrics)."""
    rows = [[esc(cell) for cell in row] for row in arm_rows(report)]
    out = "<h2>Arms</h2>" + table(["", "baseline", "candidate"], rows, tid="arms")
    metrics = [[esc(cell) for cell in row] for row in metric_rows(report)]
    if metrics:
        notes = "".join(f'<p class="note">{esc(n)}</p>' for n in metric_notes(report))
        out += (
            "<h2>Paired metrics (pairs where both trials completed)</h2>"
            + table(list(METRIC_HEADERS), metrics, tid="metrics") + notes
        )
    return out


def outcomes(report: AblationReport) -> str:
    """The report's paired outcomes (its 2x2 table and note) and, for several runs per task, its
    repeated-runs block (the renderers' rows; the stable regressions and improvements the first
    :data:`LIST_CAP` of each, the rest counted)."""
    rows = [[esc(c) for c in row] for row in paired_rows(report)]
    out = (
        "<h2>Paired outcomes</h2>" + table(["", "candidate pass", "candidate fail", "total"], rows, tid="outcomes")
        + f'<p class="note">{esc(paired_note(report))}</p>'
    )  # fmt: skip
    rep = report.repeated
    if rep is None:
        return out
    rows = [[esc(k), esc(v)] for k, v in repeated_rows(report) if not k.startswith("stable ")]
    for name, ids in (("stable regressions", rep.stable_regressions), ("stable improvements", rep.stable_improvements)):
        more = f" and {len(ids) - LIST_CAP} more" if len(ids) > LIST_CAP else ""
        rows.append([name, esc((", ".join(map(id_text, ids[:LIST_CAP])) or DASH) + more)])
    return out + "<h2>Repeated runs (the task is the unit)</h2>" + table(["", "value"], rows, tid="repeated")


def provenance(report: AblationReport) -> str:
    """The report's provenance, as every renderer ends with it: seed, resamples, confidence,
    alpha, runs, error policy, agents, times, versions, a reused baseline, labels."""
    lines = "<br>".join(esc(line) for line in provenance_lines(report))
    return f'<h2>Provenance</h2><p class="note" id="provenance">{lines}</p>'


def excluded(report: AblationReport, task_url: Callable[[str], str], where: str = ALL_LISTED) -> str:
    """What the pairing left out, and why (the report's ``excluded``, which its paired outcomes'
    note says are listed below them; the first :data:`LIST_CAP` listed, then ``where`` the rest
    are), each task linked to its page (``task_url``: a task id to its page's URL)."""
    if not report.excluded:
        return ""
    rows = [
        [task_link(task_url(e.task_id), e.task_id), "" if e.run is None else str(e.run), esc(e.reason)]
        for e in report.excluded[:LIST_CAP]
    ]
    return (
        f"<h2>Left out of the pairing ({len(report.excluded)})</h2>"
        + table(["task", "run", "reason"], rows, tid="excluded")
        + more(len(report.excluded), len(rows), where)
    )


def damaged(errors: Iterable[Exception]) -> str:
    """One error line per campaign left out of a list because its stored row does not decode."""
    return "".join(f'<p class="error">{esc(str(exc))}</p>' for exc in errors)


def more(total: int, shown: int, where: str = "") -> str:
    """The note under a list capped at :data:`LIST_CAP` items: how many of ``total`` were not
    shown, then ``where`` (text, escaped here: where to find them all); ``""`` when none was
    left out."""
    left = total - shown
    return f'<p class="note">and {left} more{esc(where)}</p>' if left > 0 else ""


def count(text: str) -> int | None:
    """A count written in a query string: 1 to 9 ASCII digits, else ``None`` (the page's
    default). ``str.isdigit`` alone also holds for characters :class:`int` does not read
    (``"\u00b2"``), which would fail the page."""
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def finite(x: float | None) -> bool:
    """Whether ``x`` is a finite number."""
    return x is not None and math.isfinite(x)


def layout(title: str, body: str, *, store: str = "", refresh: str = "") -> str:
    """A whole page: the title, the navigation, ``body`` (markup) and the static assets.

    ``refresh``: a progress endpoint the script polls (a running campaign's page).
    """
    poll = f' data-progress="{esc(refresh)}"' if refresh else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title>"
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/view.css">'
        '<script src="/static/view.js" defer></script></head>'
        f"<body{poll}><header><nav>{link('/', 'Campaigns')} {link('/compare', 'Compare')}"
        f'</nav><span class="store">{esc(store)}</span></header>'
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )
