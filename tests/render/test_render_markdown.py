"""Markdown renderer (pull-request comment) and the several-candidates summary.

The reviewed rendering of the main fixture is checked section by section in
``tests/render/test_page_sections.py`` (inline snapshots; its docstring says how to update them).
Structure is checked by hand (GitHub table rules) and by rendering the Markdown with markdown-it
(installed with rich) with raw HTML allowed, so unescaped user text would show up as live HTML.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from markdown_it import MarkdownIt
from report_fixtures import (
    SNAPSHOT_POLICY,
    XSS,
    hostile_report,
    make_report,
    repeated_report,
    simple_report,
)
from statsmodels.stats.multitest import multipletests

from ablation.analysis.gates import evaluate_gates
from ablation.render import render, render_summary
from ablation.render.markdown import md_cell, md_table
from ablation.report import AblationReport, McNemarSummary, TrialView

_PIPE = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")


def _gated() -> AblationReport:
    return evaluate_gates(make_report(), SNAPSHOT_POLICY)


def _cells(line: str) -> int:
    return len(_PIPE.findall(line)) - 1


def _tables(md: str) -> list[list[str]]:
    """Blocks of consecutive lines starting with '|', outside <pre> blocks."""
    tables: list[list[str]] = []
    current: list[str] = []
    in_pre = False
    for line in md.splitlines():
        if "<pre>" in line:
            in_pre = True
        if not in_pre and line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
        if "</pre>" in line:
            in_pre = False
    if current:
        tables.append(current)
    return tables


def _assert_valid_tables(md: str) -> int:
    tables = _tables(md)
    lines = md.splitlines()
    for table in tables:
        assert len(table) >= 2, table
        header, sep, *rows = table
        n = _cells(header)
        assert _SEPARATOR.match(sep), f"no separator row after the header: {sep!r}"
        assert _cells(sep) == n
        for row in rows:
            assert _cells(row) == n, f"{_cells(row)} cells, header has {n}: {row!r}"
        start = lines.index(header)
        assert start == 0 or lines[start - 1].strip() == "" or lines[start - 1].startswith("#"), (
            "a table must not continue a paragraph"
        )
    return len(tables)


def _html(md: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


@pytest.mark.parametrize(
    "report",
    [_gated(), repeated_report(), hostile_report(), simple_report(10, 0, 0, 0)],
    ids=["main", "repeated", "hostile", "minimal"],
)
def test_tables_are_valid_github_tables(report: AblationReport) -> None:
    md = render(report, "markdown", details=True)
    n = _assert_valid_tables(md)
    assert n >= 3
    # markdown-it agrees on how many tables there are
    assert _html(md).count("<table>") == n


def test_headline_first_then_regressions_critical_first() -> None:
    md = render(_gated(), "markdown")
    first = md.splitlines()[0]
    assert first.startswith("## ❌ ablation: Verdict: FAIL")
    assert md.index("### Regressions (4, 2 critical)") < md.index("### Improvements (13)")
    regs = md[md.index("### Regressions") : md.index("### Improvements")]
    assert regs.index("refactor-012") < regs.index("parse-date-004")
    assert regs.count("**CRITICAL**") == 2


def test_cells_escape_pipes_newlines_and_html() -> None:
    assert md_cell("a|b\nc") == "a\\|b<br>c"
    assert md_cell("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert md_cell("*x* _y_ `z` [l](u)") == "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u)"
    table = md_table(["a", "b"], [["x|y", "1\n2"], ["short"]])
    assert _assert_valid_tables(table) == 1
    html = _html(table)
    assert "<td>x|y</td>" in html and "<td>1<br>2</td>" in html


def test_hostile_text_never_becomes_live_html() -> None:
    md = render(hostile_report(), "markdown", details=True)
    assert XSS not in md
    html = _html(md)
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in html


def test_drilldown_outputs_are_escaped_in_pre_blocks_even_with_blank_lines() -> None:
    base = make_report()
    tricky = "first line\n\n# not a heading\n</pre><script>alert(1)</script>\n\n| a | b |"
    detail = base.details[2].model_copy(
        update={"candidate": TrialView(status="completed", passed=False, output=tricky)}
    )
    md = render(base.model_copy(update={"details": [detail]}), "markdown", details=True)
    html = _html(md)
    assert "<script" not in html
    pre = re.search(r"<pre>first line\n\n# not a heading\n(.*?)</pre>", html, re.S)
    assert pre is not None, "the output did not stay inside one <pre>"
    assert "&lt;/pre&gt;&lt;script&gt;" in pre.group(1)
    assert "<h1>not a heading</h1>" not in html
    assert html.count("<details>") == 2  # the outer drill-down and one task


def test_improvements_are_capped_with_count_in_both_forms() -> None:
    many = [f"t-{i:03d}" for i in range(45)]
    report = make_report(improvements=many)
    for details in (False, True):
        md = render(report, "markdown", details=details)
        assert "... and 15 more improvements (45 in all" in md
        assert "t-029" in md and "t-030" not in md


# --------------------------------------------------------------------------- render_summary
def _candidates() -> tuple[list[AblationReport], list[str]]:
    a = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    b = simple_report(
        38,
        9,
        13,
        0,
        mcnemar=McNemarSummary(b=9, c=13, pvalue=0.5235, midp_pvalue=0.43, method="exact McNemar"),
    )
    c = simple_report(
        38,
        1,
        14,
        7,
        mcnemar=McNemarSummary(
            b=1, c=14, pvalue=0.00098, midp_pvalue=0.0005, method="exact McNemar"
        ),
    )
    return [a, b, c], ["v2", "v3|fast", "v4"]


def test_summary_holm_matches_statsmodels_in_every_format() -> None:
    from scipy.stats import binomtest

    reports, names = _candidates()
    data = json.loads(render_summary(reports, names, "json"))
    # Holm over the candidates' claims of improvement: one-sided exact McNemar, H1 better.
    better = [
        binomtest(r.mcnemar.c, r.mcnemar.b + r.mcnemar.c, 0.5, alternative="greater").pvalue
        for r in reports
    ]
    expected = multipletests(better, method="holm")[1]
    got = [row["holm_pvalue"] for row in data["rows"]]
    assert got == pytest.approx(list(expected), rel=1e-12)
    assert [row["name"] for row in data["rows"]] == names
    assert data["rows"][0]["critical_regressions"] == 2
    assert any("shared" in n or "share one baseline" in n for n in data["notes"])

    md = render_summary(reports, names, "markdown")
    assert _assert_valid_tables(md) == 1
    assert "v3\\|fast" in md and "4 (2 critical)" in md

    term = render_summary(reports, names, "terminal", width=100)
    assert "Holm" in term and "v3|fast" in term
    assert all(len(line) <= 100 for line in term.splitlines())

    page = render_summary(reports, names, "html")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page


def test_summary_rejects_bad_input() -> None:
    reports, names = _candidates()
    with pytest.raises(ValueError, match="3 reports but 2 names"):
        render_summary(reports, names[:2], "terminal")
    with pytest.raises(ValueError, match="at least one"):
        render_summary([], [], "markdown")
    with pytest.raises(ValueError, match="unknown format"):
        render_summary(reports, names, "pdf")


@pytest.mark.parametrize(("b", "c"), [(1, 0), (0, 1), (2, 3)])
def test_the_summary_sentence_counts_in_the_singular_for_one(b: int, c: int) -> None:
    # "1 regressions, 0 improvements in 10 pairs" read in the first line of every rendering
    from helpers.pairing_oracle import pair_arrays

    from ablation.analysis.build import build_report
    from ablation.config import CampaignConfig
    from ablation.render._format import summary_sentence

    n = 9 + b + c
    base = np.array([True] * 9 + [True] * b + [False] * c)
    cand = np.array([True] * 9 + [False] * b + [True] * c)
    report = build_report(pair_arrays([f"t{i}" for i in range(n)], base, cand), config=CampaignConfig(n_resamples=100))
    sentence = summary_sentence(report)
    noun = {1: "regression", 0: "regressions", 2: "regressions"}[b]
    assert f"{b} {noun}, " in sentence
    assert f" {c} improvement{'' if c == 1 else 's'} in {n} pairs" in sentence
    assert sentence in render(report, "markdown")
