r"""Plots for the HTML report, drawn with matplotlib as inline SVG.

matplotlib is imported inside :func:`report_plots` only (it is an optional dependency:
``pip install ablation[html]``), through :class:`matplotlib.figure.Figure` and its SVG writer, so
no global backend is selected and rendering terminal, Markdown or JSON reports never imports it.

Untrusted text and SVG: the plots show no task ids or outputs. Category and scorer names, and the
names of interval methods and gates (extension points), do appear (as tick labels, titles and
legend entries). matplotlib would read a pair of ``$`` in them as mathtext (and fail on bad
mathtext, ``costs $$``), so every such string passes through :func:`literal`, which escapes each
``$`` as ``\$``: matplotlib draws it as the text it is, ``$`` and all, whether or not it holds
mathtext; TeX is off (``text.usetex``) whatever the user's matplotlibrc says. Text is drawn as
glyph paths (``svg.fonttype = "path"``): the SVG holds
no text nodes at all. matplotlib also writes each label into an XML comment (escaped by
matplotlib); every comment is removed here, with the XML prolog, DOCTYPE and metadata. Element ids
get a per-figure prefix so several plots can live in one HTML page without clashing, and the hash
salt is fixed so the same report gives the same SVG bytes.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from typing import Any

from ablation.render._breakdowns import CATEGORY_RULE, show_categories, shown_categories
from ablation.render._format import printable
from ablation.report import AblationReport, Interval

__all__ = ["clean_svg", "literal", "report_plots"]

_COLORS = {
    "both pass": "#4c9a5b",
    "regressions": "#c0392b",
    "improvements": "#2e86c1",
    "both fail": "#7f8c8d",
}
_META: dict[str, Any] = {"Creator": None, "Date": None, "Format": None, "Type": None}


def literal(text: str) -> str:
    r"""``text`` for a matplotlib label, drawn as written: never parsed as mathtext.

    Each ``$`` becomes ``\$``, so no ``$`` is left unescaped; matplotlib then draws the string
    with every ``\$`` shown as ``$`` (a backslash already in ``text`` stays). Control characters
    are shown as escapes (:func:`~ablation.render._format.printable`).
    """
    return printable(text).replace("$", "\\$")


def clean_svg(svg: str, prefix: str) -> str:
    """Strip prolog, DOCTYPE, comments and metadata; prefix every id and reference."""
    svg = re.sub(r"<\?xml[^>]*\?>", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>", "", svg)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    return svg.strip()


def _svg(fig: Any, prefix: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=_META, bbox_inches="tight")
    return clean_svg(buf.getvalue(), prefix)


def _outcomes(report: AblationReport, figure_cls: Any) -> Any:
    t = report.table
    labels = list(_COLORS)
    values = [t.both_pass, t.regressions, t.improvements, t.both_fail]
    fig = figure_cls(figsize=(6.0, 2.4))
    ax = fig.add_subplot()
    bars = ax.barh(labels[::-1], values[::-1], color=[_COLORS[k] for k in labels[::-1]])
    for bar, value in zip(bars, values[::-1], strict=True):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {value}", va="center")
    ax.set_xlabel(f"pairs (n = {t.n})")
    ax.set_title("Paired outcomes (baseline -> candidate)")
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_xlim(0, max([*values, 1]) * 1.15)
    return fig


def _forest_rows(report: AblationReport) -> list[tuple[str, list[tuple[str, float, Interval]]]]:
    u = report.uplift
    uplift = [
        (f"uplift: {iv.method}", 100 * u.estimate, iv)
        for iv in (u.ci, *(x for x in u.others() if not x.secondary))
    ]
    panels: list[tuple[str, list[tuple[str, float, Interval]]]] = [("uplift (pp)", uplift)]
    lat = report.latency
    if lat is not None and lat.geometric_mean_ratio is not None and lat.ratio_ci is not None:
        panels.append(
            (
                "latency ratio (candidate / baseline, geometric mean)",
                [(f"latency ratio: {lat.ratio_ci.method}", lat.geometric_mean_ratio, lat.ratio_ci)],
            )
        )
    quality = [
        (f"quality: {name}", q.mean_difference, q.ci)
        for name, q in sorted(report.quality.items())
        if q.mean_difference is not None and q.ci is not None
    ]
    if quality:
        panels.append(("quality difference", quality))
    return panels


def _forest(report: AblationReport, figure_cls: Any) -> Any:
    from matplotlib.ticker import MaxNLocator

    panels = _forest_rows(report)
    heights = [max(len(rows), 1) for _, rows in panels]
    fig = figure_cls(figsize=(7.0, 0.9 + 0.5 * sum(heights) + 0.6 * len(panels)))
    axes = fig.subplots(len(panels), 1, gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (title, rows) in zip(axes[:, 0], panels, strict=True):
        scale = 100.0 if title.startswith("uplift") else 1.0
        ratio = title.startswith("latency")
        ref = 1.0 if ratio else 0.0
        for i, (_label, est, iv) in enumerate(rows):
            y = len(rows) - 1 - i
            ax.plot([iv.low * scale, iv.high * scale], [y, y], color="#34495e", lw=2)
            worse = est > ref if ratio else est < ref
            ax.plot([est], [y], "o", color="#c0392b" if worse else "#2e86c1")
        labels = [literal(textwrap.fill(r[0], 34)) for r in rows]
        ax.set_yticks(range(len(rows)), labels[::-1])
        ax.axvline(ref, color="#7f8c8d", ls="--", lw=1)
        ax.xaxis.set_major_locator(MaxNLocator(6))
        ni = report.noninferiority
        if title.startswith("uplift") and ni is not None:
            ax.axvline(-100 * ni.margin, color="#e67e22", ls=":", lw=1.2)
            ax.text(
                -100 * ni.margin,
                len(rows) - 0.45,
                "NI margin ",
                color="#e67e22",
                va="top",
                ha="right",
            )
        ax.set_title(literal(title), loc="left", fontsize=9)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.spines[["top", "right"]].set_visible(False)
    level = round(100 * report.provenance.confidence_level)
    fig.suptitle(f"Estimates with {level}% intervals (dashed: no change)", fontsize=10)
    fig.tight_layout()
    return fig


def _categories(report: AblationReport, figure_cls: Any) -> Any:
    """Each shown category's uplift and interval (:func:`shown_categories`: at most
    :data:`~ablation.render._breakdowns.CATEGORY_CAP`; when there are more, the title says how
    many are shown of how many and the rule that chose them)."""
    cats = shown_categories(report)
    fig = figure_cls(figsize=(7.0, 0.8 + 0.4 * len(cats)))
    ax = fig.add_subplot()
    for i, cat in enumerate(cats):
        y = len(cats) - 1 - i
        if cat.ci is not None:
            ax.plot(
                [100 * cat.ci.low, 100 * cat.ci.high], [y, y], color="#34495e", lw=2
            )
        color = "#c0392b" if cat.uplift < 0 else "#2e86c1"
        ax.plot([100 * cat.uplift], [y], "o", color=color)
    ax.set_yticks(
        range(len(cats)),
        [literal(f"{textwrap.shorten(c.category, 40, placeholder='...')} (n={c.n})") for c in cats][
            ::-1
        ],
    )
    ax.axvline(0, color="#7f8c8d", ls="--", lw=1)
    ax.set_xlabel("uplift (percentage points)")
    methods = sorted({c.ci.method for c in cats if c.ci is not None})
    title = "Uplift by category" + (f" ({', '.join(methods)})" if methods else "")
    total = len(report.categories)
    if len(cats) < total:
        title += f"\n{len(cats)} of {total} categories: the {len(cats)} {CATEGORY_RULE}"
    ax.set_title(literal(title), loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _sequence(report: AblationReport, figure_cls: Any) -> Any:
    """The anytime-valid interval for the uplift against pairs run, with the decision lines."""
    s = report.sequential
    assert s is not None
    pts = s.trajectory
    x = [p.pairs for p in pts]
    fig = figure_cls(figsize=(6.0, 2.8))
    ax = fig.add_subplot()
    ax.fill_between(x, [p.low for p in pts], [p.high for p in pts], color="#aed6f1", step="post",
                    label=f"anytime-valid {100 * s.interval.confidence_level:g}% interval")
    ax.plot(x, [p.estimate for p in pts], color="#1b4f72", lw=1, label="running uplift")
    ax.axhline(0.0, color="#7f8c8d", lw=0.8)
    if s.margin is not None:
        ax.axhline(-s.margin, color="#c0392b", lw=0.8, ls="--", label="-margin")
    ax.axvline(s.pairs, color="#4c9a5b", lw=0.8, ls=":", label=literal(f"stop ({s.gate})"))
    ax.set_xlabel(f"pairs run (of {s.n_tasks} tasks)")
    ax.set_ylabel("uplift")
    ax.set_ylim(-1.0, 1.0)
    ax.set_title("Confidence sequence for the uplift", loc="left")
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def report_plots(report: AblationReport) -> list[tuple[str, str]]:
    """The report's plots as ``(caption, inline svg)`` pairs.

    Raises:
        ImportError: if matplotlib is not installed.
    """
    import matplotlib
    from matplotlib.figure import Figure

    out: list[tuple[str, str]] = []
    with matplotlib.rc_context(
        {
            "svg.fonttype": "path",
            "svg.hashsalt": "ablation-report",
            "font.size": 9,
            "text.usetex": False,
        }
    ):
        out.append(("Paired outcomes", _svg(_outcomes(report, Figure), "plot-outcomes")))
        out.append(("Intervals", _svg(_forest(report, Figure), "plot-forest")))
        cats = report.categories
        if show_categories(report) and all(math.isfinite(c.uplift) for c in cats):
            out.append(("Uplift by category", _svg(_categories(report, Figure), "plot-categories")))
        if report.sequential is not None and report.sequential.trajectory:
            out.append(("Confidence sequence", _svg(_sequence(report, Figure), "plot-sequence")))
    return out
