"""The page of one task of one campaign: every trial of both arms side by side, and a word diff.

A trial shows its status, verdict, latency, attempts, cost (with its currency), tokens, quality
and metrics (a trial with a usage says ``unknown`` for a cost, token total or token count it does
not know: never 0, never a missing row beside an arm that has it), its error and traceback, the verifier's note and its output (text as it is, anything else as
indented JSON); any other field a trial carries (usage, traces) is shown as JSON under its own
name, and list-valued ones that both arms' first runs carry (traces) side by side, the first
divergent step marked (:mod:`ablation.view.traces`). A trial whose spans went beyond the per-trial
caps says how many were dropped (the figure of ``ablation report --details``), its step list is
compared only as far as it was kept, and the usage counted from such a cut trace (the trial's
usage equals what its kept spans record) is marked as from a truncated trace. The diff compares the first run's outputs of
the two arms (:mod:`ablation.view.diff`: as JSON when their texts are equal but the values are
not, as ``14`` and ``"14"``, with a note naming both types); a first run that did not complete
is named above it, and one that ended without an output (an error or a timeout before the agent
answered) gives no diff, which would show the other arm's whole output as removed or added, and
its column says it has none. The task's outcome is its row of the
task table (:mod:`ablation.view.tasks`: the report's classification, or ``excluded`` with the
report's reasons). Its input and expected output are the ones the store keeps for the report's
drill-downs (regressed and improved tasks), else the given suite's when the task's digest is the
campaign's; the page says which. The "Back to the tasks" link returns to the filtered, sorted
and paged table the user came from (the ``back`` parameter, accepted only as this campaign's
task table path with the table's own parameters, and rebuilt from them). The page of a task in a
comparison of two stored arms (:mod:`ablation.view.suite_pages`) is built by :func:`page_body` too.
Each arm shows its first :data:`RUNS_SHOWN` runs in full (the first, which the diff and step lists
compare, among them); a line under it counts the others and names the command that exports them all.
A trial's step lists (trace, spans) show their first steps and link to the page of all of them
(:mod:`ablation.view.steps`); the lists side by side show one window of rows with links to the
rows before and after. The trials are read one at a time, each cut to what the page shows
(:mod:`ablation.view.shown`), so a trace of 10^4 long steps in every run is never held whole
beside another.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ablation.analysis.details import MAX_DETAILS
from ablation.outputs import USAGE_METRICS, joined_models, usage_metrics
from ablation.render._format import DASH, fmt_float, fmt_seconds, output_text, truncate
from ablation.report import AblationReport
from ablation.schema import TaskResult
from ablation.spans import summarize
from ablation.view import markup
from ablation.view.catalog import Catalog
from ablation.view.diff import word_diff
from ablation.view.shown import ShownTrial, shown_trials
from ablation.view.steps import FIELDS, preview, step_list
from ablation.view.tasks import DEFAULT_CATEGORY, task_query
from ablation.view.traces import side_by_side

__all__ = ["RUNS_SHOWN", "Side", "back_url", "inputs", "page_body", "task_page"]

OUTPUT_LIMIT = 20_000
#: Runs of each arm a task page shows in full, lowest run numbers first (each may hold tens of
#: thousands of characters of output and JSON); the rest are counted under the arm's column.
RUNS_SHOWN = 10
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
    OpenTelemetry spans as their steps (name, status, error), not their packed data (an empty
    list when every span was dropped). The step lists (:data:`~ablation.view.steps.FIELDS`) are
    the trial's own, not copies: a trace of 10^4 steps is held once."""
    dumped = t.model_dump(mode="json", exclude={*_SHOWN, *FIELDS})
    out = {k: v for k, v in dumped.items() if v}
    for name in FIELDS:
        steps = step_list(t, name)
        if steps is not None and (steps or name == "spans"):
            out[name] = steps
    return out


def _dropped(t: TaskResult) -> int:
    """Spans ``t`` ended beyond the per-trial caps: counted, not kept."""
    return 0 if t.spans is None else t.spans.dropped


def _usage_from_cut_trace(t: TaskResult) -> bool:
    """Whether ``t``'s usage was counted from a truncated trace: some spans were dropped and the
    usage is what the kept spans record (an agent's own usage differs, and is not marked). A
    trial stored now gets no usage from a cut trace (:func:`ablation.run.spans.usage_from_spans`);
    one stored before holds the kept spans' counts, marked here. Its
    model is the spans' models joined (:func:`~ablation.outputs.joined_models`), or their last
    one, as a trial stored before several models were joined names it."""
    if t.usage is None or t.spans is None or not t.spans.dropped:
        return False
    s = summarize(t.spans.records(), timeline=False)
    u = t.usage
    return u.model in (joined_models(s.models), s.models[-1] if s.models else None) and (
        u.input_tokens, u.output_tokens, u.cached_tokens, u.cache_write_tokens, u.model_requests,
        u.tool_calls,
    ) == (
        s.input_tokens, s.output_tokens, s.cached_tokens, s.cache_write_tokens, s.model_calls,
        dict(Counter(s.tools)),
    )  # fmt: skip


