"""A word-level diff of two outputs, as escaped markup (``difflib``).

Outputs are split into words and the whitespace between them, compared with
:class:`difflib.SequenceMatcher` (no junk heuristic, so repeated words are matched too), and
written as text in ``<span>`` (same), ``<del>`` (baseline only) and ``<ins>`` (candidate only)
elements. Every piece goes through :func:`~ablation.view.markup.esc`.

Assumptions: ``SequenceMatcher`` is quadratic in the worst case, so outputs longer than
:data:`MAX_WORDS` words are compared on their first :data:`MAX_WORDS` words, and the page says so.
"""

from __future__ import annotations

import difflib
import re

from ablation.view.markup import esc

__all__ = ["MAX_WORDS", "word_diff"]

MAX_WORDS = 4000
_WORDS = re.compile(r"\s+|[^\s]+")


def _words(text: str) -> tuple[list[str], bool]:
    words = _WORDS.findall(text)
    return words[:MAX_WORDS], len(words) > MAX_WORDS


def word_diff(before: str, after: str) -> str:
    """Markup of ``before`` -> ``after``, word by word; identical texts give one ``<span>``."""
    a, cut_a = _words(before)
    b, cut_b = _words(after)
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(f'<span>{esc("".join(a[i1:i2]))}</span>')
            continue
        if i2 > i1:
            out.append(f"<del>{esc(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{esc(''.join(b[j1:j2]))}</ins>")
    note = (
        f'<p class="note">Only the first {MAX_WORDS} words are compared.</p>'
        if cut_a or cut_b
        else ""
    )
    return f'<pre class="diff">{"".join(out)}</pre>{note}'
