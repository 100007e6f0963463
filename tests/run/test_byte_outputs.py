"""Two different byte strings never read as the same stored text.

Bytes were stored as their UTF-8 text with each invalid byte replaced by U+FFFD: an agent that
answered ``b"\\xff"`` and one that answered ``b"\\xfe"`` were stored, reported and diffed as the
same ``"\\ufffd"`` while the verifier, which saw the bytes, passed one and failed the other.
"""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import AblationTask, run_ablation_campaign
from ablation.schema import to_jsonable

#: Text that UTF-8 can encode (no lone surrogates), as valid UTF-8 bytes decode to.
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def _bytes_back(text: str) -> bytes:
    """The bytes whose stored text is ``text``: a bytes literal is read as one, else UTF-8."""
    if text[:2] in ("b'", 'b"'):
        value = ast.literal_eval(text)
        assert isinstance(value, bytes)
        return value
    return text.encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=40),
        _TEXT.map(str.encode),
        st.builds(lambda q, t: b"b" + q + t.encode() + q, st.sampled_from([b"'", b'"']), _TEXT),
    )
)
def test_every_byte_string_can_be_read_back_from_its_text(data: bytes) -> None:
    text = to_jsonable(data)
    assert isinstance(text, str)
    text.encode("utf-8")  # storable as it is
    assert _bytes_back(text) == data


@settings(max_examples=100, deadline=None)
@given(_TEXT.filter(lambda t: t[:2] not in ("b'", 'b"')))
def test_utf8_bytes_keep_their_text(text: str) -> None:
    data = text.encode("utf-8")
    assert to_jsonable(data) == text
    assert to_jsonable({"out": [data]}) == {"out": [text]}


def test_a_report_tells_two_byte_outputs_apart() -> None:
    task = AblationTask(task_id="raw", input_data=b"\xff",
                        verifier=lambda out, task: out == b"\xff")
    report = run_ablation_campaign(lambda x: x, lambda x: b"\xfe", [task])
    assert report.regressions == ["raw"]
    (detail,) = report.details
    assert detail.baseline is not None and detail.candidate is not None
    assert _bytes_back(detail.baseline.output) == b"\xff"
    assert _bytes_back(detail.candidate.output) == b"\xfe"
    assert _bytes_back(detail.input) == b"\xff"
    assert any(part.op != "equal" for part in detail.diff)
