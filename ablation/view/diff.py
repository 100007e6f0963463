"""A word-level diff of two outputs, as escaped markup.

The diff is the report's (:func:`ablation.analysis.details.word_diff`: words and the white space
between them, :class:`difflib.SequenceMatcher` on the first
:data:`~ablation.analysis.details.MAX_DIFF_WORDS` of each side, the rest as one removal and one
addition) of the texts :func:`~ablation.analysis.details.diff_texts` writes in the layout of the
page's output panels (a string as it is, anything else as indented JSON; both as JSON when their
texts are equal but the values are not, as ``14`` and ``"14"``), written as ``<span>`` (same),
``<del>`` (baseline only) and ``<ins>`` (candidate only) elements, with the report's note naming
both types when they differ (:func:`~ablation.render._drilldown.type_note`). Its pieces are the
ones the HTML report shows (:func:`~ablation.render._drilldown.shown_diff`: each cut at
:data:`~ablation.render.html.OUTPUT_LIMIT` characters, saying how much was cut, at most
:data:`DIFF_LIMIT` in all, the two output panels' worth, the rest counted in a note), each
through :func:`~ablation.view.markup.esc`.
"""

from __future__ import annotations

from typing import Any

from ablation.analysis.details import MAX_DIFF_WORDS, diff_head, diff_texts
from ablation.analysis.details import word_diff as diff_segments
from ablation.render._drilldown import DIFF_PANELS, shown_diff, type_note
from ablation.render.html import OUTPUT_LIMIT
from ablation.view.markup import esc

__all__ = ["DIFF_LIMIT", "word_diff"]

#: Characters of the outputs a diff shows in all: the two output panels' worth.
DIFF_LIMIT = DIFF_PANELS * OUTPUT_LIMIT

_TAG = {"equal": "span", "delete": "del", "insert": "ins"}


def word_diff(before: Any, after: Any) -> str:
    """Markup of the output ``before`` -> ``after``, word by word, at most :data:`DIFF_LIMIT`
    characters of it shown (:func:`~ablation.render._drilldown.shown_diff`, the reports' cut);
    equal outputs give one ``<span>`` and no note."""
    texts = diff_texts(before, after, pretty=True)
    pieces, cut = shown_diff(diff_segments(*texts), OUTPUT_LIMIT)
    body = "".join(f"<{_TAG[op]}>{esc(text)}</{_TAG[op]}>" for op, text in pieces)
    notes = [note] if (note := type_note(before, after)) else []
    heads = [diff_head(text) for text in texts]
    if any(rest for _, rest in heads):
        words = [sum(not piece.isspace() for piece in head) for head, _ in heads]
        notes.append(f"Only the first {MAX_DIFF_WORDS} pieces of each output (words and the white "
                     f"space between them: {words[0]} words of the baseline's, {words[1]} "
                     "of the candidate's) are compared; the rest is shown as removed and added.")  # fmt: skip
    notes += [cut] if cut else []
    return f'<pre class="diff">{body}</pre>' + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
