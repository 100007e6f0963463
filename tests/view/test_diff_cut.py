"""The task page's diff cuts each piece as the HTML report does, and shows at most
``DIFF_LIMIT`` characters in all.

A candidate output of 700,000 short lines once made an 8 MB task page (15 s to load in Chromium)
while the HTML report of the same campaign cut each diff segment at its output limit. Here the
viewer's diff of a tenth of that (70,000 lines, ~700 KB: 35 output limits, and 35 times the words
a diff compares) stays within a few limits' worth of text and says what it cut.
"""

from __future__ import annotations

import html
import re
import tracemalloc
from collections import Counter

from ablation.analysis.details import MAX_DIFF_WORDS, diff_texts
from ablation.analysis.details import word_diff as diff_segments
from ablation.render.html import OUTPUT_LIMIT
from ablation.view.diff import DIFF_LIMIT, word_diff

PIECE = re.compile(r"<(span|del|ins)>(.*?)</\1>", re.S)
TAGS = {"span": "equal", "del": "delete", "ins": "insert"}


def test_a_huge_output_is_cut_and_says_so() -> None:
    before = "\n".join(f"line {i}" for i in range(1000))
    after = "\n".join(f"row {i}" for i in range(70_000))
    assert len(after) > 30 * OUTPUT_LIMIT
    markup = word_diff(before, after)
    assert len(markup) < 12 * OUTPUT_LIMIT, len(markup)
    assert "[truncated" in markup
    assert "row 69999" not in markup


def test_small_outputs_are_whole() -> None:
    markup = word_diff("alpha beta", "alpha gamma")
    assert "<del>beta</del>" in markup and "<ins>gamma</ins>" in markup
    assert "truncated" not in markup


def test_a_diff_of_long_words_changed_every_other_one_is_bounded() -> None:
    """Each piece within the output limit, but hundreds of them: the diff showed every compared
    word (1.2 MB here, the output panels beside it 20,000 characters each); it shows
    :data:`DIFF_LIMIT` characters, the report's pieces in order, and counts the rest."""
    before = "\n".join(f"{i:04d}" + "a" * 3000 for i in range(400))
    after = "\n".join(f"{i:04d}" + ("a" if i % 2 else "b") * 3000 for i in range(400))
    markup = word_diff(before, after)
    assert len(markup) < DIFF_LIMIT + OUTPUT_LIMIT, len(markup)
    reference = diff_segments(*diff_texts(before, after, pretty=True))
    shown = [(TAGS[tag], html.unescape(text)) for tag, text in PIECE.findall(markup)]
    assert shown[:-1] == [(s.op, s.text) for s in reference[: len(shown) - 1]]
    last = reference[len(shown) - 1]
    assert shown[-1][0] == last.op and last.text.startswith(shown[-1][1].split("\n…")[0])
    hidden = Counter[str]()
    for s in reference[len(shown) :]:
        hidden[s.op] += len(s.text)
    assert (
        f"The diff is cut after {DIFF_LIMIT} characters; the rest is not shown ("
        f"{hidden['delete']} characters removed, {hidden['insert']} characters added, "
        f"{hidden['equal']} characters the same)."
    ) in markup


def test_the_note_names_the_words_the_diff_compares() -> None:
    """The diff compares the first MAX_DIFF_WORDS pieces of each output, words and white space
    alike, so about half as many words: the note said 'the first 4000 words' of two 3000-word
    outputs, whose words past the 2000th were shown removed and added."""
    before = " ".join(f"w{i}" for i in range(3000))
    after = before.replace("w2999", "changed")
    markup = word_diff(before, after)
    op, same = PIECE.findall(markup)[0]
    assert TAGS[op] == "equal"
    compared = len(html.unescape(same).split())  # the words matched alike before the cut
    assert compared < 3000 - 1
    (note,) = re.findall(r'<p class="note">(.*?)</p>', markup)
    assert f"{compared} words of the baseline's, {compared} of the candidate's" in html.unescape(note)


def test_a_huge_removal_leaves_room_for_the_addition_after_it() -> None:
    """A piece cut to the output limit counts what it shows against DIFF_LIMIT, not its whole
    length: a baseline answer of 50 limits replaced by a short one showed the removal cut and
    then nothing, the candidate's answer among the pieces 'not shown'."""
    before = "x" * (50 * OUTPUT_LIMIT)
    after = "the candidate's short answer"
    markup = word_diff(before, after)
    shown = [(TAGS[tag], html.unescape(text)) for tag, text in PIECE.findall(markup)]
    reference = [(s.op, s.text) for s in diff_segments(*diff_texts(before, after, pretty=True))]
    assert [op for op, _ in shown] == [op for op, _ in reference] == ["delete", "insert"]
    assert shown[1] == reference[1]
    assert "truncated" in shown[0][1] and "not shown" not in markup
    assert len(markup) < DIFF_LIMIT + OUTPUT_LIMIT


def test_a_long_output_is_not_split_into_every_word() -> None:
    """Only the words the diff compares are split out of an output: two outputs of 2 MB of short
    words were split whole into a million strings each (3 s and 270 MB for the 8 MB an output
    may hold) for a diff that compares their first MAX_DIFF_WORDS pieces. Memory, traced while
    the diff is built, stays within a few copies of the texts; the diff is still the one of the
    whole texts (kept and removed pieces give the baseline, kept and added the candidate)."""
    before = "a " * 1_000_000
    after = "b " + before[2:]
    tracemalloc.start()
    try:
        markup = word_diff(before, after)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * len(before), peak  # the rest of each text, and one joined to a removal
    segments = diff_segments(*diff_texts(before, after, pretty=True))
    assert "".join(s.text for s in segments if s.op != "insert") == before
    assert "".join(s.text for s in segments if s.op != "delete") == after
    assert f"Only the first {MAX_DIFF_WORDS} pieces" in markup
