"""Step lists of two trials side by side, the first step where they differ marked.

A trial may carry a list-valued field beyond the ones the task page names (a trace of tool calls
or messages, say). When the first runs of both arms carry the same such field, its steps are
shown in two columns, row by row, each step as indented JSON text; the first row whose two steps
differ (or where one list has ended) is marked ``id="first-divergence"``.

Assumptions: steps are JSON-safe values (a stored trial's fields are JSON); a list of more than
:data:`MAX_STEPS` steps is shown up to that step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ablation.view.markup import esc

__all__ = ["MAX_STEPS", "first_divergence", "side_by_side"]

MAX_STEPS = 500


def _text(step: Any) -> str:
    return json.dumps(step, indent=2, ensure_ascii=False, sort_keys=True, default=repr)


def first_divergence(left: Sequence[Any], right: Sequence[Any]) -> int | None:
    """The first index whose steps differ (a missing step differs), or ``None`` if equal."""
    for i in range(max(len(left), len(right))):
        if i >= len(left) or i >= len(right) or _text(left[i]) != _text(right[i]):
            return i
    return None


def side_by_side(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> str:
    """Markup of every list field both trials carry (their extra fields), step by step."""
    out = []
    for name in sorted(set(baseline) & set(candidate)):
        left, right = baseline[name], candidate[name]
        if not isinstance(left, list) or not isinstance(right, list):
            continue
        split = first_divergence(left, right)
        rows = []
        for i in range(min(MAX_STEPS, max(len(left), len(right)))):
            mark = ' class="diverge" id="first-divergence"' if i == split else ""
            cells = "".join(
                f"<td><pre>{esc(_text(side[i]))}</pre></td>" if i < len(side) else "<td></td>"
                for side in (left, right)
            )
            rows.append(f"<tr{mark}><td>{i}</td>{cells}</tr>")
        where = "identical" if split is None else f"first divergence at step {split}"
        out.append(
            f'<h2>{esc(name)} side by side ({esc(where)})</h2><table class="trace">'
            "<thead><tr><th>step</th><th>baseline</th><th>candidate</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(out)
