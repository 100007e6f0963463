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
much was cut) and goes through :func:`~ablation.view.markup.esc`.
"""

from __future__ import annotations

from typing import Any

from ablation.analysis.details import MAX_DIFF_WORDS, diff_texts, output_words
from ablation.analysis.details import word_diff as diff_segments
from ablation.render._drilldown import type_note
from ablation.render._format import truncate
from ablation.render.html import OUTPUT_LIMIT
from ablation.view.markup import esc

__all__ = ["word_diff"]

_TAG = {"equal": "span", "delete": "del", "insert": "ins"}


def word_diff(before: Any, after: Any) -> str:
    """Markup of the output ``before`` -> ``after``, word by word; equal outputs give one
    ``<span>`` and no note."""
    texts = diff_texts(before, after, pretty=True)
    body = "".join(
        f"<{_TAG[s.op]}>{esc(truncate(s.text, OUTPUT_LIMIT))}</{_TAG[s.op]}>" for s in diff_segments(*texts)
    )
    notes = [note] if (note := type_note(before, after)) else []
    if max(len(output_words(text)) for text in texts) > MAX_DIFF_WORDS:
        notes.append(f"Only the first {MAX_DIFF_WORDS} words of each output are compared; "
                     "the rest is shown as removed and added.")  # fmt: skip
    return f'<pre class="diff">{body}</pre>' + "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
