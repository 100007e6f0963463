"""The layout reader of plain verdict lines returns what ``json.loads`` of each line gives, or nothing.

:func:`verdict_lines` decodes JSON lines without a JSON decoder, by checking each line against
the first line's layout; the reference is ``json.loads`` per line. It may refuse a file (the
caller then decodes it), but what it returns must be exact.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.sources.readers.plain_lines import verdict_lines


def _decoded(text: str, key: str = "id", field: str = "passed") -> tuple[list[Any], list[Any]]:
    lines = text.split("\n")  # as the readers split: not at U+0085, U+2028... (str.splitlines)
    if lines[-1] == "":
        lines.pop()
    objs = [json.loads(line) for line in lines]
    assert all(set(o) == {key, field} for o in objs)
    return [o[key] for o in objs], [o[field] for o in objs]


def _lines(rows: list[tuple[str, bool]], **dumps: Any) -> str:
    return "".join(json.dumps({"id": i, "passed": v}, **dumps) + "\n" for i, v in rows)


@pytest.mark.parametrize(
    "text",
    [
        _lines([("task-1", True), ("task-22", False), ("t", True)]),  # ids of several lengths
        _lines([("a", False), ("b", True)], separators=(",", ":")),  # compact
        _lines([("été-1", True), ("日本", False), ("x y", True)], ensure_ascii=False),  # non-ASCII
        _lines([("a\x85b", True), ("c\u2028", False)], ensure_ascii=False),  # line breaks to str only
        _lines([("z", True), ("a", False)]).rstrip("\n"),  # no final newline
        '{ "id" : "a" , "passed" : true }\n{ "id" : "b" , "passed" : false }\n',
        '{"id": "only", "passed": false}',
        _lines([(f"task-{i:05d}", i % 3 == 0) for i in range(200)]),
        _lines([("a" * 300, True)] + [("b", False)] * 5),  # one id much longer than the rest
    ],
)
def test_accepted_layouts_decode_exactly(text: str) -> None:
    got = verdict_lines(text, "id", "passed")
    assert got is not None
    ids, passed = _decoded(text)
    assert got[0].dtype == object and got[0].tolist() == ids
    assert all(type(i) is str for i in got[0].tolist())
    assert got[1].dtype == np.bool_ and got[1].tolist() == passed


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "a", "passed": true}\n{"id": "b",  "passed": true}\n',  # other spacing later
        '{"id": "a", "passed": true}\n{"passed": true, "id": "b"}\n',  # other key order
        '{"id": "a", "passed": true}\n{"id": "a\\"b", "passed": true}\n',  # an escape
        '{"id": "a", "passed": true}\n{"id": "", "passed": true}\n',  # an empty id
        '{"id": "a", "passed": true}\n\n{"id": "b", "passed": true}\n',  # a blank line
        '{"id": "a", "passed": true}\r\n{"id": "b", "passed": true}\r\n',  # CRLF
        '{"id": "a", "passed": true}\n{"id": "b", "passed": "true"}\n',  # a string verdict
        '{"id": "a", "passed": true}\n{"id": "b", "passed": true, "x": 1}\n',  # a third member
        '{"id": "a", "passed": true}\n{"id": 7, "passed": true}\n',  # an integer id
        '{"id": "a", "passed": true}\n{"id": "b", "passed": true}{"id": "c", "passed": true}\n',
        '{"id": "a", "passed": true}\n{"id": "b", "passed": tru}\n',  # malformed
        '{"id": "a", "passed": true}\n{"id": "b\tc", "passed": true}\n',  # a raw tab in an id
        # a line too short for prefix and suffix, made up for by an id holding a quote
        '{"id": ", "passed": true}\n{"id": "a"b", "passed": true}\n',
        '{"id": 1, "passed": true}\n',
        '{"passed": true, "id": "a"}\n',
        "",
    ],
)
def test_other_files_are_refused(text: str) -> None:
    assert verdict_lines(text, "id", "passed") is None


def test_other_member_names_and_names_that_need_escapes() -> None:
    text = '{"task": "a", "ok": false}\n{"task": "b", "ok": true}\n'
    got = verdict_lines(text, "task", "ok")
    assert got is not None and got[0].tolist() == ["a", "b"] and got[1].tolist() == [False, True]
    assert verdict_lines(text, "id", "passed") is None
    assert verdict_lines(text, "task", "task") is None
    assert verdict_lines('{"a\\"b": "x", "ok": true}\n', 'a"b', "ok") is None


_ID_CHARS = st.characters(blacklist_categories=("Cs",), min_codepoint=1)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(st.text(_ID_CHARS, min_size=0, max_size=12), st.booleans()), min_size=1, max_size=30),
    compact=st.booleans(),
    ascii=st.booleans(),
    noise=st.sampled_from(["", " ", "  ", "\n", ', "x": 1', "\r"]),
    at=st.integers(0, 40),
)
def test_never_differs_from_json_loads(
    rows: list[tuple[str, bool]], compact: bool, ascii: bool, noise: str, at: int
) -> None:
    """Random ids (quotes, escapes, control and non-ASCII characters) and a random edit."""
    separators = (",", ":") if compact else (", ", ": ")
    text = _lines(rows, separators=separators, ensure_ascii=ascii)
    at = min(at, len(text))
    text = text[:at] + noise + text[at:]
    got = verdict_lines(text, "id", "passed")
    if got is None:
        return
    ids, passed = _decoded(text)  # accepted: every line must decode to exactly these
    assert got[0].tolist() == ids and got[1].tolist() == passed
