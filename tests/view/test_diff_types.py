"""Two outputs whose texts are equal but whose values differ (``14`` and ``"14"``, ``None`` and
``""``) are never diffed as one: the texts compared are typed JSON, and the task page names both
types; equal outputs still give one kept span and no note.

The page is read over HTTP (Starlette's test client) from a real SQLite store."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from ablation.view.diff import word_diff

#: (baseline output, candidate output): different values whose plain texts read the same.
LOOKALIKES: list[tuple[Any, Any]] = [
    (14, "14"),
    (None, ""),
    (True, "true"),
    ({"a": 1}, '{"a": 1}'),
    ({"a": 1}, '{\n  "a": 1\n}'),
    ([1], "[1]"),
    ("[1]", [1]),
    ([1], "[\n  1\n]"),
    (2.5, "2.5"),
    ("", None),
]
NOTE = re.compile(r'<p class="note">(.*?)</p>', re.S)


def _name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _plain(value: Any, pretty: bool) -> str:
    """An output as plain text: a string as it is, ``None`` as ``""``, else JSON (the report's
    compact layout, or the viewer's indented one)."""
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, indent=2 if pretty else None, sort_keys=True)


def _shown(before: Any, after: Any, a: str, b: str, pretty: bool) -> bool:
    """``a`` and ``b`` differ, and are the outputs' plain texts, or, where those are equal, their
    typed JSON."""
    if _plain(before, pretty) != _plain(after, pretty):
        return a != b and (a, b) == (_plain(before, pretty), _plain(after, pretty))
    return a != b and _same(json.loads(a), before) and _same(json.loads(b), after)


def _same(x: Any, y: Any) -> bool:
    """One value: the same type all the way down and equal leaves (an oracle apart from JSON)."""
    if type(x) is not type(y):
        return False
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    return bool(x == y)


def _sides(markup: str) -> tuple[str, str]:
    """The baseline's and the candidate's text as the diff's markup shows them."""
    diff = re.search(r'<pre class="diff">(.*?)</pre>', markup, re.S)
    assert diff is not None, markup
    parts = re.findall(r"<(span|del|ins)>(.*?)</\1>", diff.group(1), flags=re.S)
    return (
        html.unescape("".join(t for k, t in parts if k != "ins")),
        html.unescape("".join(t for k, t in parts if k != "del")),
    )


def test_lookalike_outputs_are_diffed_as_typed_json() -> None:
    from ablation.analysis.details import diff_texts  # the one place the texts are chosen

    for before, after in LOOKALIKES:
        for pretty in (False, True):
            a, b = diff_texts(before, after, pretty=pretty)
            assert _shown(before, after, a, b, pretty), (before, after, pretty, a, b)


def test_the_viewer_diff_of_lookalikes_has_both_sides_and_names_both_types() -> None:
    for before, after in LOOKALIKES:
        markup = word_diff(before, after)
        assert "<del>" in markup and "<ins>" in markup, markup
        assert _shown(before, after, *_sides(markup), pretty=True), markup
        notes = [html.unescape(n) for n in NOTE.findall(markup)]
        assert len(notes) == 1, markup
        assert f"baseline {_name(before)}" in notes[0] and f"candidate {_name(after)}" in notes[0]


leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-20, 20),
    st.floats(allow_nan=False, allow_infinity=False, width=16).map(lambda f: f + 0.0),  # no -0.0
    st.text(st.sampled_from('1a "[]{}:,'), max_size=6),
)  # fmt: skip
value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from("ab"), inner, max_size=2), max_leaves=6)  # fmt: skip
# a value, or the JSON text of one (the string an agent returns for a structured answer)
output = st.one_of(value, value.map(json.dumps), value.map(lambda v: json.dumps(v, indent=2)))


@settings(max_examples=150, deadline=None)
@given(output, output)
def test_the_diff_claims_equality_only_of_one_value(before: Any, after: Any) -> None:
    markup = word_diff(before, after)
    tags = set(re.findall(r"<(span|del|ins)>", markup))
    notes = NOTE.findall(markup)
    if _same(before, after):
        assert tags <= {"span"} and markup.count("<span>") <= 1 and not notes, markup
    else:
        assert tags & {"del", "ins"}, markup
        a, b = _sides(markup)
        assert a != b
    if type(before) is not type(after) and (before == "" or after == "" or None not in (before, after)):
        assert len(notes) == 1 and f"baseline {_name(before)}, candidate {_name(after)}" in html.unescape(notes[0])


def _store(path: Path, pairs: list[tuple[Any, Any]]) -> str:
    """A campaign whose task ``t<i>`` passed with the baseline's output and failed with the
    candidate's (plus one task both arms answered alike)."""
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100), suite_fingerprint="f",
            task_digests={f"t{i}": "d" for i in range(len(pairs))}, baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=f"t{i}", arm=arm, passed=arm == "baseline", output=out)
            for i, pair in enumerate(pairs) for arm, out in zip(("baseline", "candidate"), pair, strict=True)
        ])  # fmt: skip
    return cid


def test_the_task_page_over_http_shows_lookalike_outputs_apart(tmp_path: Path) -> None:
    pairs = [*LOOKALIKES, ({"k": [1, "x"]}, {"k": [1, "x"]})]
    cid = _store(tmp_path / "runs.db", pairs)
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        for i, (before, after) in enumerate(pairs):
            response = client.get(f"/campaign/{cid}/task", params={"id": f"t{i}"})
            assert response.status_code == 200
            found = re.search(r'<div id="diff">(.*?)</div>', response.text, re.S)
            assert found is not None
            markup = found.group(1)
            notes = [html.unescape(n) for n in NOTE.findall(markup)]
            if before == after:
                assert re.fullmatch(r'<pre class="diff"><span>[^<]*</span></pre>', markup), markup
                assert not notes
                continue
            assert _shown(before, after, *_sides(markup), pretty=True), markup
            assert notes == [n for n in notes if f"baseline {_name(before)}, candidate {_name(after)}" in n]
            assert len(notes) == 1, markup
