"""The viewer's campaign pages: the list of campaigns, one campaign, and its task table.

Each function takes the :class:`~ablation.view.catalog.Catalog` and the request's parameters and
returns a whole page (:func:`~ablation.view.markup.layout`). The figures come from the campaign's
report, the same :class:`~ablation.report.AblationReport` ``ablation report --format json``
prints, with the method names beside them; the arm summaries and paired metrics (latency, cost,
token usage) are the renderers' own rows (:mod:`ablation.render._sections`). The verdict of a campaign that did not complete says
how many trials it is of (the report's count), since a running campaign's status line, polled,
goes on counting while the figures stay those of the page's build.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from ablation.errors import StoreError
from ablation.render._breakdowns import CATEGORY_RULE, shown_categories
from ablation.render._format import fmt_p, fmt_pp, fmt_seconds, summary_sentence, truncate
from ablation.report import AblationReport
from ablation.store import CampaignRecord, summaries
from ablation.view import markup
from ablation.view.catalog import Catalog
from ablation.view.markup import LIST_CAP
from ablation.view.tasks import FILTERS, SORTS, TaskTable, task_query

__all__ = ["CAMPAIGNS_SHOWN", "campaign_page", "campaigns_page", "planned_trials", "progress", "tasks_page"]

PAGE_SIZE = 50
#: Campaigns a page of the campaign list shows.
CAMPAIGNS_SHOWN = 50


def _more(total: int, shown: int) -> str:
    """The note under a table capped at :data:`~ablation.view.markup.LIST_CAP` rows (``""``
    when nothing is left out)."""
    return markup.more(total, shown, markup.ALL_LISTED)


def planned_trials(record: CampaignRecord) -> int:
    """Trials the campaign plans (:func:`ablation.store.summaries.planned_trials`)."""
    return summaries.planned_trials(len(record.task_digests), record.config.runs)


def progress(record: CampaignRecord) -> dict[str, object]:
    """The small JSON a running campaign's page polls: status (as it stands,
    ``Catalog.record``: a killed run's is ``interrupted``, and the page then reloads and stops
    polling) and trial counts."""
    return {"campaign": record.campaign_id, "status": record.status,
            "trials": record.n_trials, "planned": planned_trials(record)}  # fmt: skip


def _status_line(catalog: Catalog, record: CampaignRecord) -> str:
    """The campaign page's status line: trials stored of planned; a running campaign's page
    follows it, an interrupted or aborted one's names the command that resumes it."""
    line = (
        f'<p id="progress" class="progress">Status <b id="status">{markup.esc(record.status)}</b>: '
        f'<span id="trials">{record.n_trials}</span> of {planned_trials(record)} trials stored.'
    )
    if record.status == "running":
        return line + " This page follows the campaign.</p>"
    if record.status not in ("interrupted", "aborted"):
        return line + "</p>"
    command = shlex.join([
        "ablation", "run", "SUITE", "--baseline", record.baseline_agent,
        "--candidate", record.candidate_agent, "--store", str(catalog.path),
        "--resume", record.campaign_id,
    ])  # fmt: skip
    return (
        f'{line} No process is running it: resume it with <code id="resume">{markup.esc(command)}'
        "</code> (SUITE: the suite it ran, with the options it ran with; the stored trials are "
        "kept and only the missing ones run).</p>"
    )


