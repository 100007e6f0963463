"""Terminal renderer (and the ``render`` entry point, JSON output, import isolation).

The reviewed rendering of the main fixture at 80 columns is checked section by section in
``tests/render/test_page_sections.py`` (inline snapshots; its docstring says how to update them).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from report_fixtures import (
    SNAPSHOT_POLICY,
    hostile_report,
    make_report,
    repeated_report,
    simple_report,
)
from rich.console import Console

from ablation.analysis.gates import evaluate_gates
from ablation.render import _format as f
from ablation.render import print_report, render
from ablation.report import AblationReport, TrialView

BORDER = set("╭╮╰╯│├┤┬┴┼─")


def _gated() -> AblationReport:
    return evaluate_gates(make_report(), SNAPSHOT_POLICY)


def _table_blocks(text: str) -> list[list[str]]:
    """Runs of consecutive lines that start with a table border character."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        if line[:1] in {"╭", "│", "├", "╰"}:
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _assert_tables_intact(text: str) -> None:
    blocks = _table_blocks(text)
    assert blocks, "no tables found"
    for block in blocks:
        assert block[0][0] == "╭" and block[-1][0] == "╰", block[:2]
        widths = {len(line) for line in block}
        assert len(widths) == 1, f"ragged table: {sorted(widths)}\n" + "\n".join(block)
        for line in block:
            assert line[-1] in BORDER, f"row does not end on a border: {line!r}"
        # column separators line up on every row, borders included
        cols = [{i for i, ch in enumerate(line[1:-1]) if ch in "│┬┼┴"} for line in block]
        assert all(c == cols[0] for c in cols), "\n".join(block)


def test_terminal_fits_80_columns_and_tables_are_intact() -> None:
    for report in (_gated(), evaluate_gates(repeated_report(), SNAPSHOT_POLICY), hostile_report()):
        text = render(report, "terminal", details=True, width=80)
        too_long = [line for line in text.splitlines() if len(line) > 80]
        assert not too_long, too_long[:3]
        _assert_tables_intact(text)


def test_default_width_is_100() -> None:
    text = render(_gated(), "terminal")
    assert max(len(line) for line in text.splitlines()) == 100


def test_order_headline_then_regressions_critical_first_then_improvements() -> None:
    text = render(_gated(), "terminal", width=80)
    first = text.splitlines()[1]
    assert "Verdict: FAIL" in first
    sections = [
        "Regressions (4, 2 critical)",
        "Improvements (13)",
        "Paired outcomes",
        "Arms",
        "Tests and intervals",
        "Paired metrics",
        "Non-inferiority",
        "Excluded from the paired analysis (2)",
        "Categories",
        "Release gates",
        "Provenance",
    ]
    positions = [text.index(s) for s in sections]
    assert positions == sorted(positions)
    regs = text[text.index("Regressions (") : text.index("Improvements (")]
    order = [
        regs.index(t) for t in ("refactor-012", "sql-injection", "parse-date", "word-problem-09")
    ]
    assert order == sorted(order)
    assert regs.count("CRITICAL") == 2


def test_long_improvement_list_is_capped_with_its_count() -> None:
    text = render(_gated(), "terminal", width=80)
    assert "... and 1 more (13 in all)" in " ".join(text.split())
    assert "retrieval/wiki-population-007" not in text.split("Paired outcomes")[0]
    full = render(_gated(), "terminal", width=80, details=True)
    assert "retrieval/wiki-population-007" in full.split("Paired outcomes")[0]


def test_methods_and_numbers_are_named() -> None:
    text = render(_gated(), "terminal", width=100)
    for needle in (
        "exact McNemar",
        "mid-p McNemar",
        "Tango score interval",
        "paired bootstrap, percentile",
        "Wilson score interval",
        "correlation 0.234",
        "0.0659 / 0.075",
        "latency ratio (geometric mean): 0.873x",
        "Wilcoxon signed-rank",
        "35 left out: scorer applies to code tasks only",
        "seed 20240611, 10000 resamples",
        "suite fingerprint 9f2c4e61b7a0",
        "baseline reused from campaign c-1e77d0",
        "no candidate result (missing observation)",
    ):
        assert needle in text, needle


