"""A JSON object that names one member twice is refused in one line, on every path that reads it.

RFC 8259 section 4 leaves such an object's meaning to each reader: Python's ``json`` keeps the
last value, pyarrow refuses the row, other readers keep the first. Reading
``{"id": "a", "passed": true, "passed": false}`` as a failure without a word would let the file
decide the verdict by an accident of the reader, so every path (the row path of JSON lines and
of a JSON array, the plain-row fast path, the columnar engine, a peer's document, a JSONL suite)
names the file, the line and the member instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ablation.cli import main
from ablation.errors import InputError
from ablation.sources.readers import engine
from ablation.sources.result_files import load_result_columns, load_results
from ablation.sources.suites import load_suite
from ablation.strict_json import RepeatedMember, decode_json

REPEATED = '{"id": "a", "passed": true, "passed": false}'


def _refused(path: Path, line: int, member: str) -> None:
    for load in (load_results, load_result_columns):
        with pytest.raises(InputError) as caught:
            load(path)
        message = str(caught.value)
        assert message.startswith(f"{path}:{line}: malformed JSON (member '{member}' given twice")
        assert "\n" not in message


def test_python_json_keeps_the_last_value_without_a_word() -> None:
    """The reference behaviour this guards against: the standard decoder picks one silently."""
    assert json.loads(REPEATED) == {"id": "a", "passed": False}
    with pytest.raises(RepeatedMember) as caught:
        decode_json(REPEATED)
    assert caught.value.name == "passed"


def test_plain_rows_on_the_fast_path(tmp_path: Path) -> None:
    """Two keys once collapsed look like the fast path's plain ``{id, passed}`` row."""
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "b", "passed": true}\n' + REPEATED + "\n")
    _refused(path, 2, "passed")


def test_plain_rows_whose_ids_hold_colons(tmp_path: Path) -> None:
    """A colon in an id leaves the fast path's count of colons inconclusive: decoded again, strictly."""
    path = tmp_path / "r.jsonl"
    good = '{"id": "repo:1", "passed": true, "run": 0}\n{"id": "repo:2", "passed": false, "run": 0}\n'
    path.write_text(good)
    assert [r.passed for r in load_results(path, run_field="run")] == [True, False]
    path.write_text(good + '{"id": "c", "passed": true, "run": 0, "run": 1}\n')
    for load in (load_results, load_result_columns):
        with pytest.raises(InputError, match=r"r\.jsonl:3: malformed JSON \(member 'run' given twice"):
            load(path, run_field="run")


def test_rows_with_more_fields_and_a_nested_member(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        '{"id": "a", "passed": true, "latency_s": 1.5}',
        '{"id": "b", "passed": true, "meta": {"model": "x", "model": "y"}}',
    ]
    path.write_text("\n".join(rows) + "\n")
    _refused(path, 2, "model")


def test_an_array_names_the_items_line(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('[\n  {"id": "b", "passed": true},\n  ' + REPEATED + "\n]\n")
    _refused(path, 3, "passed")


def test_a_peer_document(tmp_path: Path) -> None:
    """A promptfoo export is one document: the error names the file."""
    doc = '{"results": {"results": [{"testIdx": 0, "success": true, "success": false}]}}'
    path = tmp_path / "promptfoo.json"
    path.write_text(doc)
    with pytest.raises(InputError, match=r"promptfoo\.json:(\d+:)? malformed JSON \(member 'success'"):
        load_results(path)


def test_the_columnar_engine_declines_and_the_row_path_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(engine, "MIN_BYTES", 0)
    rows = [json.dumps({"id": f"t{i}", "passed": i % 2 == 0, "latency_s": i / 10, "category": "c"})
            for i in range(50)]  # fmt: skip
    rows[37] = rows[37][:-1] + ', "latency_s": 9.5}'
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(rows) + "\n")
    from ablation.sources.readers.rows import ReadOptions

    assert engine.engine_columns(str(path), ReadOptions(), None, str(path)) is None
    _refused(path, 38, "latency_s")


def test_a_jsonl_suite(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"
    path.write_text('{"task_id": "a", "input_data": "x"}\n{"task_id": "b", "input_data": "x", "input_data": "y"}\n')
    with pytest.raises(InputError, match=r"suite\.jsonl:2: malformed JSON \(member 'input_data'"):
        load_suite(path)


def test_compare_exits_1_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    base.write_text(REPEATED + "\n" + '{"id": "b", "passed": true}\n')
    cand.write_text('{"id": "a", "passed": true}\n{"id": "b", "passed": true}\n')
    assert main(["compare", str(base), str(cand)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().count("\n") == 0
    assert f"{base}:1: malformed JSON (member 'passed' given twice" in captured.err


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_text_without_a_repeated_member_decodes_as_the_standard_decoder(value: Any) -> None:
    text = json.dumps(value)
    assert decode_json(text) == json.loads(text)


@given(st.dictionaries(st.text(max_size=4), json_values, min_size=1, max_size=4), st.data())
def test_any_repeated_member_is_refused_at_any_depth(obj: dict[str, Any], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(obj)))
    body = json.dumps(obj)[:-1] + f", {json.dumps(name)}: {json.dumps(obj[name])}}}"
    text = data.draw(st.sampled_from([body, f"[{body}]", f'{{"outer": {body}}}']))
    with pytest.raises(RepeatedMember) as caught:
        decode_json(text)
    assert caught.value.name == name
