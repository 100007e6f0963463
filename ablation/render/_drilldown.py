"""Text pieces of a drill-down shared by the terminal, Markdown and HTML renderers.

Every piece is built from untrusted agent text: the callers escape it for their format (the
terminal with :func:`~ablation.render._format.printable`, Markdown and HTML with their
escapers); the diff's markers are added by the callers around text they escaped. The diff is the
report's (:func:`ablation.analysis.details.word_diff`); :func:`type_note` names both outputs'
types when they differ, as ``14`` and ``"14"`` (the viewer's task page shows the same note).

A tool sequence read from a trial's spans is cut short when spans went over the per-trial caps
(``SpanSummary.dropped``): the tools of the dropped spans are missing. The end of a cut sequence
is not a divergence: :func:`first_divergence`, the rule the viewer's step lists use too, searches
only where both sequences are known. Assumption: the kept tool calls of a cut sequence are
compared as they stand (a dropped span before kept ones shifts them).

A task id may hold a million characters: every renderer names a task by :func:`task_label`
(:func:`~ablation.schema.shown_name`: a long id cut, marked and digested; the JSON report keeps
ids whole), a drill-down by :func:`pair_subject`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from ablation.render._format import truncate
from ablation.report import PairDetail, TrialView
from ablation.report_items import DiffSegment
from ablation.schema import shown_name, to_jsonable

__all__ = [
    "DIFF_PANELS", "diff_markup", "first_divergence", "pair_subject", "pair_type_note", "run_lines", "shown_diff",
    "task_label", "tool_lines", "type_note",
]

T = TypeVar("T")


def task_label(task_id: str) -> str:
    """A task id as a rendered report names it (:func:`~ablation.schema.shown_name`)."""
    return shown_name(task_id, "task id")


def pair_subject(detail: PairDetail) -> str:
    """What a drill-down's title names after its kind: the task, its category and its run."""
    where = f" [{detail.category}]" if detail.category else ""
    return task_label(detail.task_id) + where + (f" (run {detail.run})" if detail.run is not None else "")


def _verdict(view: TrialView) -> str:
    return {True: "PASS", False: "FAIL", None: view.status.upper()}[view.passed]


def run_lines(detail: PairDetail) -> list[str]:
    """One line per arm listing every run with its verdict and, for a failed run, its error
    (empty when each arm has a single run: the side-by-side trials are those runs)."""
    lines = []
    for arm, views in (("baseline", detail.baseline_runs), ("candidate", detail.candidate_runs)):
        if views:
            runs = ", ".join(
                f"run {v.run}: {_verdict(v)}" + (f" ({v.error})" if v.error else "") for v in views
            )
            lines.append(f"{arm} runs: {runs}")
    return lines


def _spans_line(arm: str, view: TrialView | None) -> str | None:
    """``"<arm> spans: N model calls (models), T tool calls, in/out tokens, errors, slowest"``."""
    s = view.spans if view is not None else None
    if s is None:
        return None
    models = f" ({', '.join(s.models)})" if s.models else ""
    parts = [f"{s.model_calls} model calls{models}", f"{len(s.tools)} tool calls"]
    if s.model_calls and (s.input_tokens is None or s.output_tokens is None):
        parts.append("tokens unknown")
    elif s.input_tokens or s.output_tokens:
        parts.append(f"{s.input_tokens} in / {s.output_tokens} out tokens")
    if s.errors:
        parts.append(f"{len(s.errors)} errors ({'; '.join(s.errors[:3])})")
    if s.timeline:
        slowest = max(s.timeline, key=lambda d: d.duration_s)
        parts.append(f"slowest {slowest.name} {slowest.duration_s:.3g}s")
    kept = f"{s.spans} spans" + (f", {s.dropped} dropped" if s.dropped else "")
    return f"{arm} spans: {', '.join(parts)} [{kept}]"


def first_divergence(
    left: Sequence[T],
    right: Sequence[T],
    left_dropped: int = 0,
    right_dropped: int = 0,
    key: Callable[[T], object] | None = None,
) -> int | None:
    """The first index whose items differ (a missing item differs), or ``None`` if none does.

    Args:
        left: One sequence.
        right: The other.
        left_dropped: Items ``left`` was cut of (not kept); a sequence cut of any ends the
            search at its end, where a missing item is not known to differ.
        right_dropped: The same for ``right``.
        key: What is compared of each item (the items themselves when ``None``).
    """
    stop = max(len(left), len(right))
    if left_dropped:
        stop = min(stop, len(left))
    if right_dropped:
        stop = min(stop, len(right))
    same = key or (lambda item: item)
    for i in range(stop):
        if i >= len(left) or i >= len(right) or same(left[i]) != same(right[i]):
            return i
    return None


def _dropped(view: TrialView | None) -> int:
    """Spans the trial dropped over the per-trial caps when its tool sequence is its spans'
    (then cut short); 0 when it is whole (no span dropped, or the sequence is the trace's)."""
    s = view.spans if view is not None else None
    if view is None or s is None or not s.dropped or not s.tools or view.tools != s.tools:
        return 0
    return s.dropped


