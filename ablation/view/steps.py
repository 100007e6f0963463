"""One trial's step list (a trace, its spans' steps) a page at a time, and its preview on a task page.

A trial may carry a step list of any length (an agent's trace of 10^4 tool calls, say): a task
page shows the first :data:`PREVIEW` steps of each trial's list and links to this page, which
shows :data:`PAGE_STEPS` steps at a time with links to the pages before and after, and back to
the task page it was opened from (a campaign's, with its way back to the filtered task list, or
a comparison's: the ``back`` parameter, :func:`back_to_task`). Every step is
its indented JSON text cut at :data:`~ablation.view.traces.STEP_LIMIT` characters, the cut naming
the full length (``ablation report CAMPAIGN --export-jsonl FILE`` writes every step in full).
Only the steps shown are turned into text, and only the trial shown is read: a page of a trace
reads its length and its steps in range from the store (SQLite's JSON functions,
:meth:`~ablation.view.catalog.Catalog.trace_steps`), the trial without them; a page of spans
decodes the one trial (its spans are capped per trial).

Assumptions: a trial is named by its campaign, task, stored arm and run; the list-valued fields a
page shows are ``trace`` (the trial's own list) and ``spans`` (its kept spans' steps,
:meth:`~ablation.spans.TrialSpans.steps`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ablation.render._format import truncate
from ablation.schema import TaskResult
from ablation.view import markup
from ablation.view.catalog import Catalog
from ablation.view.tasks import task_query
from ablation.view.traces import STEP_LIMIT, step_text

__all__ = ["FIELDS", "PAGE_STEPS", "PREVIEW", "back_to_task", "preview", "step_list", "steps_page", "steps_url"]

#: Steps of one trial's list a task page shows; the rest are on :func:`steps_page`.
PREVIEW = 20
#: Steps one page of :func:`steps_page` shows.
PAGE_STEPS = 200
#: The list-valued fields of a trial this page shows.
FIELDS = ("trace", "spans")


def step_list(t: TaskResult, field: str) -> list[Any] | None:
    """The trial's list ``field`` as stored (not copied), or ``None`` when it has none."""
    if field == "trace":
        return t.trace
    if field == "spans" and t.spans is not None and (t.spans.count or t.spans.dropped):
        return t.spans.steps()
    return None


def steps_url(campaign_id: str, t: TaskResult, field: str, page: int = 1, back: str = "") -> str:
    """The path of page ``page`` of the trial ``t``'s list ``field``; ``back``: the task page it
    links back to (:func:`back_to_task`)."""
    return _url(campaign_id, t.task_id, t.arm, t.run, field, page, back)


def _url(campaign_id: str, task_id: str, arm: str, run: int, field: str, page: int = 1, back: str = "") -> str:
    return markup.url(
        markup.campaign_url(campaign_id, "steps"), **task_query(task_id), arm=arm, run=run, field=field,
        page=page if page > 1 else None, back=back or None,
    )  # fmt: skip


#: The task pages a steps page links back to, by path, and the parameters each keeps: the
#: campaign's task page (``/campaign/ID/task``) and a comparison's (``/compare/task``,
#: :data:`ablation.view.suite_pages.COMPARE_TASK`).
_BACK_PARAMS = {"task": ("id", "key", "back", "from"), "/compare/task": ("baseline", "candidate", "id", "key", "from")}


def back_to_task(campaign_id: str, task_id: str, back: str) -> str:
    """The task page a steps page links back to: ``back`` when it is a relative URL of this
    campaign's task page or of a comparison's task page (no scheme, host or fragment), rebuilt
    from that page's own parameters only; else the task's page in the campaign."""
    page = markup.campaign_url(campaign_id, "task")
    parts = urlsplit(back)
    keep = _BACK_PARAMS.get("task" if parts.path == page else parts.path)
    if parts.scheme or parts.netloc or parts.fragment or keep is None:
        return markup.url(page, **task_query(task_id))
    params = dict(parse_qsl(parts.query))
    return markup.url(parts.path, **{k: params[k] for k in keep if k in params})


def _rows(steps: Sequence[Any], first: int) -> str:
    return "".join(
        f'<tr class="step"><td>{first + k}</td><td><pre>{markup.esc(truncate(step_text(s), STEP_LIMIT))}</pre></td></tr>'
        for k, s in enumerate(steps)
    )


