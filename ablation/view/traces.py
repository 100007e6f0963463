"""Step lists of two trials side by side, the first step where they differ marked.

A trial may carry a list-valued field beyond the ones the task page names (a trace of tool calls
or messages, say). When the first runs of both arms carry the same such field, its steps are
shown in two columns, row by row, each step as indented JSON text; the first row whose two steps
differ (or where one list has ended) is marked ``class="diverge"`` and given an anchor
(``id="first-divergence"`` for the first field that diverges, ``first-divergence-2`` and on for
the next ones).

Assumptions: steps are JSON-safe values (a stored trial's fields are JSON). A list of more than
:data:`MAX_STEPS` steps is shown as a window of that many rows that holds the first divergence,
with up to :data:`CONTEXT` equal steps before it (from step 0 when the divergence comes early
enough, or when there is none), and a note says which steps of how many are shown; each step's
text is cut at :data:`STEP_LIMIT` characters, saying so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ablation.render._format import truncate
from ablation.view.markup import esc

__all__ = ["CONTEXT", "MAX_STEPS", "STEP_LIMIT", "first_divergence", "side_by_side", "window"]

MAX_STEPS = 500
#: Equal steps shown before a divergence that lies beyond :data:`MAX_STEPS` rows.
CONTEXT = 20
#: Characters of one step's text shown.
STEP_LIMIT = 2_000


def _text(step: Any) -> str:
    return json.dumps(step, indent=2, ensure_ascii=False, sort_keys=True, default=repr)


def first_divergence(left: Sequence[Any], right: Sequence[Any]) -> int | None:
    """The first index whose steps differ (a missing step differs), or ``None`` if equal."""
    for i in range(max(len(left), len(right))):
        if i >= len(left) or i >= len(right) or _text(left[i]) != _text(right[i]):
            return i
    return None


def window(total: int, split: int | None) -> range:
    """The rows shown of ``total``: all of them up to :data:`MAX_STEPS`; else the first
    :data:`MAX_STEPS` when they hold ``split`` and :data:`CONTEXT` rows after it, or else
    :data:`MAX_STEPS` rows starting :data:`CONTEXT` rows before ``split`` (earlier when the
    list ends sooner)."""
    if total <= MAX_STEPS or split is None or split + CONTEXT < MAX_STEPS:
        return range(min(total, MAX_STEPS))
    start = max(0, min(split - CONTEXT, total - MAX_STEPS))
    return range(start, start + MAX_STEPS)


def _cell(side: Sequence[Any], i: int) -> str:
    return f"<td><pre>{esc(truncate(_text(side[i]), STEP_LIMIT))}</pre></td>" if i < len(side) else "<td></td>"


def _cut_note(shown: range, left: Sequence[Any], right: Sequence[Any], anchor: str | None) -> str:
    """Which steps are shown of how many, and a link to the divergence's row ``anchor``."""
    to = f' <a href="#{anchor}">Go to the first divergence</a>.' if anchor else ""
    return (
        f'<p class="note trace-cut">Steps {shown.start} to {shown.stop - 1} shown, of '
        f"{max(len(left), len(right))} (baseline {len(left)}, candidate {len(right)}).{to}</p>"
    )


def side_by_side(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> str:
    """Markup of every list field both trials carry (their extra fields), step by step."""
    out = []
    anchors = 0
    for name in sorted(set(baseline) & set(candidate)):
        left, right = baseline[name], candidate[name]
        if not isinstance(left, list) or not isinstance(right, list):
            continue
        split = first_divergence(left, right)
        total = max(len(left), len(right))
        shown = window(total, split)
        anchor = "first-divergence" if anchors == 0 else f"first-divergence-{anchors + 1}"
        anchors += split is not None
        rows = []
        for i in shown:
            mark = f' class="diverge" id="{anchor}"' if i == split else ""
            rows.append(f"<tr{mark}><td>{i}</td>{_cell(left, i)}{_cell(right, i)}</tr>")
        where = "identical" if split is None else f"first divergence at step {split}"
        cut = "" if len(shown) == total else _cut_note(shown, left, right, None if split is None else anchor)
        out.append(
            f'<h2>{esc(name)} side by side ({esc(where)})</h2>{cut}<table class="trace">'
            "<thead><tr><th>step</th><th>baseline</th><th>candidate</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(out)
