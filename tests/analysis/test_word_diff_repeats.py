"""The word diff of two outputs is an exact edit script, however much their words repeat.

``word_diff`` feeds ``difflib.SequenceMatcher``; with its long-sequence heuristic off, outputs
whose tokens repeat (the space between words, a list of numbers, repeated prose) made it cubic:
two different 1000-number lists took 26 s, and the report computes one diff per drill-down. The
invariant here: the kept and deleted runs give the first text back, the kept and inserted runs the
second; the examples include those repeated shapes (their speed is in benchmarks/README.md).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ablation.analysis.details import MAX_DIFF_WORDS, diff_texts, word_diff

REPEATED = [
    ("x " * 2000, "y " * 2000),
    ("a " * 2000, "a " * 1999 + "b"),
    (" ".join(map(str, range(1000))), " ".join(map(str, range(500, 1500)))),
    ("the quick brown fox jumps over the lazy dog " * 200, "the quick red fox jumped over the lazy cat " * 200),
]


def _sides(before: str, after: str) -> tuple[str, str]:
    segments = word_diff(before, after)
    old = "".join(s.text for s in segments if s.op in ("equal", "delete"))
    new = "".join(s.text for s in segments if s.op in ("equal", "insert"))
    return old, new


def test_repeated_words_give_an_exact_edit_script() -> None:
    for before, after in REPEATED:
        assert _sides(before, after) == diff_texts(before, after)


def test_short_texts_keep_their_shared_words() -> None:
    segments = word_diff("the quick brown fox", "the quick red fox")
    assert [(s.op, s.text) for s in segments] == [
        ("equal", "the quick "), ("delete", "brown"), ("insert", "red"), ("equal", " fox")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", " ", "  ", "\n", "dd"]), max_size=600),
       st.lists(st.sampled_from(["a", "b", "c", " ", "  ", "\n", "dd"]), max_size=600))
def test_any_texts_give_an_exact_edit_script(a: list[str], b: list[str]) -> None:
    before, after = "".join(a), "".join(b)
    assert _sides(before, after) == diff_texts(before, after)
    assert MAX_DIFF_WORDS >= 600