def preview(
    campaign_id: str, t: TaskResult, field: str, steps: Sequence[Any], total: int | None = None, back: str = ""
) -> str:
    """The first :data:`PREVIEW` steps of ``steps`` (the trial's list ``field``, or its first
    steps of ``total``), how many are not shown, and the link to them all (which links back to
    ``back``, the page shown)."""
    shown = steps[:PREVIEW]
    table = f'<table class="steps"><tbody>{_rows(shown, 0)}</tbody></table>' if shown else ""
    count = len(steps) if total is None else total
    rest = count - len(shown)
    link = markup.link(steps_url(campaign_id, t, field, back=back), f"All {count} steps, page by page", cls="all-steps")
    note = f"{len(shown)} of {count} steps shown" + (f", {rest} not shown" if rest else "")
    return f'{table}<p class="note steps-count">{markup.esc(note)}. {link}</p>'


def _int(text: str | None) -> int:
    try:
        return max(1, int(text or 1))
    except ValueError:
        return 1


def _read(catalog: Catalog, key: tuple[str, str, str, int], field: str, page: int) -> tuple[int, int, list[Any]]:
    """The number of steps of the trial ``key``'s list ``field``, the first step of page
    ``page`` (from 1, at most the last) and its steps: a trace's read by range, spans' from the
    decoded trial.

    Raises:
        KeyError: when the campaign holds no such trial, or the trial no such list.
    """
    total: int | None
    if field == "trace":
        total = catalog.trace_length(*key)
        steps: list[Any] | None = None
    else:
        trial = catalog.trial(*key)
        steps = None if trial is None else step_list(trial, field)
        total = None if steps is None else len(steps)
    if total is None:
        raise KeyError(key[1])
    first = (min(page, max(1, -(-total // PAGE_STEPS))) - 1) * PAGE_STEPS
    stop = min(total, first + PAGE_STEPS)
    return total, first, catalog.trace_steps(*key, first, stop) if steps is None else steps[first:stop]


def steps_page(catalog: Catalog, campaign_id: str, params: Mapping[str, str]) -> str:
    """One page (``page``, from 1) of the list ``field`` of the trial ``id`` (raw, or as a page
    shows it: :meth:`~ablation.view.tasks.TaskTable.named`), ``arm``, ``run``.

    Raises:
        StoreError: for an unknown campaign (the page is a 404).
        KeyError: when the campaign holds no such trial, or the trial no such list.
    """
    task_id, arm, field = params.get("id", ""), params.get("arm", ""), params.get("field", "")
    task_id = catalog.table(campaign_id)[0].named(task_id, params.get("key", ""))  # as a page shows it, or its key
    text = params.get("run", "")
    run = int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None
    if run is None or str(run) != text or field not in FIELDS:  # a run as the trial names it
        raise KeyError(task_id)
    total, first, shown = _read(catalog, (campaign_id, task_id, arm, run), field, _int(params.get("page")))
    pages = max(1, -(-total // PAGE_STEPS))
    page = first // PAGE_STEPS + 1
    to = back_to_task(campaign_id, task_id, params.get("back", ""))
    kept = "" if to == markup.url(markup.campaign_url(campaign_id, "task"), **task_query(task_id)) else to
    nav = [markup.link(_url(campaign_id, task_id, arm, run, field, page - 1, kept), "← previous", cls="prev")] if page > 1 else []
    if page < pages:
        nav.append(markup.link(_url(campaign_id, task_id, arm, run, field, page + 1, kept), "next →", cls="next"))
    back = markup.link(to, "Back to the task", cls="back")
    count = f"Steps {first} to {first + len(shown) - 1} of {total} (page {page} of {pages})" if shown else "No step."
    body = (
        f'<p>{back}</p><p class="count" id="count">{markup.esc(count)}</p>'
        f'<table class="steps" id="steps"><thead><tr><th>step</th><th>{markup.esc(field)}</th></tr></thead>'
        f'<tbody>{_rows(shown, first)}</tbody></table><p class="pager">{" ".join(nav)}</p>'
    )
    title = f"{field} of task {task_id}, {arm} run {run}"
    return markup.layout(title, body, store=str(catalog.path))
