r"""User text (task ids, categories, agent and file names, scorer names) keeps its place in a report.

- In the HTML report's plots, a ``$`` in a category or scorer name is drawn as written, never read
  as mathtext by matplotlib (``costs $$`` once made ``compare --format html`` fail).
- The HTML ``<title>`` (the candidate's file name) is one line, and no line of any page, head
  included, is a GitHub Actions workflow command; JUnit from :func:`render_junit` neither.
- In Markdown, no task id or category ends a block or a table row: a blank line in the drill-down's
  ``<summary>`` once ended its HTML block and let a task id inject a heading, a link and an image.
  Checked by rendering with a CommonMark parser (markdown-it-py).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here
from markdown_it import MarkdownIt
from markdown_it.token import Token
from report_fixtures import SNAPSHOT_POLICY, make_report

from ablation.analysis.gates import evaluate_gates
from ablation.render import plots, render
from ablation.render.junit import render_junit
from ablation.report import AblationReport

INJECTED_ID = "t1\n\n# INJECTED\n\n[click](https://evil.example/x) ![p](https://evil.example/p.png)"
INJECTED_CATEGORY = "c\n\n## CAT\n\n**bold** ![q](https://evil.example/q.png)"
DOLLARS = ["costs $$", "$\\foo$", "$x^2$ and $y$", "a $ b", "\\$ 5", "$$$"]
CANDIDATE_FILE = "cand\n::add-mask::x.jsonl"


def _commands(text: str) -> list[str]:
    """Lines a CI runner would read as workflow commands."""
    return [
        line for line in re.split(r"\r\n|\r|\n", text)
        if line.strip().startswith("::") or "##[" in line
    ]  # fmt: skip


def _write_results(tmp_path: Path, categories: list[str], first_id: str = "t1") -> tuple[Path, Path]:
    """A baseline and a candidate result file (candidate named :data:`CANDIDATE_FILE`): one
    regression and one improvement per category, the first regression's id ``first_id``."""
    base: list[dict[str, Any]] = []
    cand: list[dict[str, Any]] = []
    for i, cat in enumerate(categories):
        for j, (b, c) in enumerate([(True, False), (False, True), (True, True), (False, False)]):
            tid = first_id if (i, j) == (0, 0) else f"t{i}-{j}"
            base.append({"id": tid, "passed": b, "category": cat})
            cand.append({"id": tid, "passed": c, "category": cat})
    a, b = tmp_path / "a.jsonl", tmp_path / CANDIDATE_FILE
    a.write_text("".join(json.dumps(r) + "\n" for r in base), encoding="utf-8")
    b.write_text("".join(json.dumps(r) + "\n" for r in cand), encoding="utf-8")
    return a, b


# --- A: plots draw user text literally ---------------------------------------------------------


def test_dollar_signs_in_categories_do_not_break_compare_html(tmp_path: Path) -> None:
    a, b = _write_results(tmp_path, DOLLARS)
    out = tmp_path / "r.html"
    proc = run_here(["compare", str(a), str(b), "--format", "html", "--output", str(out)])
    assert proc.returncode in (0, 2), proc.stderr
    page = out.read_text(encoding="utf-8")
    assert page.count('<figure class="plot">') == 3  # outcomes, intervals, categories
    assert "costs $$" in page and "$\\foo$" in page


def _dollar_report() -> AblationReport:
    base = make_report()
    names = iter(DOLLARS)
    categories = [c.model_copy(update={"category": next(names)}) for c in base.categories]
    categories[0] = categories[0].model_copy(
        update={"ci": categories[0].ci.model_copy(update={"method": "$\\sqrt{x}$ boot"})}
    )
    quality = {f"${name}$": q for name, q in base.quality.items()}
    return base.model_copy(update={"categories": categories, "quality": quality})


def test_every_plot_label_is_drawn_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib import cbook
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    figures: list[Any] = []
    real_svg = plots._svg

    def keep(fig: Any, prefix: str) -> str:
        figures.append(fig)
        return real_svg(fig, prefix)

    monkeypatch.setattr(plots, "_svg", keep)
    report = _dollar_report()
    assert [caption for caption, _ in plots.report_plots(report)] == [
        "Paired outcomes", "Intervals", "Uplift by category",
    ]  # fmt: skip
    shown: list[str] = []
    for fig in figures:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
        for t in texts:
            raw = t.get_text()
            # matplotlib reads no mathtext in it, and shows each "\$" as "$" (Text._preprocess_math)
            assert not cbook.is_math_text(raw), raw
            literal = raw.replace("\\$", "$")
            shown.append(literal)
            if "$" in literal:
                ref = fig.text(0, 0, literal, parse_math=False, fontproperties=t.get_fontproperties())
                width = t.get_window_extent(renderer).width
                assert width == pytest.approx(ref.get_window_extent(renderer).width), raw
    cats = report.categories
    for c in cats:
        assert f"{c.category} (n={c.n})" in shown
    assert any("$\\sqrt{x}$ boot" in s for s in shown)
    assert any(s.startswith("quality: $rubric$") for s in shown)


@pytest.mark.parametrize("text", ["costs $$", "$\\foo$", "\\$", "\\\\$x$", "plain", "$", "a\\b$c"])
def test_literal_is_read_back_as_written_by_matplotlib(text: str) -> None:
    from matplotlib.text import Text

    label = Text(0, 0, plots.literal(text))
    assert label._preprocess_math(label.get_text()) == (text, False)