def test_repeated_runs_and_flaky_tasks_are_shown() -> None:
    text = render(repeated_report(), "terminal", width=100)
    assert "Repeated runs" in text and "3 x 60" in text
    assert "Flaky tasks (2)" in text and "retrieval/wiki-date-012" in text
    assert "paired t on per-task pass fractions" in text
    assert "Tango" not in text.split("Tests and intervals")[1].split("Paired metrics")[0]


def test_drilldown_truncates_long_outputs_and_shows_errors() -> None:
    text = render(_gated(), "terminal", width=100, details=True)
    assert "… [truncated 1959 of 2559 chars]" in text
    assert "error: TimeoutError: upstream model did not" in text
    drill = text[text.index("Drill-down") :]
    assert drill.index("CRITICAL REGRESSION: code/refactor-012") < drill.index("IMPROVEMENT:")


def test_user_text_is_neither_markup_nor_terminal_control() -> None:
    base = make_report()
    detail = base.details[2].model_copy(
        update={
            "task_id": "[bold red]x[/bold red] :smile:",
            "candidate": TrialView(
                status="completed", passed=False, output="ok\x1b[2J\x1b]0;t\x07"
            ),
        }
    )
    report = base.model_copy(
        update={
            "details": [detail],
            "regressions": ["[bold red]x[/bold red] :smile:"],
            "critical_regressions": [],
        }
    )
    text = render(report, "terminal", details=True, width=100)
    assert "[bold red]x[/bold red] :smile:" in text
    assert "\x1b" not in text and "\x07" not in text
    assert "ok\\x1b[2J\\x1b]0;t\\x07" in text


def test_print_report_uses_colours_on_a_colour_console() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=True, color_system="standard")
    print_report(_gated(), console)
    assert "\x1b[" in buf.getvalue() and "Regressions (4, 2 critical)" in buf.getvalue()


def test_minimal_report_renders_in_every_format() -> None:
    report = simple_report(
        10, 0, 0, 0, summary="no discordant pairs", zero_regression_upper_bound=0.2589
    )
    for fmt in ("terminal", "markdown", "html"):
        assert render(report, fmt, details=True).endswith("\n")
    assert render(report, "json") == report.model_dump_json(indent=2)
    text = render(report, "terminal", width=80)
    assert "No task regressed in 10 pairs" in text and "25.89%" in text


def test_json_is_the_model_dump() -> None:
    report = _gated()
    text = render(report, "json")
    assert json.loads(text) == json.loads(report.model_dump_json())
    assert AblationReport.model_validate_json(text) == report


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        render(_gated(), "pdf")


def test_terminal_markdown_and_json_do_not_import_matplotlib() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r});"
        "from report_fixtures import make_report;"
        "from ablation.render import render;"
        "r = make_report();"
        "[render(r, f, details=True) for f in ('terminal', 'markdown', 'json')];"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'matplotlib'];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (f.fmt_p(0.049041748), "0.049"),
        (f.fmt_p(1.87e-301), "1.9e-301"),
        (f.fmt_p(0.0), "< 1e-300"),
        (f.fmt_p(None), "—"),
        (f.fmt_pp(0.15), "+15.0 pp"),
        (f.fmt_pp(-0.0001), "0.0 pp"),
        (f.fmt_pct(0.7), "70.0%"),
        (f.fmt_level(0.9), "90%"),
        (f.fmt_level(0.995), "99.5%"),
        (f.fmt_seconds(0.85), "850 ms"),
        (f.fmt_seconds_group([0.00093, 0.000949, None]), "0.93 / 0.949 / — ms"),
        (f.fmt_float(float("nan")), "nan"),
        (f.fmt_signed(0.0018), "+0.0018"),
        (f.truncate("abcdef", 4), "abcd\n… [truncated 2 of 6 chars]"),
        (f.printable("a\x1b[31m\r\u202eb\n"), "a\\x1b[31m\\x0d\\u202eb\n"),
    ],
)
def test_shared_formatting(value: str, expected: str) -> None:
    assert value == expected


def test_provenance_without_times_says_they_were_not_recorded() -> None:
    """A report without timestamps (the default) said ``— -> —``, a range of two dashes; it now
    says the times were not recorded and which flag records them."""
    base = simple_report(10, 2, 1, 0)
    report = base.model_copy(
        update={"provenance": base.provenance.model_copy(update={"started_at": None, "finished_at": None})}
    )
    for fmt in ("terminal", "markdown"):
        text = render(report, fmt, width=200)
        assert "times not recorded (--timestamps records them)" in text
        assert "—" + " -> " + "—" not in text
