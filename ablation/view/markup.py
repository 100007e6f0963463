"""HTML building blocks of the viewer's pages: the layout, escaping, links, tables and numbers.

Every string that comes from the store (task ids, categories, agent names, outputs, errors,
labels) enters a page through :func:`esc`, which shows control characters as ``\\xNN`` (ANSI
escapes included) and HTML-escapes the rest, quotes too, so it is text wherever it lands. Links
are built here from ids (percent-encoded, then escaped), never taken from stored text. Pages load
one stylesheet and one script from ``/static/`` and hold no inline script, style or event
handler, as the Content-Security-Policy of :mod:`ablation.view.app` requires.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import quote, urlencode

from ablation.render._format import DASH, fmt_interval, fmt_p, fmt_pct, fmt_pp, fmt_ratio
from ablation.render.html import esc
from ablation.report import AblationReport, Interval

__all__ = [
    "damaged", "esc", "interval", "layout", "link", "number", "pct", "table", "url",
    "verdict_badge",
]  # fmt: skip


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
    """An ``<a>`` to one of the viewer's own paths, its text escaped."""
    klass = f' class="{esc(cls)}"' if cls else ""
    return f'<a href="{esc(href)}"{klass}>{esc(text)}</a>'


def number(value: float | None, text: str) -> str:
    """``text`` in a span that carries the exact value (``data-value``) for readers and tests."""
    exact = "" if value is None else repr(float(value))
    return f'<span class="num" data-value="{esc(exact)}">{esc(text)}</span>'


def pct(value: float | None) -> str:
    """A fraction as a percentage, with its exact value."""
    return number(value, fmt_pct(value))


def interval(iv: Interval | None, kind: str = "pct") -> str:
    """An interval with its level and method."""
    if iv is None:
        return DASH
    return f'{esc(fmt_interval(iv, kind))} <span class="method">{esc(iv.method)}</span>'


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "", tid: str = ""
) -> str:
    """A table whose cells are **already markup** (escape text with :func:`esc` first)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    attrs = (f' class="{esc(cls)}"' if cls else "") + (f' id="{esc(tid)}"' if tid else "")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


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
        ["Uplift", f'<span id="uplift">{number(u.estimate, fmt_pp(u.estimate))}</span> '
         f"{interval(u.ci, 'pp')}"],
        ["Bootstrap (secondary)", interval(u.bootstrap_ci, "pp")],
    ]
    for arm in (report.baseline, report.candidate):
        name = "Baseline" if arm is report.baseline else "Candidate"
        rows.append([f"{name} pass rate ({esc(arm.agent or '')})",
                     f"{pct(arm.pass_rate)} ({arm.passes}/{arm.n_trials}) "
                     f"{interval(arm.pass_rate_ci)}"])  # fmt: skip
    if report.latency is not None and report.latency.geometric_mean_ratio is not None:
        lat = report.latency
        rows.append(["Latency ratio (geometric mean)",
                     f"{number(lat.geometric_mean_ratio, fmt_ratio(lat.geometric_mean_ratio))} "
                     f"{interval(lat.ratio_ci, 'ratio')}"])  # fmt: skip
    if report.minimum_detectable_effect is not None:
        mde = report.minimum_detectable_effect
        rows.append(["Minimum detectable effect", f"{number(mde, fmt_pp(mde))} "
                     f'<span class="method">{esc(report.minimum_detectable_effect_method or "")}'
                     "</span>"])  # fmt: skip
    return table(["figure", "value"], rows, cls="figures", tid="headline")


def gates(report: AblationReport) -> str:
    """The gates table: name, status, evidence, p-values."""
    rows = [
        [esc(g.name), f'<span class="status-{esc(g.status)}">{esc(g.status.upper())}</span>',
         esc(g.evidence), number(g.pvalue, fmt_p(g.pvalue)),
         number(g.adjusted_pvalue, fmt_p(g.adjusted_pvalue))]
        for g in report.gates
    ]  # fmt: skip
    return table(["gate", "status", "evidence", "p", "adjusted p"], rows, tid="gates")


def damaged(errors: Iterable[Exception]) -> str:
    """One error line per campaign left out of a list because its stored row does not decode."""
    return "".join(f'<p class="error">{esc(str(exc))}</p>' for exc in errors)


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
        '<link rel="stylesheet" href="/static/view.css">'
        '<script src="/static/view.js" defer></script></head>'
        f"<body{poll}><header><nav>{link('/', 'Campaigns')} {link('/compare', 'Compare')}"
        f'</nav><span class="store">{esc(store)}</span></header>'
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )
