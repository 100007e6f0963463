"""The report's drill-downs: regressed and improved tasks with every run of both arms.

Each drill-down shows the task's input and expected output (from the suite when it is known,
else as the trials recorded them), every run of each arm with its verdict, error and tool
sequence (from the trial's OpenTelemetry spans when they record tool calls, else from its trace:
an instrumented model client's spans record no tool) and a summary of its spans, and, for the two
runs it puts side by side, a word-level diff of their outputs (as :func:`diff_texts` writes them).
The runs side by side are the ones that explain the pair's kind: for a regression the baseline's
first passing run and the candidate's first failing run (for an improvement the reverse); a run
that does not exist falls back to the arm's first run.

The trials are read one at a time where the lookup allows it (a stored campaign's), and each is
cut to what its drill-down shows (:class:`_Shown`) before the next is read: the trace and spans
records of a trial (an agent's trace may be tens of megabytes) are never held beside another's.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ablation.analysis.pairing import PairedData
from ablation.report import PairDetail, TrialView
from ablation.report_items import DiffSegment
from ablation.schema import TaskResult, to_jsonable

__all__ = ["MAX_DETAILS", "MAX_DIFF_WORDS", "details", "diff_head", "diff_texts", "word_diff"]

#: Regressions, and improvements, shown with their trials.
MAX_DETAILS = 500
#: Words (and the white space between them) of each output that the diff compares; the rest
#: of a longer output is one trailing segment of its arm.
MAX_DIFF_WORDS = 4000
_WORDS = re.compile(r"\s+|[^\s]+")

Key = tuple[str, str]


def _tools(result: TaskResult) -> list[str]:
    """The tool names a trial called, in order, from its trace (pydantic-ai message layout)."""
    return [
        str(part.get("tool"))
        for message in result.trace or ()
        if isinstance(message, dict)
        for part in message.get("parts", ())
        if isinstance(part, dict) and part.get("kind") == "tool-call"
    ]


def _view(result: TaskResult) -> TrialView:
    """The trial as the drill-down shows it; its tool sequence comes from its spans when they
    record tool calls, else from its trace (spans recording model calls but no tool, as an
    instrumented model client's under an uninstrumented agent, do not hide the trace's tools)."""
    spans = result.spans.summary() if result.spans is not None else None
    return TrialView(
        status=result.status,
        passed=result.passed if result.completed else None,
        output=result.output,
        error=result.error,
        note=result.verifier_note,
        latency_s=result.latency_s,
        quality=dict(result.quality),
        attempts=result.attempts,
        run=result.run,
        tools=spans.tools if spans is not None and spans.tools else _tools(result),
        usage=result.usage.model_dump(exclude_defaults=True) if result.usage is not None else None,
        spans=spans,
    )


def _typed(value: Any, pretty: bool) -> str:
    """``value`` as JSON with sorted keys (a string quoted): compact with ASCII escapes, or,
    ``pretty``, indented with non-ASCII text as it is."""
    data = to_jsonable(value)
    if pretty:
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True)
    return json.dumps(data, sort_keys=True)


def _text(value: Any, pretty: bool) -> str:
    """An output as text: a string as it is, ``None`` as ``""``, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else _typed(value, pretty)


def diff_texts(before: Any, after: Any, *, pretty: bool = False) -> tuple[str, str]:
    """The two texts a diff of two outputs compares: each output as text (a string as it is,
    ``None`` as ``""``, anything else as JSON), unless the texts are equal while the values are
    not, when both are written as JSON, so the diff never shows two outputs as one.

    So ``14`` and ``"14"`` are diffed as the texts ``14`` and ``"14"``, ``None`` and ``""`` as
    ``null`` and ``""``, a dict and its JSON text as the object and the quoted string. Two values are
    equal when their compact JSON with sorted keys is (so ``1`` and ``1.0``, or ``True`` and
    ``1``, differ; a tuple and the list of its items do not).

    Args:
        before: The baseline's output (any value :func:`~ablation.schema.to_jsonable` takes).
        after: The candidate's output.
        pretty: Indented JSON with non-ASCII text as it is (the layout of the viewer's output
            panels, keys sorted so that equal dicts diff as equal) instead of compact JSON (the
            report's); keys are sorted in both.
    """
    a, b = _text(before, pretty), _text(after, pretty)
    if a == b and _typed(before, False) != _typed(after, False):
        return _typed(before, pretty), _typed(after, pretty)
    return a, b


def diff_head(text: str) -> tuple[list[str], str]:
    """The first :data:`MAX_DIFF_WORDS` pieces of ``text`` (words and the white space between
    them) that :func:`word_diff` compares, and the rest of the text after them. Only those
    pieces are split out: an output of megabytes is not cut into millions of strings."""
    head, end = [], 0
    for found in itertools.islice(_WORDS.finditer(text), MAX_DIFF_WORDS):
        head.append(found.group())
        end = found.end()
    return head, text[end:]


