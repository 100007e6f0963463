"""Step lists of two trials side by side, the first step where they differ marked.

A trial may carry a list-valued field beyond the ones the task page names (a trace of tool calls
or messages, say). When the first runs of both arms carry the same such field, its steps are
shown in two columns, row by row, each step as indented JSON text; the first row whose two steps
differ (or where one list has ended) is marked ``class="diverge"`` and given an anchor
(``id="first-divergence"`` for the first field that diverges, ``first-divergence-2`` and on for
the next ones).

A list may be cut short: a trial's OpenTelemetry spans beyond the per-trial caps are counted but
not kept (``TrialSpans.dropped``). The end of a cut list is not a divergence: the first
divergence is searched only within the steps both lists hold before a cut, and when there is
none the heading says the lists agree as far as both were kept, with the number of steps dropped;
each cut list's number of dropped steps is stated above the table, and its cells past its end say
the steps were not kept. Assumption: the kept steps of a cut list are compared as they stand; a
step dropped before kept ones (the byte cap passes a large span and keeps later small ones)
shifts the kept ones, so a divergence found in a cut list may be that gap.

Assumptions: steps are JSON-safe values (a stored trial's fields are JSON). A list of more than
:data:`MAX_STEPS` steps is shown as a window of that many rows that holds the first divergence,
with up to :data:`CONTEXT` equal steps before it (from step 0 when the divergence comes early
enough, or when there is none), and a note says which steps of how many are shown, with links to
the rows before and after (the task page from another row on); each step's text is cut at
:data:`STEP_LIMIT` characters, naming its full length. Only the rows shown are kept as text: the
search for the divergence turns one pair of steps into text at a time. A list need not be held
whole: a :class:`StepList` gives its length, one key per step (:func:`step_key`, a digest of the
step's text) and a read of the rows shown, so a task page compares two traces of 10^4 long steps
from their keys and reads only the rows it shows.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, overload

from ablation.render._drilldown import first_divergence as shared_divergence
from ablation.render._format import truncate
from ablation.view.markup import esc, link

__all__ = [
    "CONTEXT", "MAX_STEPS", "STEP_LIMIT", "StepList", "first_divergence", "side_by_side", "step_key", "step_text",
    "window",
]

#: Rows of a step list shown side by side on one task page (each two steps of up to
#: :data:`STEP_LIMIT` characters); the others are a link away.
MAX_STEPS = 100
#: Equal steps shown before a divergence that lies beyond :data:`MAX_STEPS` rows.
CONTEXT = 20
#: Characters of one step's text shown.
STEP_LIMIT = 2_000


def step_text(step: Any) -> str:
    """One step as the indented JSON text a page shows (keys sorted)."""
    return json.dumps(step, indent=2, ensure_ascii=False, sort_keys=True, default=repr)


def step_key(step: Any) -> bytes:
    """What two steps are compared by: a 128-bit BLAKE2b digest of the step's compact JSON text
    with :func:`step_text`'s other settings, which two steps share exactly when they share
    :func:`step_text` (the indentation is a function of the compact text); two different texts
    share a digest with odds of about 2^-128. Compact, the text is written by the C encoder."""
    text = json.dumps(step, ensure_ascii=False, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _Keys(Sequence[bytes]):
    """The keys of a list's steps, each computed when read (a divergence search stops early)."""

    def __init__(self, steps: Sequence[Any]) -> None:
        self._steps = steps

    def __len__(self) -> int:
        return len(self._steps)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice):
            return [step_key(s) for s in self._steps[i]]
        return step_key(self._steps[i])


@dataclasses.dataclass(frozen=True)
class StepList:
    """A step list as :func:`side_by_side` compares and shows it, which need not hold its steps.

    Attributes:
        total: Its number of steps.
        keys: One :func:`step_key` per step, ``total`` of them.
        rows: ``rows(a, b)``: steps ``a`` to ``b - 1``, for ``0 <= a <= b <= total``.
    """

    total: int
    keys: Sequence[bytes]
    rows: Callable[[int, int], Sequence[Any]]

    @classmethod
    def of(cls, steps: Sequence[Any]) -> StepList:
        """A list held in memory (its keys computed as the search reads them)."""
        return cls(len(steps), _Keys(steps), lambda a, b: steps[a:b])


def first_divergence(
    left: Sequence[Any], right: Sequence[Any], left_dropped: int = 0, right_dropped: int = 0
) -> int | None:
    """The first index whose steps differ (a missing step differs), or ``None`` if equal: the
    drill-down's rule (:func:`ablation.render._drilldown.first_divergence`) on the steps' texts.

    ``left_dropped``, ``right_dropped``: steps each list was cut of (kept no more); a list cut
    of any ends the search at its end, where a missing step is not known to differ.
    """
    return shared_divergence(left, right, left_dropped, right_dropped, key=step_text)


def window(total: int, split: int | None, start: int | None = None) -> range:
    """The rows shown of ``total``: from row ``start`` when given, :data:`MAX_STEPS` of them at
    most; else all of them up to :data:`MAX_STEPS`; else the first
    :data:`MAX_STEPS` when they hold ``split`` and :data:`CONTEXT` rows after it, or else
    :data:`MAX_STEPS` rows starting :data:`CONTEXT` rows before ``split`` (earlier when the
    list ends sooner)."""
    if start is not None:
        first = max(0, min(start, total - 1))
        return range(first, min(total, first + MAX_STEPS))
    if total <= MAX_STEPS or split is None or split + CONTEXT < MAX_STEPS:
        return range(min(total, MAX_STEPS))
    start = max(0, min(split - CONTEXT, total - MAX_STEPS))
    return range(start, start + MAX_STEPS)


