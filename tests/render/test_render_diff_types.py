"""The report's drill-down never shows two outputs of different values as one: where their texts
read the same (``14`` and ``"14"``, ``None`` and ``""``) the JSON report's diff and the diff of
the terminal, Markdown and HTML reports compare typed JSON, and each report names both types;
a task whose arms answered alike shows no diff and no note."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest

from ablation import AblationTask, CampaignConfig, TaskResult
from ablation.analysis.build import report_from_results
from ablation.render import plots, render
from ablation.report import AblationReport

#: (baseline output, candidate output): different values whose plain texts read the same.
LOOKALIKES: list[tuple[Any, Any]] = [
    (14, "14"),
    (None, ""),
    (True, "true"),
    ({"a": 1}, '{"a": 1}'),
    ([1], "[1]"),
    ("2.5", 2.5),
]
ALIKE = {"k": [1, "x"]}


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _report() -> AblationReport:
    """Each pair a regression (the baseline passed, the candidate failed); the last task's arms
    gave one output."""
    pairs = [*LOOKALIKES, (ALIKE, ALIKE)]
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output="x") for i in range(len(pairs))]
    results = [
        TaskResult(task_id=f"t{i}", arm=arm, passed=arm == "baseline", output=out)
        for i, pair in enumerate(pairs) for arm, out in zip(("baseline", "candidate"), pair, strict=True)
    ]  # fmt: skip
    return report_from_results(results, tasks=tasks, config=CampaignConfig(n_resamples=100))


def test_the_json_reports_diff_keeps_the_types() -> None:
    report = AblationReport.model_validate_json(_report().model_dump_json())
    details = {d.task_id: d for d in report.details}
    for i, (before, after) in enumerate(LOOKALIKES):
        diff = details[f"t{i}"].diff
        assert any(s.op != "equal" for s in diff), (before, after, diff)
        old = "".join(s.text for s in diff if s.op != "insert")
        new = "".join(s.text for s in diff if s.op != "delete")
        assert json.loads(old) == before and json.loads(new) == after
        assert type(json.loads(old)) is type(before) and type(json.loads(new)) is type(after)
    assert [s.op for s in details[f"t{len(LOOKALIKES)}"].diff] == ["equal"]


def _sections(text: str, start: str) -> dict[str, str]:
    """Each drill-down of ``text`` by task id; ``start`` matches the head before the id."""
    pieces = re.split(start + r"(t\d+)", text)
    return {tid: body for tid, body in zip(pieces[1::2], pieces[2::2], strict=True)}


#: Each format's diff: where it starts, and its deleted and inserted runs (whose text group 1 is).
DIFFS = {
    "html": (r'<pre class="diff">(.*?)</pre>', r"<del>(.*?)</del>", r"<ins>(.*?)</ins>"),
    "markdown": (r"<b>diff</b> \(baseline → candidate\):\n<pre>(.*?)</pre>", r"<del>(.*?)</del>", r"<ins>(.*?)</ins>"),
    "terminal": (r"\[-deleted-\] \{\+inserted\+\}\): (.*)", r"\[-(.*?)-\]", r"\{\+(.*?)\+\}"),
}


def _diff_sides(fmt: str, body: str) -> tuple[str, str]:
    """The baseline's and the candidate's text as the drill-down's diff in ``fmt`` shows them."""
    where, deleted, inserted = DIFFS[fmt]
    found = re.search(where, body, re.S)
    assert found is not None, (fmt, body)
    diff = found.group(1).rstrip("\n") if fmt == "terminal" else found.group(1)
    old = re.sub(inserted, "", re.sub(deleted, r"\1", diff, flags=re.S), flags=re.S)
    new = re.sub(deleted, "", re.sub(inserted, r"\1", diff, flags=re.S), flags=re.S)
    return (old, new) if fmt == "terminal" else (html.unescape(old), html.unescape(new))


def test_every_report_shows_lookalike_outputs_apart_and_names_their_types() -> None:
    report = _report()
    formats = {
        "html": (render(report, "html", details=True), r"REGRESSION: "),
        "markdown": (render(report, "markdown", details=True), r"<summary>REGRESSION: "),
        "terminal": (render(report, "terminal", details=True, width=200), r"REGRESSION: "),
    }
    for fmt, (text, start) in formats.items():
        sections = _sections(text, start)
        assert len(sections) == len(LOOKALIKES) + 1, fmt
        for i, (before, after) in enumerate(LOOKALIKES):
            body = sections[f"t{i}"]
            note = f"The outputs differ in type: baseline {_name(before)}, candidate {_name(after)}."
            assert (body if fmt == "terminal" else html.unescape(body)).count(note) == 1, (fmt, before, after)
            old, new = (json.loads(side) for side in _diff_sides(fmt, body))
            assert (old, new) == (before, after) and (type(old), type(new)) == (type(before), type(after))
        alike = sections[f"t{len(LOOKALIKES)}"]
        assert "differ in type" not in alike and "diff (" not in alike and "<b>diff</b>" not in alike, fmt


def test_an_empty_text_output_is_not_called_missing_in_html() -> None:
    page = render(_report(), "html", details=True)
    pair = _sections(page, r"REGRESSION: ")["t1"]  # None -> ""
    assert pair.count("(no output)") == 1 and pair.count("(empty output)") == 1
