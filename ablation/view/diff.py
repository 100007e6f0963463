"""A word-level diff of two outputs, as escaped markup.

The diff is the report's (:func:`ablation.analysis.details.word_diff`: words and the white space
between them, :class:`difflib.SequenceMatcher` on the first
:data:`~ablation.analysis.details.MAX_DIFF_WORDS` of each side, the rest as one removal and one
addition) of the texts :func:`~ablation.analysis.details.diff_texts` writes in the layout of the
page's output panels (a string as it is, anything else as indented JSON; both as JSON when their
texts are equal but the values are not, as ``14`` and ``"14"``), written as ``<span>`` (same),
``<del>`` (baseline only) and ``<ins>`` (candidate only) elements, with the report's note naming
both types when they differ (:func:`~ablation.render._drilldown.type_note`). Each piece is cut
as the HTML report cuts it (:data:`~ablation.render.html.OUTPUT_LIMIT` characters, saying how
much was cut) and goes through :func:`~ablation.view.markup.esc`; the pieces together show at
most :data:`DIFF_LIMIT` characters (as much as the two output panels beside it; a piece cut
counts what it shows, so a huge removal leaves room for the addition after it), the pieces past
that counted in a note: a diff of two outputs of long words that differ every other word would
otherwise hold every compared word, megabytes for outputs the panels cut at 20,000 characters.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ablation.analysis.details import MAX_DIFF_WORDS, diff_head, diff_texts
from ablation.analysis.details import word_diff as diff_segments
from ablation.render._drilldown import type_note
from ablation.render._format import truncate
from ablation.render.html import OUTPUT_LIMIT
from ablation.view.markup import esc

__all__ = ["DIFF_LIMIT", "word_diff"]

#: Characters of the outputs a diff shows in all: each output panel's worth, twice.
DIFF_LIMIT = 2 * OUTPUT_LIMIT

_TAG = {"equal": "span", "delete": "del", "insert": "ins"}
_WORD = {"delete": "removed", "insert": "added", "equal": "the same"}


def word_diff(before: Any, after: Any) -> str:
    """Markup of the output ``before`` -> ``after``, word by word, at most :data:`DIFF_LIMIT`
    characters of it shown; equal outputs give one ``<span>`` and no note."""
    texts = diff_texts(before, after, pretty=True)
    pieces, left, rest = [], DIFF_LIMIT, Counter[str]()
    for s in diff_segments(*texts):
        if left <= 0:
            rest[s.op] += len(s.text)
            continue
        shown = min(len(s.text), OUTPUT_LIMIT, left)  # a piece's cut is marked in it
        pieces.append(f"<{_TAG[s.op]}>{esc(truncate(s.text, shown))}</{_TAG[s.op]}>")
        left -= shown
    notes = [note] if (note := type_note(before, after)) else []
    heads = [diff_head(text) for text in texts]
    if any(rest for _, rest in heads):
        words = [sum(not piece.isspace() for piece in head) for head, _ in heads]
        notes.append(f"Only the first {MAX_DIFF_WORDS} pieces of each output (words and the white "
                     f"space between them: {words[0]} words of the baseline's, {words[1]} "
                     "of the candidate's) are compared; the rest is shown as removed and added.")  # fmt: skip
    if rest:
        notes.append(
            f"The diff is cut after {DIFF_LIMIT} characters; the rest is not shown ("
            + ", ".join(f"{rest[op]} characters {word}" for op, word in _WORD.items() if rest[op]) + ")."
        )
    body = "".join(pieces)
    return f'<pre class="diff">{body}</pre>' + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