def _heading(t: TaskResult, name: str, cut: bool) -> str:
    """The heading of extra field ``name``: the spans' kept and dropped counts, and the usage
    counted from a truncated trace (``cut``: :func:`_usage_from_cut_trace`) saying so."""
    dropped = _dropped(t)
    if name == "spans" and dropped and t.spans is not None:
        return f"spans ({t.spans.count} kept, {dropped} dropped over the per-trial cap)"
    if name == "usage" and cut:
        return f"usage (from a truncated trace: {dropped} spans dropped, not counted)"
    return name


#: What a trial's unknown cost or token count is shown as (the report's wording for a cost).
UNKNOWN_COST = "unknown (none stated, or a model without a price)"
UNKNOWN_TOKENS = "unknown (the usage states no count)"
#: The mark of a figure counted from a truncated trace.
CUT_MARK = " (truncated trace)"


def _unknown(what: str) -> str:
    return f'<span class="unknown">{markup.esc(what)}</span>'


def _usage_facts(t: TaskResult, cut: bool) -> list[list[str]]:
    """The trial's cost (with its currency) and tokens; a trial with a usage whose cost or
    token total is not known says ``unknown`` (the report's "tokens unknown"), never leaving the
    row out beside an arm that has it, nor writing 0. A trial without usage or cost (an agent
    that reports neither) has neither row."""
    facts = []
    if t.cost is not None:
        currency = f" {t.cost_currency}" if t.cost_currency else ""
        facts.append(["cost", markup.esc(fmt_float(t.cost) + currency)])
    elif t.usage is not None:
        facts.append(["cost", _unknown(UNKNOWN_COST)])
    if t.tokens is not None:
        usage = t.usage
        from_usage = cut and usage is not None and t.tokens == usage.total_tokens
        facts.append(["tokens", str(t.tokens) + (CUT_MARK if from_usage else "")])
    elif t.usage is not None:
        facts.append(["tokens", _unknown(UNKNOWN_TOKENS)])
    return facts


def _unknown_counts(t: TaskResult) -> dict[str, None]:
    """The usage metrics (:data:`~ablation.outputs.USAGE_METRICS`) the trial's usage leaves
    unknown (``None``), each shown as ``unknown``: :func:`~ablation.outputs.usage_metrics` leaves
    such a count out of the metrics rather than write 0, and the row would vanish."""
    if t.usage is None:
        return {}
    return {name: None for name in USAGE_METRICS if getattr(t.usage, name) is None and name not in t.metrics}


def _trial(t: TaskResult, campaign_id: str, trace_total: int | None = None, here: str = "") -> str:
    """One trial's column; ``trace_total``: its whole trace's steps when ``t`` holds its first;
    ``here``: the page's URL, which its steps pages link back to."""
    extra = _extra(t)
    cut = _usage_from_cut_trace(t)
    derived = usage_metrics(t.usage) if cut and t.usage is not None else {}
    facts = [
        ["verdict", _verdict(t)],
        ["latency", markup.esc(fmt_seconds(t.latency_s))],
        ["attempts", str(t.attempts)],
    ]
    facts.extend(_usage_facts(t, cut))
    named = {**_unknown_counts(t), **t.quality, **t.metrics}
    for name, value in sorted(named.items()):
        if value is None:
            facts.append([markup.esc(name), _unknown(UNKNOWN_TOKENS)])
            continue
        tag = CUT_MARK if name in t.metrics and derived.get(name) == value else ""
        facts.append([markup.esc(name), markup.esc(fmt_float(value) + tag)])
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
    shown = _pre(output_text(t.output), "output") if not _no_output(t) else (
        f'<p class="note no-output">None: the trial ended in {"a timeout" if t.status == "timeout" else "an error"}.</p>'
    )
    parts.append(f"<h4>Output</h4>{shown}")
    for name, value in sorted(extra.items()):
        total = trace_total if name == "trace" else None
        html = preview(campaign_id, t, name, value, total, here) if name in FIELDS else _pre(_json(value), "extra")
        parts.append(f"<h4>{markup.esc(_heading(t, name, cut))}</h4>{html}")
    return (
        f'<div class="trial {markup.esc(t.arm)}" data-arm="{markup.esc(t.arm)}" data-run="{t.run}">'
        f"<h3>{markup.esc(t.arm)}, run {t.run}</h3>{''.join(parts)}</div>"
    )


