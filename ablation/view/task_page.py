"""The page of one task of one campaign: every trial of both arms side by side, and a word diff.

A trial shows its status, verdict, latency, attempts, cost, tokens, quality and metrics, its
error and traceback, the verifier's note and its output (text as it is, anything else as
indented JSON); any other field a trial carries (usage, traces) is shown as JSON under its own
name, and list-valued ones that both arms' first runs carry (traces) side by side, the first
divergent step marked (:mod:`ablation.view.traces`). The diff compares the first run's outputs of
the two arms (:mod:`ablation.view.diff`: as JSON when their texts are equal but the values are
not, as ``14`` and ``"14"``, with a note naming both types). The task's input and expected
output are shown when the viewer was given the suite and the task's digest is the campaign's.
"""

from __future__ import annotations

import json
from typing import Any

from ablation.render._format import DASH, fmt_float, fmt_seconds, output_text, truncate
from ablation.schema import TaskResult
from ablation.view import markup
from ablation.view.catalog import ARMS, Catalog
from ablation.view.diff import word_diff
from ablation.view.traces import side_by_side

__all__ = ["task_page"]

OUTPUT_LIMIT = 20_000
#: Fields shown in a trial's table (anything else a trial carries is shown as JSON).
_SHOWN = frozenset({
    "task_id", "arm", "run", "status", "passed", "output", "latency_s", "wall_s", "attempts",
    "attempt_errors", "error_stage", "error_type", "error_message", "error_traceback",
    "verifier_note", "quality", "quality_errors", "cost", "tokens", "metrics", "category",
    "critical", "started_at",
})  # fmt: skip


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=repr)


def _pre(text: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<pre{klass}>{markup.esc(truncate(text, OUTPUT_LIMIT))}</pre>"


def _verdict(t: TaskResult) -> str:
    if t.status != "completed":
        return f'<span class="status-fail">{markup.esc(t.status.upper())}</span>'
    word = "PASS" if t.passed else "FAIL"
    return f'<span class="status-{word.lower()}">{word}</span>'


def _extra(t: TaskResult) -> dict[str, Any]:
    """The fields of ``t`` the trial table does not name (usage, traces), when set; its
    OpenTelemetry spans as their steps (name, status, error), not their packed data."""
    out = {k: v for k, v in t.model_dump(mode="json", exclude={"spans"}).items() if k not in _SHOWN and v}
    if t.spans is not None and t.spans.count:
        out["spans"] = t.spans.steps()
    return out


def _trial(t: TaskResult) -> str:
    extra = _extra(t)
    facts = [
        ["verdict", _verdict(t)],
        ["latency", markup.esc(fmt_seconds(t.latency_s))],
        ["attempts", str(t.attempts)],
    ]
    if t.cost is not None:
        facts.append(["cost", markup.esc(fmt_float(t.cost))])
    if t.tokens is not None:
        facts.append(["tokens", str(t.tokens)])
    for name, value in sorted({**t.quality, **t.metrics}.items()):
        facts.append([markup.esc(name), markup.esc(fmt_float(value))])
    parts = [markup.table(["", ""], facts, cls="facts")]
    if t.error is not None:
        where = f" ({t.error_stage})" if t.error_stage else ""
        parts.append(f"<h4>Error{markup.esc(where)}</h4>{_pre(t.error, 'error')}")
        if t.error_traceback:
            parts.append(f"<details><summary>Traceback</summary>{_pre(t.error_traceback)}</details>")
    if t.attempt_errors:
        parts.append(f"<h4>Failed attempts</h4>{_pre(chr(10).join(t.attempt_errors))}")
    if t.verifier_note:
        parts.append(f"<h4>Verifier note</h4>{_pre(t.verifier_note)}")
    if t.quality_errors:
        parts.append(f"<h4>Scorer errors</h4>{_pre(_json(t.quality_errors), 'error')}")
    parts.append(f'<h4>Output</h4>{_pre(output_text(t.output), "output")}')
    for name, value in sorted(extra.items()):
        parts.append(f"<h4>{markup.esc(name)}</h4>{_pre(_json(value), 'extra')}")
    return (
        f'<div class="trial {markup.esc(t.arm)}" data-arm="{markup.esc(t.arm)}" data-run="{t.run}">'
        f"<h3>{markup.esc(t.arm)}, run {t.run}</h3>{''.join(parts)}</div>"
    )


def _task_facts(catalog: Catalog, campaign_id: str, task_id: str, trials: list[TaskResult]) -> str:
    first = trials[0] if trials else None
    rows = [["category", markup.esc(first.category or "default") if first else DASH],
            ["critical", "yes" if first and first.critical else "no"]]  # fmt: skip
    task = catalog.task(campaign_id, task_id)
    if task is None:
        note = (
            "The given suite's task is not the one this campaign ran (its digest differs, or the "
            "suite lacks it): its input and expected output are not shown."
            if catalog.has_suite
            else "The store keeps no task inputs: start the viewer with --suite PATH to show the "
            "input and expected output."
        )
        return markup.table(["", ""], rows, cls="meta") + f'<p class="note">{markup.esc(note)}</p>'
    return (
        markup.table(["", ""], rows, cls="meta")
        + f'<h2>Input</h2>{_pre(output_text(task.input_data), "input")}'
        + f'<h2>Expected</h2>{_pre(output_text(task.expected_output), "expected")}'
    )


def task_page(catalog: Catalog, campaign_id: str, task_id: str) -> str:
    """Every trial of ``task_id`` in ``campaign_id``, the arms side by side, and the diff.

    Raises:
        KeyError: when the campaign holds no trial of the task.
    """
    report, record = catalog.report(campaign_id)
    trials = catalog.trials(campaign_id, task_id)
    if not trials:
        raise KeyError(task_id)
    outcome = "—"
    if task_id in set(report.regressions):
        outcome = "regression"
    elif task_id in set(report.improvements):
        outcome = "improvement"
    by_arm = {arm: [t for t in trials if t.arm == arm] for arm in ARMS}
    columns = "".join(
        f'<div class="arm" id="arm-{arm}"><h2>{arm.capitalize()}: {markup.esc(name)}</h2>'
        + "".join(_trial(t) for t in by_arm[arm])
        + ("" if by_arm[arm] else '<p class="note">No trial stored.</p>')
        + "</div>"
        for arm, name in (("baseline", record.baseline_agent), ("candidate", record.candidate_agent))
    )
    diff = ""
    if by_arm["baseline"] and by_arm["candidate"]:
        before, after = by_arm["baseline"][0].output, by_arm["candidate"][0].output
        diff = (
            '<h2>Output diff (first run: <del>baseline only</del> <ins>candidate only</ins>)</h2>'
            f'<div id="diff">{word_diff(before, after)}</div>'
        ) + side_by_side(_extra(by_arm["baseline"][0]), _extra(by_arm["candidate"][0]))
    back = markup.url(markup.campaign_url(campaign_id, "tasks"))
    body = (
        f"<p>{markup.link(back, 'Back to the tasks')} · outcome "
        f'<span class="outcome" id="outcome">{markup.esc(outcome)}</span></p>'
        f"{_task_facts(catalog, campaign_id, task_id, trials)}{diff}"
        f'<div class="sbs">{columns}</div>'
    )
    return markup.layout(f"Task {task_id}", body, store=str(catalog.path))
