"""A word-level diff of two outputs, as escaped markup.

The diff is the report's (:func:`ablation.analysis.details.word_diff`: words and the white space
between them, :class:`difflib.SequenceMatcher` on the first
:data:`~ablation.analysis.details.MAX_DIFF_WORDS` of each side, the rest as one removal and one
addition), written as ``<span>`` (same), ``<del>`` (baseline only) and ``<ins>`` (candidate only)
elements. Every piece goes through :func:`~ablation.view.markup.esc`.
"""

from __future__ import annotations

from ablation.analysis.details import MAX_DIFF_WORDS, output_words
from ablation.analysis.details import word_diff as diff_segments
from ablation.view.markup import esc

__all__ = ["word_diff"]

_TAG = {"equal": "span", "delete": "del", "insert": "ins"}


def word_diff(before: str, after: str) -> str:
    """Markup of ``before`` -> ``after``, word by word; identical texts give one ``<span>``."""
    body = "".join(f"<{_TAG[s.op]}>{esc(s.text)}</{_TAG[s.op]}>" for s in diff_segments(before, after))
    long = max(len(output_words(before)), len(output_words(after))) > MAX_DIFF_WORDS
    note = (
        f'<p class="note">Only the first {MAX_DIFF_WORDS} words of each output are compared; '
        "the rest is shown as removed and added.</p>"
        if long
        else ""
    )
    return f'<pre class="diff">{body}</pre>{note}'