def word_diff(before: Any, after: Any) -> list[DiffSegment]:
    """The word-level diff (:mod:`difflib`) of two outputs' :func:`diff_texts`, as kept, deleted
    and inserted runs; two equal outputs give one kept run (none when both are empty).

    At most :data:`MAX_DIFF_WORDS` tokens of each side are compared; what is left is appended as
    one delete and one insert. ``SequenceMatcher`` runs with its own heuristic for long sequences
    (``autojunk``: from 200 tokens on, a token making up more than 1% of the second text, such as
    the space between words, starts no match): without it, texts whose tokens repeat took cubic
    time (two different 1000-number lists 26 s, repeated prose of 3600 tokens 22 s; each
    milliseconds with it). Every run it marks equal is equal; a long text made of a few repeated
    words may show more of itself as changed.
    """
    a, b = diff_texts(before, after)
    if a == b:  # the same output (or none): nothing to match
        return [DiffSegment(op="equal", text=a)] if a else []
    (a_head, a_rest), (b_head, b_rest) = diff_head(a), diff_head(b)
    out: list[DiffSegment] = []

    def add(op: str, words: Sequence[str]) -> None:
        if not words:
            return
        text = "".join(words)
        if out and out[-1].op == op:
            out[-1] = DiffSegment(op=op, text=out[-1].text + text)  # type: ignore[arg-type]
        else:
            out.append(DiffSegment(op=op, text=text))  # type: ignore[arg-type]

    matcher = difflib.SequenceMatcher(None, a_head, b_head, autojunk=True)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("equal", a_head[i1:i2])
        else:
            add("delete", a_head[i1:i2])
            add("insert", b_head[j1:j2])
    add("delete", [a_rest] if a_rest else [])
    add("insert", [b_rest] if b_rest else [])
    return out


@dataclass(frozen=True, slots=True)
class _Shown:
    """What a drill-down shows of one trial: its view, its verdict (for :func:`_first`) and the
    input and expected output it recorded (for :func:`_recorded`); never its trace or spans."""

    view: TrialView
    passed: bool
    input: Any
    expected_output: Any


def _shown(result: TaskResult) -> _Shown:
    return _Shown(_view(result), bool(result.completed and result.passed), result.input, result.expected_output)


def _first(results: Sequence[_Shown], passed: bool) -> _Shown | None:
    """The first run whose verdict is ``passed`` (a failed run may be an error), else the first."""
    for r in results:
        if r.passed == passed:
            return r
    return results[0] if results else None


def _stream(data: PairedData, keys: list[Key]) -> Iterator[tuple[Key, TaskResult]]:
    """The trials of ``keys``, each key's by run: every run when the tasks ran more than once,
    else the first. One at a time where the lookup offers ``iter_runs`` (a stored campaign's
    ``StoredTrials``: each trial is decoded when asked for) or only ``get``; from one read of
    ``all_runs`` or ``many`` otherwise (in-memory lookups: their trials are objects already)."""
    trials: Mapping[Key, TaskResult] = data.trials
    if not trials:
        return
    every_run = data.runs > 1
    iter_runs = getattr(trials, "iter_runs", None)
    all_runs = getattr(trials, "all_runs", None)
    many = getattr(trials, "many", None)
    if callable(iter_runs):
        yield from iter_runs(keys, every_run=every_run)
    elif every_run and callable(all_runs):
        found: Mapping[Key, list[TaskResult]] = all_runs(keys)
        yield from ((key, r) for key, runs in found.items() for r in runs)
    elif callable(many):
        first: Mapping[Key, TaskResult] = many(keys)
        yield from first.items()
    else:
        for key in keys:
            value = trials.get(key)
            if value is not None:
                yield key, value
            del value  # not alive while the next is read


def _trials(data: PairedData, keys: list[Key]) -> dict[Key, list[_Shown]]:
    """What the drill-downs show of each trial of ``keys`` (:func:`_stream`), each trial cut to
    it before the next is read, so a long trace is held one trial at a time."""
    shown: dict[Key, list[_Shown]] = {}
    for key, result in _stream(data, keys):
        shown.setdefault(key, []).append(_shown(result))
        del result  # the next trial is decoded without this one alive
    return shown


def _recorded(base_runs: Sequence[_Shown], cand_runs: Sequence[_Shown], name: str) -> Any:
    """The first ``input`` or ``expected_output`` a trial recorded (a result file of another
    tool keeps them with each sample), baseline first; ``None`` when none did."""
    return next((value for r in (*base_runs, *cand_runs) if (value := getattr(r, name)) is not None), None)


def _detail(data: PairedData, kind: str, i: int, runs: Mapping[Key, list[_Shown]]) -> PairDetail:
    tid = data.task_ids[i]
    base_runs, cand_runs = runs.get((tid, "baseline"), []), runs.get((tid, "candidate"), [])
    regression = kind == "regression"
    base, cand = _first(base_runs, regression), _first(cand_runs, not regression)
    task = data.tasks.get(tid)
    same_run = base is not None and cand is not None and base.view.run == cand.view.run
    return PairDetail(
        task_id=tid,
        kind=kind,  # type: ignore[arg-type]
        category=data.categories[i],
        critical=bool(data.critical[i]),
        run=base.view.run if same_run and base is not None else None,
        expected_output=to_jsonable(task.expected_output) if task is not None else _recorded(
            base_runs, cand_runs, "expected_output"),
        input=to_jsonable(getattr(task, "input_data", None)) if task is not None else _recorded(
            base_runs, cand_runs, "input"),
        baseline=base.view if base is not None else None,
        candidate=cand.view if cand is not None else None,
        baseline_runs=[r.view for r in base_runs] if len(base_runs) > 1 else [],
        candidate_runs=[r.view for r in cand_runs] if len(cand_runs) > 1 else [],
        diff=word_diff(base.view.output, cand.view.output) if base is not None and cand is not None else [],
    )


def details(data: PairedData, masks: tuple[np.ndarray, ...]) -> list[PairDetail]:
    """The drill-downs of the first :data:`MAX_DETAILS` regressions and improvements."""
    shown = [
        (kind, int(i))
        for kind, mask in (("regression", masks[1]), ("improvement", masks[2]))
        for i in np.flatnonzero(mask)[:MAX_DETAILS]
    ]
    keys = [(data.task_ids[i], arm) for _, i in shown for arm in ("baseline", "candidate")]
    runs = _trials(data, keys)
    return [_detail(data, kind, i, runs) for kind, i in shown]