def _no_output(t: TaskResult) -> bool:
    """Whether ``t`` ended without an output: an error or a timeout before the agent answered."""
    return t.status != "completed" and t.output is None


def _output_diff(base: TaskResult, cand: TaskResult, sides: tuple[str, str]) -> str:
    """The word diff of the first runs' outputs, a run that did not complete named above it by
    its side (``sides``: the page's, as a comparison of two stored candidate arms names them).
    When one has no output (:func:`_no_output`) there is no diff: the other arm's whole output
    shown as removed or added would read as an answer that was empty."""
    notes = [
        f"The {side}'s run {t.run} did not complete ({t.status}"
        + (f": {t.error_type}" if t.error_type and t.error_type.lower() != t.status else "")
        + ("): it has no output to compare; its error is under its column." if _no_output(t) else ").")
        for side, t in zip(sides, (base, cand), strict=True) if t.status != "completed"
    ]  # fmt: skip
    lines = "".join(f'<p class="note ended">{markup.esc(n)}</p>' for n in notes)
    return lines + ("" if _no_output(base) or _no_output(cand) else word_diff(base.output, cand.output))


#: The task table's parameters a "Back to the tasks" link carries.
BACK_PARAMS = ("show", "category", "q", "sort", "dir", "page")


def back_url(campaign_id: str, back: str) -> str:
    """The task table to go back to: ``back`` when it is a relative URL of this campaign's task
    table (no scheme, host or fragment; that exact path), rebuilt from the table's parameters
    only; any other value gives the unfiltered table."""
    base = markup.campaign_url(campaign_id, "tasks")
    parts = urlsplit(back)
    if parts.scheme or parts.netloc or parts.fragment or parts.path != base:
        return base
    kept = {k: v for k, v in parse_qsl(parts.query) if k in BACK_PARAMS}
    return markup.url(base, **kept)


def inputs(catalog: Catalog, report: AblationReport, campaign_id: str, task_id: str) -> str:
    """The task's input and expected output, and where they come from."""
    kept = next((d for d in report.details if d.task_id == task_id), None)
    task = catalog.task(campaign_id, task_id)
    if kept is not None and (kept.input is not None or kept.expected_output is not None):
        source = "the store (kept with the campaign's report for its drill-down)"
        data, expected = kept.input, kept.expected_output
    elif task is not None:
        source = "the given suite (the task's digest is the campaign's)"
        data, expected = task.input_data, task.expected_output
    else:
        note = (
            "The store keeps no input for this task (it keeps those of the report's drill-downs "
            f"only: the first {MAX_DETAILS} regressed and the first {MAX_DETAILS} improved tasks)"
        )
        note += (
            ", and the given suite's task is not the one this campaign ran (its digest differs, "
            "or the suite lacks it): its input and expected output are not shown."
            if catalog.has_suite
            else ": start the viewer with --suite PATH to show its input and expected output."
        )
        return f'<p class="note" id="inputs-source">{markup.esc(note)}</p>'
    return (
        f'<p class="note" id="inputs-source">Input and expected output from {markup.esc(source)}.</p>'
        f'<h2>Input</h2>{_pre(output_text(data), "input")}'
        f'<h2>Expected</h2>{_pre(output_text(expected), "expected")}'
    )


#: One arm's column of a task page: its arm, heading, first :data:`RUNS_SHOWN` trials (in run
#: order, :func:`~ablation.view.shown.shown_trials`) and how many trials it stores.
Side = tuple[str, str, list[ShownTrial], int]


def _runs(shown: list[ShownTrial], stored: int, campaign_id: str, here: str = "") -> str:
    """One arm's ``shown`` trials in full; under them, how many of its ``stored`` trials were
    not shown and how to export every trial of ``campaign_id``."""
    if not shown:
        return '<p class="note">No trial stored.</p>'
    where = (
        f" runs not shown ({stored} in all): ablation report {campaign_id} "
        "--export-jsonl FILE writes every trial"
    )
    columns = "".join(_trial(s.trial, campaign_id, s.trace_total, here) for s in shown)
    return columns + markup.more(stored, len(shown), where)


def _compared(shown: ShownTrial) -> dict[str, Any]:
    """The extra fields of an arm's first run as the lists side by side compare them: its
    whole trace as keys and rows read by range, not its cut one."""
    extra = _extra(shown.trial)
    if "trace" in extra and shown.trace is not None:
        extra["trace"] = shown.trace
    return extra