def tool_lines(detail: PairDetail) -> list[str]:
    """Both arms' tool sequences of the side-by-side runs, the first divergence marked with
    ``>>`` (nothing when neither called a tool), then each arm's span summary when it has one.
    A sequence cut short (:func:`_dropped`) ends with the number of spans not kept, and only
    the calls both sequences hold are compared (:func:`first_divergence`)."""
    spans = [
        line for arm, view in (("baseline", detail.baseline), ("candidate", detail.candidate))
        if (line := _spans_line(arm, view)) is not None
    ]  # fmt: skip
    base = detail.baseline.tools if detail.baseline else []
    cand = detail.candidate.tools if detail.candidate else []
    if not base and not cand:
        return spans
    cuts = _dropped(detail.baseline), _dropped(detail.candidate)
    at = first_divergence(base, cand, *cuts)

    def shown(tools: list[str], cut: int) -> str:
        marked = [(">> " if i == at else "") + t for i, t in enumerate(tools)]
        if cut:
            end = [f"... ({cut} spans not kept)"]
        else:
            end = [] if at is None or at < len(tools) else [">> (end)" if tools else ">> (none)"]
        return " -> ".join(marked + end) or "(none)"

    if at is not None:
        note = f"first divergence at tool call {at + 1}"
    else:
        note = "same tool calls as far as both were kept" if any(cuts) else "same tool calls"
    return [f"baseline tools: {shown(base, cuts[0])}", f"candidate tools: {shown(cand, cuts[1])}", note, *spans]


def _kind(value: Any) -> str:
    """The Python type name of ``value`` as JSON data (``None`` for none: a tuple is a list)."""
    return "None" if value is None else type(to_jsonable(value)).__name__


def type_note(before: Any, after: Any) -> str | None:
    """``"The outputs differ in type: baseline int, candidate str."`` when the two outputs are
    values of different types (``14`` and ``"14"``, ``None`` and ``""``, ``1`` and ``1.0``, a dict
    and its JSON text), which their texts side by side may hide; ``None`` when they are of one
    type, or when one is ``None`` and the other is not the empty string (a trial without output,
    as a failed one, is shown as such)."""
    kinds = _kind(before), _kind(after)
    if kinds[0] == kinds[1]:
        return None
    if before is None or after is None:
        other = after if before is None else before
        if not isinstance(other, str) or other:
            return None
    return f"The outputs differ in type: baseline {kinds[0]}, candidate {kinds[1]}."


def pair_type_note(detail: PairDetail) -> str | None:
    """:func:`type_note` of the side-by-side runs' outputs (``None`` when an arm has no run)."""
    if detail.baseline is None or detail.candidate is None:
        return None
    return type_note(detail.baseline.output, detail.candidate.output)


#: A diff shows at most this many output panels' worth of characters in all (each renderer's
#: output limit; the two outputs are shown beside it cut at one limit each).
DIFF_PANELS = 2
_GONE = {"delete": "removed", "insert": "added", "equal": "the same"}


def shown_diff(segments: Iterable[DiffSegment], limit: int) -> tuple[list[tuple[str, str]], str]:
    """What a report shows of a word diff: ``(op, text)`` of its pieces in order, each cut at
    ``limit`` characters as :func:`~ablation.render._format.truncate` cuts (saying how much),
    at most :data:`DIFF_PANELS` x ``limit`` characters in all (a piece cut counts what it shows,
    so a huge removal leaves room for the addition after it); and the note naming what is not
    shown past that (``""`` when every piece is). The pieces are each one op's run of words, as
    many as the words compared: without the bound, outputs of long lines that differ every other
    line made a drill-down of megabytes beside output panels of ``limit`` characters."""
    total = DIFF_PANELS * limit
    pieces: list[tuple[str, str]] = []
    left, rest = total, Counter[str]()
    for s in segments:
        if left <= 0:
            rest[s.op] += len(s.text)
            continue
        shown = min(len(s.text), limit, left)
        pieces.append((s.op, truncate(s.text, shown)))
        left -= shown
    if not rest:
        return pieces, ""
    gone = ", ".join(f"{rest[op]} characters {word}" for op, word in _GONE.items() if rest[op])
    return pieces, f"The diff is cut after {total} characters; the rest is not shown ({gone})."


def diff_markup(
    detail: PairDetail, escape: Callable[[str], str], deleted: tuple[str, str], inserted: tuple[str, str],
    limit: int,
) -> str:
    """The word-level diff of the side-by-side outputs as :func:`shown_diff` cuts it at ``limit``:
    each piece escaped by ``escape``, deletions wrapped in ``deleted`` and insertions in
    ``inserted`` (opening, closing), the note on what is not shown last, on a line of its own."""
    pieces, note = shown_diff(detail.diff, limit)
    parts = []
    for op, piece in pieces:
        text = escape(piece)
        if op == "delete":
            text = deleted[0] + text + deleted[1]
        elif op == "insert":
            text = inserted[0] + text + inserted[1]
        parts.append(text)
    return "".join(parts) + (escape(f"\n… {note}") if note else "")
