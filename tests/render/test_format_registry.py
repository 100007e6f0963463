"""The report formats live in one registry: dispatch, the one list of names, a toy format."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.verdict_files import write_verdicts
from report_fixtures import SNAPSHOT_POLICY, make_report
from toys.tsv_format import TSV

from ablation.analysis.gates import evaluate_gates
from ablation.cli.main import main
from ablation.render import FORMATS, register_format, render, render_summary
from ablation.render._ci_safe import no_workflow_commands
from ablation.render.formats import REPORT_FORMATS
from ablation.render.junit import render_junit


@pytest.fixture
def tsv() -> Iterator[None]:
    register_format(TSV)  # the toy's one registration line
    yield
    REPORT_FORMATS.pop("tsv")


def test_every_builtin_format_dispatches_to_its_renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, object]]] = []

    def stub(tag: str):  # type: ignore[no-untyped-def]
        def renderer(report: object, **options: object) -> str:
            seen.append((tag, options))
            return f"<{tag}>"

        return renderer

    for module, name in (("terminal", "render_terminal"), ("markdown", "render_markdown"),
                         ("_json", "render_json"), ("html", "render_html"), ("junit", "render_junit")):  # fmt: skip
        monkeypatch.setattr(f"ablation.render.{module}.{name}", stub(name))
    report = make_report()
    got = {fmt: render(report, fmt, details=True, width=90) for fmt in FORMATS}
    assert got == {
        "terminal": "<render_terminal>", "markdown": "<render_markdown>", "json": "<render_json>",
        "html": "<render_html>", "junit": "<render_junit>",
    }
    assert seen == [
        ("render_terminal", {"details": True, "width": 90}), ("render_markdown", {"details": True}),
        ("render_json", {}), ("render_html", {}), ("render_junit", {}),
    ]


def test_json_and_junit_render_the_report_itself() -> None:
    report = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    assert render(report, "json") == report.model_dump_json(indent=2)
    assert render(report, "junit") == no_workflow_commands(render_junit(report), markup=True)


def test_the_command_line_and_settings_read_the_same_names() -> None:
    from ablation.cli import parser

    action = next(
        a for a in parser.build_parser()._subparsers._group_actions[0].choices["compare"]._actions  # type: ignore[union-attr]
        if "--format" in a.option_strings
    )
    assert action.choices is not None and list(action.choices) == list(FORMATS)


def test_an_unknown_format_is_refused_with_the_names() -> None:
    with pytest.raises(ValueError, match="unknown format 'nope': use one of terminal, markdown, json, html, junit"):
        render(make_report(), "nope")


def test_junit_has_no_summary() -> None:
    with pytest.raises(ValueError, match="no several-candidates summary"):
        render_summary([make_report()], ["a"], "junit")


def test_a_toy_format_registered_with_one_line_renders(tsv: None) -> None:
    report = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    assert "tsv" in FORMATS and FORMATS[-1] == "tsv"
    rows = dict(csv.reader(io.StringIO(render(report, "tsv")), delimiter="\t"))
    assert rows["verdict"] == report.verdict
    assert float(rows["ci_low"]) == pytest.approx(report.uplift.ci.low, abs=1e-6)
    assert {k for k in rows if k.startswith("gate:")} == {f"gate:{g.name}" for g in report.gates}


def test_the_toy_format_is_gone_once_removed() -> None:
    assert "tsv" not in FORMATS


def test_the_toy_format_works_through_the_command_line(
    tsv: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = write_verdicts(tmp_path / "before.jsonl", [True] * 30)
    after = write_verdicts(tmp_path / "after.jsonl", [i >= 12 for i in range(30)])
    code = main(["compare", str(before), str(after), "--format", "tsv"])
    out, err = capsys.readouterr()
    rows = dict(csv.reader(io.StringIO(out.strip()), delimiter="\t"))
    assert rows["verdict"] == "fail" and code == 2, err
    assert rows["gate:no significant regression"] == "fail"


def test_a_format_without_a_summary_writes_several_candidates_one_after_the_other(
    tsv: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The registry's promise for ``summary=None``: the reports one after the other (it raised a
    ValueError of its own for several candidates)."""
    before = write_verdicts(tmp_path / "before.jsonl", [True] * 30)
    worse = write_verdicts(tmp_path / "worse.jsonl", [i >= 12 for i in range(30)])
    same = write_verdicts(tmp_path / "same.jsonl", [True] * 30)
    code = main(["compare", str(before), str(worse), str(same), "--format", "tsv"])
    out, err = capsys.readouterr()
    texts = [b.strip() for b in out.split("\n\n") if b.strip()]
    blocks = [dict(csv.reader(io.StringIO(b), delimiter="\t")) for b in texts]
    assert [b["verdict"] for b in blocks] == ["fail", "pass"] and code == 2, err