# --- B: the HTML title and JUnit carry no workflow command ---------------------------------------


class _Title(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.title = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.inside = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.title += data


def test_html_title_is_one_line_and_no_line_is_a_command(tmp_path: Path) -> None:
    a, b = _write_results(tmp_path, ["c1", "c2"])
    out = tmp_path / "r.html"
    proc = run_here(["compare", str(a), str(b), "--format", "html", "--output", str(out)])
    assert proc.returncode in (0, 2), proc.stderr
    page = out.read_text(encoding="utf-8")
    assert _commands(page) == []
    parser = _Title()
    parser.feed(page)
    assert "\n" not in parser.title
    assert "cand\\n::add-mask::x.jsonl" in parser.title


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "junit", "html"])
def test_no_format_turns_a_file_name_into_a_command(tmp_path: Path, fmt: str) -> None:
    a, b = _write_results(tmp_path, ["c1", "c2"])
    proc = run_here(["compare", str(a), str(b), "--format", fmt, "--details"])
    assert proc.returncode in (0, 2), proc.stderr
    assert "add-mask" in proc.stdout or fmt == "junit"
    assert _commands(proc.stdout) == []


def test_junit_messages_hold_no_command() -> None:
    report = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    gates = list(report.gates)
    evidence = "bad\n::error::x\n  ::add-mask::y ##[group]z"
    gates[0] = gates[0].model_copy(update={"status": "fail", "evidence": evidence})
    xml = render_junit(report.model_copy(update={"gates": gates}))
    assert _commands(xml) == []
    failures = [f.get("message") for f in ET.fromstring(xml).iter("failure")]
    assert f"fail: {evidence}" in failures  # the reader still gets the text as written


# --- C: Markdown ------------------------------------------------------------------------------


def _injected_report() -> AblationReport:
    base = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    details = list(base.details)
    details[0] = details[0].model_copy(
        update={"task_id": INJECTED_ID, "category": INJECTED_CATEGORY}
    )
    categories = list(base.categories)
    categories[0] = categories[0].model_copy(update={"category": INJECTED_CATEGORY})
    replaced = base.details[0].task_id
    return base.model_copy(
        update={
            "details": details,
            "categories": categories,
            "regressions": [INJECTED_ID, *(t for t in base.regressions if t != replaced)],
            "critical_regressions": [
                INJECTED_ID, *(t for t in base.critical_regressions if t != replaced)
            ],
            "improvements": ["- item", "1. first", INJECTED_ID, *base.improvements],
            "notes": [f"Also changed: quality {INJECTED_CATEGORY} rose"],
            "provenance": base.provenance.model_copy(
                update={"candidate_agent": INJECTED_ID, "labels": {INJECTED_CATEGORY: "---"}}
            ),
        }
    )


def _tokens(md: str) -> list[Token]:
    out: list[Token] = []
    stack = MarkdownIt("commonmark", {"html": True}).enable("table").parse(md)
    while stack:
        tok = stack.pop(0)
        out.append(tok)
        stack[:0] = tok.children or []
    return out


def test_task_ids_and_categories_start_no_markdown_block() -> None:
    report = _injected_report()
    md = render(report, "markdown", details=True)
    tokens = _tokens(md)
    kinds = {t.type for t in tokens}
    assert not kinds & {"link_open", "image", "ordered_list_open", "hr"}
    items = [tokens[i + 2].content for i, t in enumerate(tokens) if t.type == "list_item_open"]
    assert len(items) == 1 and items[0].startswith("Also changed: ")  # the report's own list
    headings = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"
    ]
    assert headings[0].startswith("❌ ablation: Verdict: FAIL")
    assert not any("INJECTED" in h or "CAT" in h for h in headings)
    strong = [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "strong_open"
    ]
    assert strong and all(s == "CRITICAL" or s.startswith("Verdict") for s in strong), strong
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    for element in ("<h1>INJECTED", "<h2>CAT", "<strong>bold", "<a href", "<img", "<ol", "<hr"):
        assert element not in page
    # the drill-down's summary shows the id on one line, newlines written as \n
    assert "<summary>CRITICAL REGRESSION: t1\\n\\n# INJECTED\\n\\n[click]" in page
    # and each task still has its own <details> block, closed where it should be
    assert page.count("<details>") == page.count("</details>") == 1 + len(report.details)


def test_a_blank_line_in_a_summary_once_ended_the_html_block() -> None:
    """The defect's exact case: ``compare --format markdown --details`` of result files."""
    md = render(_injected_report(), "markdown", details=True)
    summaries = [line for line in md.splitlines() if line.startswith("<details><summary>")]
    assert len(summaries) == 1 + len(_injected_report().details)
    assert all(line.endswith("</summary>") for line in summaries), summaries


def test_compare_markdown_details_of_injected_ids(tmp_path: Path) -> None:
    a, b = _write_results(tmp_path, [INJECTED_CATEGORY, "c2"], first_id=INJECTED_ID)
    proc = run_here(["compare", str(a), str(b), "--format", "markdown", "--details"])
    assert proc.returncode in (0, 2), proc.stderr
    kinds = {t.type for t in _tokens(proc.stdout)}
    assert not kinds & {"link_open", "image", "list_item_open", "hr"}
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(proc.stdout)
    assert "<h1>" not in page and "INJECTED</h" not in page and "CAT</h" not in page
    assert "<strong>bold" not in page
