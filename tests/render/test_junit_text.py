"""JUnit XML stays well-formed whatever text a report carries (task ids, agents' messages).

XML 1.0 allows no control character but tab, newline and carriage return, and neither U+FFFE,
U+FFFF nor a lone surrogate, not even as a character reference; ElementTree writes them as they
are. A task id with ``\\x01`` (read from a result file) made ``--format junit`` a document no CI
system could parse. The oracle is a real XML parser (expat, through ElementTree).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ablation.cli import main

ODD_IDS = ["a\x01b", "c\x00d", "e\x1bf", "g\ufffeh", "i\uffffj", "k]]>l", "<m>&amp;", "n\u2028o"]


@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=40))
def test_any_text_made_legal_parses_back_in_an_attribute_and_in_text(text: str) -> None:
    from ablation.render._format import printable
    from ablation.render.junit import _legal

    element = ET.Element("case", name=_legal(text))
    element.text = _legal(text)
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))  # raises if not well-formed
    assert parsed.get("name") == _legal(text)
    # in text, an XML parser reads a carriage return as a newline (XML 1.0 section 2.11)
    assert (parsed.text or "") == _legal(text).replace("\r\n", "\n").replace("\r", "\n")
    if text.isprintable() and printable(text) == text:
        assert _legal(text) == text  # text every report shows as it is is left as it is


def _critical_regressions(tmp_path: Path, ids: list[str]) -> tuple[Path, Path, Path]:
    """Result files in which every one of ``ids`` is a critical task that regressed, and their
    ``compare --format junit`` written to the third path (the gate fails: exit 2)."""
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("".join(json.dumps({"id": i, "passed": True, "critical": True}) + "\n" for i in ids))
    after.write_text("".join(json.dumps({"id": i, "passed": False, "critical": True}) + "\n" for i in ids))
    out = tmp_path / "junit.xml"
    assert main(["compare", str(before), str(after), "--format", "junit", "-o", str(out)]) == 2
    return before, after, out


def test_compare_junit_with_control_characters_in_critical_task_ids_parses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    *_, out = _critical_regressions(tmp_path, ODD_IDS)
    capsys.readouterr()
    names = {case.get("name") for case in ET.parse(out).getroot().iter("testcase")}
    for shown in ("a\\x01b", "c\\x00d", "e\\x1bf", "g\\ufffeh", "i\\uffffj", "k]]>l", "<m>&amp;", "n\\u2028o"):
        assert f"critical task: {shown}" in names


#: Ids that read as another id where a reader shows them raw: a carriage return overwriting
#: ``FAIL`` with ``PASS``, a right-to-left override, zero-width and isolate characters.
TRICK_IDS = ["FAIL\rPASS", "\u202elive", "ok\u200bid", "\u2066x\u2069y", "bell\x07"]


def test_junit_shows_tricky_ids_as_the_terminal_report_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test reporter shows JUnit names raw: an id with a carriage return or a bidi override
    once reached it as it was (legal XML), while every other format showed it escaped."""
    before, after, out = _critical_regressions(tmp_path, TRICK_IDS)
    capsys.readouterr()
    assert main(["compare", str(before), str(after), "--format", "terminal"]) == 2
    terminal = capsys.readouterr().out
    root = ET.parse(out).getroot()
    values = [v for e in root.iter() for v in (*e.attrib.values(), e.text or "")]
    odd = {c for v in values for c in v if not (c in "\n\t" or c.isprintable())}
    assert odd == set(), odd
    names = [n.removeprefix("critical task: ") for case in root.iter("testcase")
             if (n := case.get("name", "")).startswith("critical task: ")]  # fmt: skip
    assert len(names) == len(TRICK_IDS)
    for name in names:
        assert name in terminal, name  # the id as the terminal report shows it
