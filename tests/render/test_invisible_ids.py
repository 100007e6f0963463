r"""Invisible characters in a task id are shown as escapes, so no id can pass for another.

Python calls some characters printable that show nothing: the Hangul fillers (U+3164, U+FFA0,
U+115F, U+1160), the combining grapheme joiner (U+034F), Khmer inherent vowels and Mongolian
variation selectors. A regressed id ``login\u3164`` read exactly as ``login`` in every report,
while zero-width characters (not printable to Python) were already escaped. Checked on the text
each format shows: the terminal's, the Markdown and HTML pages' text nodes (parsed), and the
JUnit names (parsed).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers.cli import run_here
from helpers.github_text import page_text

INVISIBLE = ["\u3164", "\uffa0", "\u115f", "\u1160", "\u034f", "\u17b4", "\u180b"]
IDS = ["login", *(f"login{c}" for c in INVISIBLE)]


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _shown(fmt: str, out: str) -> str:
    if fmt == "markdown":
        text = page_text(out)
        return "\n".join(text.scanned + text.unscanned)
    if fmt == "html":
        parser = _Text()
        parser.feed(out)
        return "\n".join(parser.text)
    if fmt == "junit":
        return "\n".join(case.get("name", "") for case in ET.fromstring(out).iter("testcase"))
    return out


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html", "junit"])
def test_invisible_characters_in_ids_are_escaped(tmp_path: Path, fmt: str) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, passed in ((a, True), (b, False)):
        path.write_text("".join(json.dumps({"id": t, "passed": passed, "critical": True}) + "\n" for t in IDS))
    out = tmp_path / f"r.{fmt}"
    proc = run_here(["compare", str(a), str(b), "--format", fmt, "--details", "--output", str(out)])
    assert proc.returncode in (0, 2), proc.stderr
    shown = _shown(fmt, out.read_text(encoding="utf-8"))
    assert {c for c in shown if c in INVISIBLE} == set()
    for c in INVISIBLE:
        assert f"login\\u{ord(c):04x}" in shown, (fmt, hex(ord(c)))