def campaigns_page(catalog: Catalog, suite: str = "", agent: str = "", page: str = "") -> str:
    """The campaigns, newest first, :data:`CAMPAIGNS_SHOWN` a page (``page``, from 1), filtered
    by suite fingerprint and agent name in SQL (every stored campaign is seen, none of their task
    digests decoded: :meth:`~ablation.view.catalog.Catalog.campaigns`); a campaign of the page
    whose stored row or task digests do not decode is an error line above the table."""
    damaged: list[StoreError] = []
    suites, agents = catalog.choices()
    wanted = {"suite": suite or None, "agent": agent or None}
    total = catalog.count(**wanted)
    pages = max(1, -(-total // CAMPAIGNS_SHOWN))
    number = min(max(_int(page, 1), 1), pages)
    records = catalog.campaigns(
        damaged, limit=CAMPAIGNS_SHOWN, offset=(number - 1) * CAMPAIGNS_SHOWN, **wanted
    )
    rows = []
    for r in records:
        rows.append([
            markup.link(markup.campaign_url(r.campaign_id), r.campaign_id, cls="campaign"),
            markup.link(markup.suite_url(r.suite_fingerprint), r.suite_fingerprint[:12], cls="suite"),
            markup.esc(r.baseline_agent), markup.esc(r.candidate_agent), markup.esc(r.created_at[:19]),
            markup.verdict_badge(r.verdict),  # recorded when it completed, as `ablation list`
            f'{r.n_trials}/{r.planned_trials}', f'<span class="status">{markup.esc(r.status)}</span>',
        ])  # fmt: skip
    form = (
        '<form class="filters" method="get" action="/">'
        f"{_choice('Suite', 'suite', suites, suite, 12)}{_choice('Agent', 'agent', agents, agent)}"
        '<button type="submit">Filter</button></form>'
    )
    first = (number - 1) * CAMPAIGNS_SHOWN
    count = (
        f'<p class="count" id="count">Campaigns {first + 1} to {first + len(records) + len(damaged)} '
        f"of {total}, newest first (page {number} of {pages}); {total - len(records) - len(damaged)} "
        "not shown.</p>"
        if total else ""
    )
    state = {"suite": suite, "agent": agent}
    body = markup.damaged(damaged) + form + count + (
        markup.table(["campaign", "suite", "baseline", "candidate", "created (UTC)", "verdict",
                 "trials", "status"], rows, tid="campaigns")
        if rows else '<p class="note">No campaign matches.</p>'
    ) + _pager("/", state, number, pages)
    return markup.layout("Campaigns", body, store=str(catalog.path))


def _choice(label: str, name: str, values: list[str], selected: str, width: int = 0) -> str:
    """A filter of the campaign list: a list of ``values`` (each cut to ``width`` characters when
    given), up to :data:`LIST_CAP` of them; past that a text field (any value, typed) offering
    the first :data:`LIST_CAP`, saying how many there are."""
    if len(values) <= LIST_CAP:
        shown = markup.options(((v, v[:width] if width else v) for v in values), selected)
        return (
            f'<label>{label} <select name="{name}" class="autosubmit"><option value="">all</option>'
            f"{shown}</select></label> "
        )
    offered = markup.options(((v, v) for v in values[:LIST_CAP]), "")
    return (
        f'<label>{label} <input type="search" name="{name}" list="{name}-list" '
        f'value="{markup.esc(selected)}" placeholder="any of {len(values)}">'
        f'<datalist id="{name}-list">{offered}</datalist></label> '
    )


def campaign_page(catalog: Catalog, campaign_id: str) -> str:
    """One campaign: status and progress, verdict, gates, headline figures, categories, errors."""
    report, record = catalog.report(campaign_id)
    tasks = markup.campaign_url(campaign_id, "tasks")
    shortcuts = " ".join(
        markup.link(markup.url(tasks, show=show), f"{label} ({count})", cls=f"show-{show}")
        for show, label, count in (
            ("paired", "Paired tasks", report.n_paired),
            ("excluded", "Left out", len({e.task_id for e in report.excluded if e.run is None})),
            ("regressions", "Regressions", len(report.regressions)),
            ("improvements", "Improvements", len(report.improvements)),
            ("flaky", "Flaky", len(report.flaky)),
        )
    )
    running = record.status == "running"
    state = _status_line(catalog, record)
    meta = markup.table(["", ""], [
        ["suite", markup.link(markup.suite_url(record.suite_fingerprint), record.suite_fingerprint)],
        ["baseline", markup.esc(record.baseline_agent)], ["candidate", markup.esc(record.candidate_agent)],
        ["created", markup.esc(record.created_at)], ["runs per task", str(record.config.runs)],
        ["seed", markup.esc(report.provenance.seed)],
        *([["labels", " ".join(f'<span class="label">{markup.esc(f"{k}={v}")}</span>'
                               for k, v in sorted(report.provenance.labels.items()))]]
          if report.provenance.labels else []),
    ], cls="meta")  # fmt: skip
    body = (
        f'{state}<div class="verdict {markup.esc(report.verdict)}" id="verdict">'
        f"{_verdict_title(report, record)} {markup.verdict_badge(report.verdict)} {markup.esc(summary_sentence(report))}"
        f"{markup.verdict_notes(report)}</div>"
        f'<p class="shortcuts">{shortcuts}</p>{meta}<h2>Gates</h2>{markup.gates(report)}'
        f"{markup.sequential(report)}<h2>Headline</h2>{markup.headline(report)}"
        f"{markup.outcomes(report)}{markup.arms_and_metrics(report)}{_categories(report, tasks)}{_errors(report, tasks)}"
        f"{markup.excluded(report, lambda tid: markup.url(markup.campaign_url(campaign_id, 'task'), **task_query(tid)))}"
        f"{markup.provenance(report)}"
    )
    refresh = markup.campaign_url(campaign_id).replace("/campaign/", "/api/campaign/", 1) + "/progress"
    return markup.layout(
        f"Campaign {campaign_id}", body, store=str(catalog.path), refresh=refresh if running else ""
    )


def _verdict_title(report: AblationReport, record: CampaignRecord) -> str:
    """``Verdict``; for a campaign that did not complete, also how many trials the verdict is of
    (the report's: those of the tasks its pairing kept) and how many were stored when the page
    was built (the status line's count then, which a running campaign's status line, polled,
    soon outgrows). The two differ when a task has trials in one arm only, which the pairing
    leaves out (a run stopped between a task's two arms): the verdict is then of fewer trials
    than were stored."""
    if record.status == "complete":
        return "Verdict"
    counted = report.baseline.n_trials + report.candidate.n_trials
    stored = max(record.n_trials, counted)  # the report is read after the record
    later = (
        ": it is running, reload the page for a newer verdict (it reloads itself when the run ends)"
        if record.status == "running" else ""
    )  # fmt: skip
    paired = "" if stored == counted else " of the tasks it pairs, of the "
    return (
        "Verdict of the trials so far (the campaign did not complete; of the "
        f'<span id="verdict-trials">{counted}</span> trials{paired}'
        + (f'<span id="verdict-stored">{stored}</span> trials' if paired else "")
        + f" stored when this page was built{later})"
    )


def _categories(report: AblationReport, tasks: str) -> str:
    """The categories (at most :data:`LIST_CAP`, by the renderers' rule), each count the
    category's paired tasks (the report's ``n``) and linked to the task list of those tasks."""
    if len(report.categories) < 2:
        return ""
    shown = shown_categories(report, LIST_CAP)
    rows = [
        [markup.link(markup.url(tasks, show="paired", category=c.category), c.category), str(c.n),
         str(c.table.regressions), str(c.table.improvements), markup.pct(c.baseline_pass_rate),
         markup.pct(c.candidate_pass_rate), markup.number(c.uplift, fmt_pp(c.uplift)),
         markup.number(c.adjusted_pvalue, fmt_p(c.adjusted_pvalue))]
        for c in shown
    ]  # fmt: skip
    headers = ["category", "paired tasks", "regressions", "improvements", "baseline", "candidate",
               "uplift", "adjusted p"]  # fmt: skip
    total = len(report.categories)
    rule = f"Shown: the {len(shown)} {CATEGORY_RULE}. " if len(shown) < total else ""
    note = (
        f'<p class="note">{markup.esc(rule)}Paired tasks: the tasks of the category the report '
        "pairs (its n); a task left out of the pairing is on the task list, under Left out.</p>"
    )
    return (
        f"<h2>Categories ({total})</h2>" + markup.table(headers, rows, tid="categories")
        + _more(total, len(shown)) + note
    )


def _errors(report: AblationReport, tasks: str) -> str:
    """The report's error groups and how many regressions are candidate errors or timeouts
    (the report's ``errored_regressions``), linked to the regressions on the task list."""
    if report.errors is None or not report.errors.groups:
        return ""
    n = len(report.errored_regressions)
    note = (
        f'<p class="note" id="errored-regressions">{n} of {len(report.regressions)} regressions are '
        "candidate errors or timeouts, not wrong answers: "
        f'{markup.link(markup.url(tasks, show="regressions"), "marked on the task list")}.</p>'
        if n else ""
    )  # fmt: skip
    rows = [
        [markup.esc(g.arm), markup.esc(g.stage), markup.esc(g.error_type), str(g.count), str(g.n_tasks),
         f"<pre>{markup.esc(truncate(g.example or '', 400))}</pre>"]
        for g in report.errors.groups
    ]  # fmt: skip
    return "<h2>Errors</h2>" + note + markup.table(
        ["arm", "stage", "type", "trials", "tasks", "example"], rows, tid="errors"
    )


def _task_rows(table: TaskTable, rows: object, task_base: str, back: str) -> list[list[str]]:
    out = []
    for i in rows:  # type: ignore[attr-defined]
        r = table.row(int(i))
        lat = r["latency"]
        reason = truncate(r["reason"], 200)
        out.append([
            markup.task_link(markup.url(task_base, **task_query(r["task_id"]), back=back), r["task_id"]),
            markup.text(r["category"]) + (' <span class="critical">critical</span>' if r["critical"] else ""),
            f'<span class="outcome {markup.esc(r["outcome"].replace(" ", "-"))}">{markup.esc(r["outcome"])}</span>'
            + markup.errored_mark(r) + (' <span class="flaky">flaky</span>' if r["flaky"] else "")
            + (f'<br><span class="reason note">{markup.esc(reason)}</span>' if reason else ""),
            "{}/{}".format(*r["baseline"]), "{}/{}".format(*r["candidate"]), str(r["errors"]),
            markup.esc(fmt_seconds(lat[0])), markup.esc(fmt_seconds(lat[1])),
        ])  # fmt: skip
    return out


def tasks_page(catalog: Catalog, campaign_id: str, params: Mapping[str, str]) -> str:
    """The task table: ``show``, ``category``, ``q``, ``sort``, ``dir`` and ``page`` parameters."""
    table, record = catalog.table(campaign_id)
    show = params.get("show", "all") if params.get("show") in FILTERS else "all"
    sort = params.get("sort", "id") if params.get("sort") in SORTS else "id"
    desc = params.get("dir") == "desc"
    state = {"show": show, "category": params.get("category", ""), "q": params.get("q", ""),
             "sort": sort, "dir": "desc" if desc else ""}  # fmt: skip
    page = table.select(
        show=show, category=state["category"], query=state["q"], sort=sort, descending=desc,
        page=_int(params.get("page"), 1), size=PAGE_SIZE,
    )
    base = markup.campaign_url(campaign_id, "tasks")
    heads = []
    for key, label in (("id", "task"), ("category", "category"), ("outcome", "outcome"),
                       ("baseline", "baseline"), ("candidate", "candidate"),
                       ("errors", "errors"), ("latency_b", "baseline latency"),
                       ("latency_c", "candidate latency")):  # fmt: skip
        flip = "" if (sort == key and desc) or sort != key else "desc"
        arrow = (" ▼" if desc else " ▲") if sort == key else ""
        heads.append(markup.link(markup.url(base, **{**state, "sort": key, "dir": flip}), label + arrow,
                            cls=f"sort-{key}"))  # fmt: skip
    back = markup.url(base, **state, page=page.page if page.page > 1 else None)
    rows = _task_rows(table, page.rows, markup.campaign_url(campaign_id, "task"), back)
    head = "".join(f"<th>{h}</th>" for h in heads)
    body_rows = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    grid = f'<table id="tasks"><thead><tr>{head}</tr></thead><tbody>{body_rows}</tbody></table>'
    body = (
        f"<p>{markup.link(markup.campaign_url(campaign_id), 'Back to the campaign')}</p>"
        f"{_filter_form(base, state, table)}"
        f'<p class="count" id="count">{_count(page.total, page.left_out, len(table))} '
        f"(page {page.page} of {page.pages})</p>{grid}{_pager(base, state, page.page, page.pages)}"
    )
    return markup.layout(f"Tasks of {record.campaign_id}", body, store=str(catalog.path))


def _count(total: int, left_out: int, tasks: int) -> str:
    """How many tasks match of the campaign's, and how many of them the pairing left out (a
    category's count on the campaign page is of its paired tasks only)."""
    text = f"{total} of {tasks} tasks"
    if left_out == total and left_out:
        return text + ", all left out of the pairing"
    if left_out:
        text += f": {total - left_out} paired, {left_out} left out of the pairing"
    return text


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default


def _category_filter(table: TaskTable, category: str) -> str:
    """A list of the categories, up to :data:`LIST_CAP` of them; past that a text field (any
    category, typed, as the ``category`` parameter) offering the :data:`LIST_CAP` with the most
    tasks."""
    if len(table.categories) <= LIST_CAP:
        cats = markup.options(((c, c) for c in table.categories), category)
        return (
            '<label>Category <select name="category" class="autosubmit"><option value="">all'
            f"</option>{cats}</select></label> "
        )
    top = markup.options(((c, c) for c, _ in table.category_counts()[:LIST_CAP]), "")
    return (
        f'<label>Category <input type="search" name="category" list="category-list" '
        f'value="{markup.esc(category)}" placeholder="any of {len(table.categories)}">'
        f'<datalist id="category-list">{top}</datalist></label> '
    )


def _filter_form(base: str, state: Mapping[str, str], table: TaskTable) -> str:
    shows = markup.options(((s, s) for s in FILTERS), state["show"])
    return (
        f'<form class="filters" id="task-filters" method="get" action="{markup.esc(base)}">'
        f'<label>Show <select name="show" class="autosubmit">{shows}</select></label> '
        f"{_category_filter(table, state['category'])}"
        f'<label>Search id <input type="search" name="q" value="{markup.esc(state["q"])}"></label>'
        f'{markup.hidden({"sort": state["sort"], "dir": state["dir"]})}'
        '<button type="submit">Apply</button></form>'
    )


def _pager(base: str, state: Mapping[str, str], page: int, pages: int) -> str:
    if pages <= 1:
        return ""
    parts = []
    if page > 1:
        parts.append(markup.link(markup.url(base, **state, page=page - 1), "← previous", cls="prev"))
    if page < pages:
        parts.append(markup.link(markup.url(base, **state, page=page + 1), "next →", cls="next"))
    return f'<p class="pager">{" ".join(parts)}</p>'

