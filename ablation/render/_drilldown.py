"""Text pieces of a drill-down shared by the terminal, Markdown and HTML renderers.

Every piece is built from untrusted agent text: the callers escape it for their format (the
terminal with :func:`~ablation.render._format.printable`, Markdown and HTML with their
escapers); the diff's markers are added by the callers around text they escaped. The diff is the
report's (:func:`ablation.analysis.details.word_diff`); :func:`type_note` names both outputs'
types when they differ, as ``14`` and ``"14"`` (the viewer's task page shows the same note).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ablation.report import PairDetail, TrialView
from ablation.schema import to_jsonable

__all__ = ["diff_markup", "pair_type_note", "run_lines", "tool_lines", "type_note"]


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
    if s.input_tokens or s.output_tokens:
        parts.append(f"{s.input_tokens} in / {s.output_tokens} out tokens")
    if s.errors:
        parts.append(f"{len(s.errors)} errors ({'; '.join(s.errors[:3])})")
    if s.timeline:
        slowest = max(s.timeline, key=lambda d: d.duration_s)
        parts.append(f"slowest {slowest.name} {slowest.duration_s:.3g}s")
    kept = f"{s.spans} spans" + (f", {s.dropped} dropped" if s.dropped else "")
    return f"{arm} spans: {', '.join(parts)} [{kept}]"


def tool_lines(detail: PairDetail) -> list[str]:
    """Both arms' tool sequences of the side-by-side runs, the first divergence marked with
    ``>>`` (nothing when neither called a tool), then each arm's span summary when it has one."""
    spans = [
        line for arm, view in (("baseline", detail.baseline), ("candidate", detail.candidate))
        if (line := _spans_line(arm, view)) is not None
    ]  # fmt: skip
    base = detail.baseline.tools if detail.baseline else []
    cand = detail.candidate.tools if detail.candidate else []
    if not base and not cand:
        return spans
    at = next((i for i, (x, y) in enumerate(zip(base, cand, strict=False)) if x != y), min(len(base), len(cand)))

    same = base == cand

    def shown(tools: list[str]) -> str:
        marked = [(">> " if i == at else "") + t for i, t in enumerate(tools)]
        end = [] if same or at < len(tools) else [">> (end)" if tools else ">> (none)"]
        return " -> ".join(marked + end) or "(none)"

    note = "same tool calls" if same else f"first divergence at tool call {at + 1}"
    return [f"baseline tools: {shown(base)}", f"candidate tools: {shown(cand)}", note, *spans]


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


def diff_markup(
    detail: PairDetail, escape: Callable[[str], str], deleted: tuple[str, str], inserted: tuple[str, str]
) -> str:
    """The word-level diff of the side-by-side outputs: each segment escaped by ``escape``,
    deletions wrapped in ``deleted`` and insertions in ``inserted`` (opening, closing)."""
    parts = []
    for segment in detail.diff:
        text = escape(segment.text)
        if segment.op == "delete":
            text = deleted[0] + text + deleted[1]
        elif segment.op == "insert":
            text = inserted[0] + text + inserted[1]
        parts.append(text)
    return "".join(parts)