def _step_list(value: Any) -> StepList | None:
    """``value`` as a :class:`StepList` when it is a list (or one), else ``None``."""
    if isinstance(value, StepList):
        return value
    return StepList.of(value) if isinstance(value, list) else None


def _cells(side: StepList, shown: range, dropped: int) -> list[str]:
    """The cells of rows ``shown`` of one list: its steps there (read once, each cut), then
    empty cells past its end (``(not kept)`` when the list was cut of ``dropped`` steps)."""
    held = side.rows(shown.start, min(shown.stop, side.total)) if shown.start < side.total else []
    past = '<td class="not-kept">(not kept)</td>' if dropped else "<td></td>"
    cells = [f"<td><pre>{esc(truncate(step_text(s), STEP_LIMIT))}</pre></td>" for s in held]
    return cells + [past] * (len(shown) - len(cells))


def _dropped_words(left_dropped: int, right_dropped: int) -> str:
    """``"baseline 953 dropped, candidate 2 dropped"`` for the cut lists (``""``: none)."""
    return ", ".join(
        f"{arm} {n} dropped" for arm, n in (("baseline", left_dropped), ("candidate", right_dropped)) if n
    )


def _cut_note(
    shown: range, left: StepList, right: StepList, href: str | None,
    rows_url: Callable[[int], str] | None = None,
) -> str:
    """Which steps are shown of how many, a link to the divergence's row (``href``), and links
    to the rows before and after (``rows_url``: the page from a row on)."""
    to = f" {link(href, 'Go to the first divergence')}." if href else ""
    total = max(left.total, right.total)
    nav = ""
    if rows_url is not None:
        links = []
        if shown.start > 0:
            links.append(link(rows_url(max(0, shown.start - MAX_STEPS)), "← earlier steps", cls="prev-steps"))
        if shown.stop < total:
            links.append(link(rows_url(shown.stop), "later steps →", cls="next-steps"))
        nav = " " + " ".join(links)
    return (
        f'<p class="note trace-cut">Steps {shown.start} to {shown.stop - 1} shown, of '
        f"{total} (baseline {left.total}, candidate {right.total}).{to}{nav}</p>"
    )


def _drop_note(left: StepList, right: StepList, left_dropped: int, right_dropped: int) -> str:
    """Each cut list's kept and dropped steps, and that its end is not a divergence."""
    sides = [
        f"{arm}: {kept.total} kept, {n} dropped (over the per-trial cap)"
        for arm, kept, n in (("baseline", left, left_dropped), ("candidate", right, right_dropped)) if n
    ]  # fmt: skip
    return (
        f'<p class="note trace-dropped">Cut short: {esc("; ".join(sides))}. Steps are compared '
        "only as far as both lists were kept; the end of a cut list is not a divergence.</p>"
    )


def side_by_side(
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    dropped: Mapping[str, tuple[int, int]] | None = None,
    start: int | None = None,
    rows_url: Callable[[int], str] | None = None,
) -> str:
    """Markup of every list field both trials carry (their extra fields: a list, or a
    :class:`StepList` of one not held whole), step by step.

    ``dropped``: field name -> steps the baseline's and the candidate's list were cut of (a
    field not named was not cut). ``start``: the first row shown of every field (else the
    window that holds the divergence, :func:`window`); ``rows_url``: the page that shows the
    rows from a given one on, linked from a cut list's note.
    """
    out = []
    anchors = 0
    for name in sorted(set(baseline) & set(candidate)):
        left, right = _step_list(baseline[name]), _step_list(candidate[name])
        if left is None or right is None:
            continue
        left_dropped, right_dropped = (dropped or {}).get(name, (0, 0))
        split = shared_divergence(left.keys, right.keys, left_dropped, right_dropped)
        total = max(left.total, right.total)
        shown = window(total, split, start)
        anchor = "first-divergence" if anchors == 0 else f"first-divergence-{anchors + 1}"
        anchors += split is not None
        cells = [_cells(side, shown, n) for side, n in ((left, left_dropped), (right, right_dropped))]
        rows = []
        for k, i in enumerate(shown):
            mark = f' class="diverge" id="{anchor}"' if i == split else ""
            rows.append(f"<tr{mark}><td>{i}</td>{cells[0][k]}{cells[1][k]}</tr>")
        lost = _dropped_words(left_dropped, right_dropped)
        if split is not None:
            where = f"first divergence at step {split}" + (f"; {lost}" if lost else "")
        else:
            where = f"agree as far as both were kept; {lost}" if lost else "identical"
        to: str | None = None  # the divergence's row, on this page or on the one that shows it
        if split is not None and split in shown:
            to = f"#{anchor}"
        elif split is not None and rows_url is not None:
            to = f"{rows_url(max(0, split - CONTEXT))}#{anchor}"
        cut = "" if len(shown) == total else _cut_note(shown, left, right, to, rows_url)
        if lost:
            cut = _drop_note(left, right, left_dropped, right_dropped) + cut
        out.append(
            f'<h2>{esc(name)} side by side ({esc(where)})</h2>{cut}<table class="trace">'
            "<thead><tr><th>step</th><th>baseline</th><th>candidate</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(out)