def page_body(
    sides: list[Side], row: dict[str, Any] | None, inputs_html: str, back: str,
    campaigns: tuple[str, str], start: int | None = None, rows_url: Callable[[int], str] | None = None,
    here: str = "",
) -> str:
    """The page below its title: ``back`` (a link), the outcome and facts of ``row`` (a task
    table row's keys ``outcome``, ``flaky``, ``reason``, ``category``, ``critical``; the first
    trial's category and critical flag where it has none, else ``default`` as the report), ``inputs_html`` (:func:`inputs`),
    the diff and step lists of the two sides' first runs, then the sides' trials in two columns
    (:data:`RUNS_SHOWN` runs each at most).

    ``sides``: :data:`Side` of the baseline, then the candidate; ``campaigns``: the campaign
    each side's trials are stored under; ``start``,
    ``rows_url``: the step lists' first row and the page from a row on; ``here``: this page's
    URL, which a trial's steps pages link back to
    (:func:`~ablation.view.traces.side_by_side`).
    """
    columns = "".join(
        f'<div class="arm" id="arm-{arm}"><h2>{markup.esc(heading)}</h2>'
        f"{_runs(trials, stored, campaign, here)}</div>"
        for (arm, heading, trials, stored), campaign in zip(sides, campaigns, strict=True)
    )
    (left_side, _, left, _), (right_side, _, right, _) = sides
    diff = ""
    if left and right:
        base, cand = left[0].trial, right[0].trial
        diff = (
            '<h2>Output diff (first run: <del>baseline only</del> <ins>candidate only</ins>)</h2>'
            f'<div id="diff">{_output_diff(base, cand, (left_side, right_side))}</div>'
        ) + side_by_side(
            _compared(left[0]), _compared(right[0]), dropped={"spans": (_dropped(base), _dropped(cand))},
            start=start, rows_url=rows_url,
        )
    first = next((s.trial for s in left + right), None)
    facts = markup.table(["", ""], [
        ["category", markup.esc((row and row["category"]) or (first and first.category) or DEFAULT_CATEGORY)],
        ["critical", "yes" if (row and row["critical"]) or (first and first.critical) else "no"],
    ], cls="meta")  # fmt: skip
    outcome = DASH if row is None else row["outcome"]
    flaky = (markup.errored_mark(row) if row else "") + (' <span class="flaky">flaky</span>' if row and row["flaky"] else "")
    reason = (
        f'<p class="note" id="excluded-reason">Left out of the pairing: {markup.esc(row["reason"])}</p>'
        if row and row["reason"] else ""
    )  # fmt: skip
    return (
        f"<p>{back} · outcome "
        f'<span class="outcome {markup.esc(outcome.replace(" ", "-"))}" id="outcome">'
        f"{markup.esc(outcome)}</span>{flaky}</p>{reason}{facts}"
        f'{inputs_html}{diff}<div class="sbs">{columns}</div>'
    )


def task_page(
    catalog: Catalog, campaign_id: str, task_id: str, back: str = "", start: int | None = None, key: str = ""
) -> str:
    """Every trial of ``task_id`` in ``campaign_id``, the arms side by side, and the diff
    (``task_id`` raw, or as a page shows it; ``key``: a long id's link name, :meth:`~ablation.view.tasks.TaskTable.named`).

    ``back``: the task table URL the user came from (see :func:`back_url`); ``start``: the
    first row of the step lists side by side (the ``from`` parameter; else the window that
    holds the divergence).

    Raises:
        KeyError: when the campaign holds no trial of the task and its task table no row.
    """
    report, record = catalog.report(campaign_id)
    table, _ = catalog.table(campaign_id)
    task_id = table.named(task_id, key)  # the id as a page shows it names its task too
    at = table.find(task_id)
    sides: list[Side] = [
        (arm, f"{arm.capitalize()}: {name}", *shown_trials(catalog, campaign_id, task_id, arm, RUNS_SHOWN))
        for arm, name in (("baseline", record.baseline_agent), ("candidate", record.candidate_agent))
    ]
    if not sides[0][3] and not sides[1][3] and at is None:
        raise KeyError(task_id)
    body = page_body(
        sides, None if at is None else table.row(at), inputs(catalog, report, campaign_id, task_id),
        markup.link(back_url(campaign_id, back), "Back to the tasks", cls="back"),
        (campaign_id, campaign_id), start,
        lambda row: markup.url(markup.campaign_url(campaign_id, "task"), **task_query(task_id), back=back or None, **{"from": row}),
        markup.url(markup.campaign_url(campaign_id, "task"), **task_query(task_id), back=back or None, **{"from": start}),
    )
    return markup.layout(f"Task {task_id}", body, store=str(catalog.path))
