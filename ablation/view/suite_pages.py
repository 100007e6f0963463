"""Pages across campaigns: compare two stored arms of one suite, and a suite's history.

The compare page pairs any two stored arms (``CAMPAIGN:baseline`` or ``CAMPAIGN:candidate``) of
campaigns of one suite (the same suite fingerprint) through
:meth:`~ablation.view.catalog.Catalog.compare`, the code path of ``ablation compare``: no agent
runs again; the comparison shows its gates, headline, arm summaries, paired metrics and what
its pairing left out as a campaign page does; its form offers the arms of the newest :data:`COMPARE_CAMPAIGNS` campaigns
(read as summaries, :meth:`~ablation.view.catalog.Catalog.campaigns`), an older one typed. The
history page lists the newest :data:`HISTORY_SHOWN` campaigns of a suite (its ``limit``
parameter: more, ``0`` all) in creation order from their summaries (agents, creation time, the
verdict recorded at completion); for the newest :data:`HISTORY_REPORTS` of them it shows each
arm's pass rate and the uplift, each with its interval, as their reports give them (the report's
own steps without the rest of the report: :meth:`~ablation.view.catalog.Catalog.history`, the
exact values kept in the markup), plots the candidate's, and lists
the tasks whose candidate outcome changed most often from one campaign to the next (a task
passes in a campaign when every run passed, fails when none did, and is ``mixed`` otherwise;
each change between consecutive campaigns that ran the task is one flip); older ones listed say
their figures were not computed, and the page says so. Each regression and improvement of a
comparison links to the task's page in that comparison (``/compare/task``): the two compared
arms' trials side by side, with the task page's diff and step lists, and the task's outcome in
the comparison's report.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from ablation.analysis.stored import HeadlineFigures
from ablation.errors import AblationError, StoreError
from ablation.render._format import DASH, fmt_interval, fmt_pct, fmt_pp, summary_sentence
from ablation.report import AblationReport, Interval
from ablation.store.summaries import CampaignSummary
from ablation.view import markup
from ablation.view.catalog import ARMS, ArmRef, Catalog, ReportError
from ablation.view.markup import LIST_CAP, Answer
from ablation.view.shown import shown_trials
from ablation.view.task_page import RUNS_SHOWN, Side, inputs, page_body
from ablation.view.tasks import TaskTable, task_query

__all__ = [
    "COMPARE_CAMPAIGNS", "COMPARE_TASK", "FLIPS_SHOWN", "HISTORY_REPORTS", "HISTORY_SHOWN", "compare_page", "compare_task_page", "compare_task_url", "flips", "history_page",
]

#: Tasks listed as flipping most often.
FLIPS_SHOWN = 20
#: The path of a task's page in a comparison of two stored arms.
COMPARE_TASK = "/compare/task"
#: Campaigns whose arms the compare form offers (two options each), newest first.
COMPARE_CAMPAIGNS = LIST_CAP // 2
#: Campaigns a suite's history shows by default, newest (its ``limit`` parameter: more, 0 all).
HISTORY_SHOWN = 50
#: Campaigns of a suite's history whose report figures and task tables are computed (pass rates,
#: uplift, intervals, plot, flips), the newest listed: the others are listed from their summaries.
HISTORY_REPORTS = 50


def _arm_options(records: list[CampaignSummary], selected: str) -> str:
    values = [
        (f"{r.campaign_id}:{arm}",
         f"{r.campaign_id} {arm} ({r.baseline_agent if arm == 'baseline' else r.candidate_agent})")
        for r in records for arm in ARMS
    ]  # fmt: skip
    return markup.options(values, selected)


def _arm_fields(catalog: Catalog, damaged: list[StoreError], base_text: str, cand_text: str) -> str:
    """The compare form's two arm fields: lists of the arms of the newest
    :data:`COMPARE_CAMPAIGNS` campaigns; when the store holds more, text fields (``CAMPAIGN:arm``,
    typed) offering those, with a line saying how many campaigns are not offered."""
    records = catalog.campaigns(damaged, limit=COMPARE_CAMPAIGNS)
    total = catalog.count()
    if total <= COMPARE_CAMPAIGNS:
        return (
            f'<label>Baseline <select name="baseline">{_arm_options(records, base_text)}</select>'
            f'</label> <label>Candidate <select name="candidate">'
            f"{_arm_options(records, cand_text)}</select></label> "
        )
    fields = "".join(
        f'<label>{name.capitalize()} <input type="search" name="{name}" list="arms" '
        f'value="{markup.esc(text)}" placeholder="CAMPAIGN:arm"></label> '
        for name, text in (("baseline", base_text), ("candidate", cand_text))
    )
    note = (
        f'<p class="note" id="arms-note">The arms of the newest {COMPARE_CAMPAIGNS} of {total} campaigns '
        f"are offered; {total - COMPARE_CAMPAIGNS} older ones are not: type CAMPAIGN:baseline or "
        f"CAMPAIGN:candidate (the {markup.link('/', 'campaign list')} pages through them all).</p>"
    )
    return f'{fields}<datalist id="arms">{_arm_options(records, "")}</datalist>{note}'


def _ids(ids: list[str], tid: str, base: ArmRef, cand: ArmRef) -> str:
    """The tasks ``ids``, up to :data:`~ablation.view.markup.LIST_CAP` of them, each a link to
    its page in the comparison of ``base`` and ``cand``; under them, how many were not shown."""
    if not ids:
        return f'<p class="note" id="{tid}">None.</p>'
    items = "".join(
        f'<li>{markup.task_link(compare_task_url(base, cand, i), i, cls="task-id")}</li>' for i in ids[:LIST_CAP]
    )
    shown = min(len(ids), LIST_CAP)
    return f'<ul class="ids" id="{tid}">{items}</ul>' + markup.more(len(ids), shown, f" not shown ({len(ids)} in all)")


def compare_task_url(base: ArmRef, cand: ArmRef, task_id: str) -> str:
    """The page of ``task_id`` in the comparison of two stored arms (:func:`compare_task_page`)."""
    return markup.url(COMPARE_TASK, baseline=str(base), candidate=str(cand), **task_query(task_id))


def compare_page(catalog: Catalog, params: Mapping[str, str]) -> Answer:
    """Pick a baseline and a candidate arm; with both picked, their paired report. A campaign
    whose stored row does not decode is an error line above the form, not a choice; a picked
    arm that cannot be compared is an error line under the form, the page's status that of
    :func:`_paired`."""
    damaged: list[StoreError] = []
    base_text, cand_text = params.get("baseline", ""), params.get("candidate", "")
    form = (
        '<form class="filters" id="compare-form" method="get" action="/compare">'
        f"{_arm_fields(catalog, damaged, base_text, cand_text)}"
        '<button type="submit">Compare</button></form>'
    )
    body, status = markup.damaged(damaged) + form, 200
    if base_text and cand_text:
        shown = _comparison(catalog, base_text, cand_text)
        body, status = body + shown.html, shown.status
    return Answer(markup.layout("Compare two campaigns", body, store=str(catalog.path)), status)


def _paired(catalog: Catalog, base_text: str, cand_text: str) -> tuple[ArmRef, ArmRef, AblationReport] | Answer:
    """The two arms and their paired report, or the error line that says why there is none with
    its status: 404 for an arm or campaign the store does not hold (or whose row does not read,
    as a campaign's own page), 422 for two arms that cannot be paired (different suites) or a
    comparison the analysis refuses (:class:`~ablation.view.catalog.ReportError`)."""
    try:
        base, cand = ArmRef.parse(base_text), ArmRef.parse(cand_text)
    except ValueError as exc:
        return Answer(_error(exc), 404)
    try:
        b_rec, c_rec = catalog.record(base.campaign_id), catalog.record(cand.campaign_id)
        if b_rec.suite_fingerprint != c_rec.suite_fingerprint:
            return Answer(_error(
                "These campaigns ran different suites (their fingerprints differ): their tasks cannot be paired."
            ), 422)  # fmt: skip
        return base, cand, catalog.compare(base, cand)
    except ReportError as exc:
        return Answer(_error(exc), 422)
    except StoreError as exc:
        return Answer(_error(exc), 404)
    except (ValueError, AblationError) as exc:  # the analysis refuses the pair
        return Answer(_error(exc), 422)


def _error(what: object) -> str:
    return f'<p class="error" id="compare-error">{markup.esc(what)}</p>'


def _comparison(catalog: Catalog, base_text: str, cand_text: str) -> Answer:
    paired = _paired(catalog, base_text, cand_text)
    if isinstance(paired, Answer):
        return paired
    base, cand, report = paired
    return Answer(
        f'<div class="verdict {markup.esc(report.verdict)}" id="verdict">Verdict '
        f"{markup.verdict_badge(report.verdict)} {markup.esc(summary_sentence(report))}"
        f"{markup.verdict_notes(report)}</div>"
        f"<h2>Gates</h2>{markup.gates(report)}<h2>Headline</h2>{markup.headline(report)}"
        f"{markup.outcomes(report)}{markup.arms_and_metrics(report)}<h2>Regressions ({len(report.regressions)})</h2>"
        f"{_ids(report.regressions, 'regressions', base, cand)}"
        f"<h2>Improvements ({len(report.improvements)})</h2>"
        f"{_ids(report.improvements, 'improvements', base, cand)}"
        f"{markup.excluded(report, lambda tid: compare_task_url(base, cand, tid), ' not shown')}"
        f"{markup.provenance(report)}"
    )


def compare_task_page(catalog: Catalog, params: Mapping[str, str]) -> str | Answer:
    """Every trial of task ``params["id"]`` (raw or as a page shows it) in the two stored arms
    ``params["baseline"]`` and ``params["candidate"]`` (``CAMPAIGN:arm``, as the compare page
    picks them) side by side, with the diff and step lists of the task page
    (:func:`~ablation.view.task_page.page_body`), and the task's row in their comparison
    (:meth:`~ablation.view.catalog.Catalog.compare_table`: the report's pairing and
    classification, so a task is a regression, an improvement, ``both pass``, ``both fail`` or
    ``excluded`` with the report's reasons, as on a campaign's task list).

    Its input and expected output are read as the candidate campaign's task page reads them (the
    compare page pairs arms of one suite only).

    Two arms that cannot be compared (:func:`_paired`) are the error line with its status.

    Raises:
        KeyError: when neither arm holds a trial of the task and the comparison has no row of it.
    """
    task_id = params.get("id", "")
    paired = _paired(catalog, params.get("baseline", ""), params.get("candidate", ""))
    if isinstance(paired, Answer):
        return Answer(markup.layout(f"Task {task_id}", paired.html, store=str(catalog.path)), paired.status)
    base, cand, _ = paired
    table = catalog.compare_table(base, cand)
    task_id = table.named(task_id, params.get("key", ""))  # the id as a page shows it names its task too
    sides: list[Side] = []
    for ref, side in ((base, "baseline"), (cand, "candidate")):
        record = catalog.record(ref.campaign_id)
        agent = record.baseline_agent if ref.arm == "baseline" else record.candidate_agent
        shown = shown_trials(catalog, ref.campaign_id, task_id, ref.arm, RUNS_SHOWN)
        sides.append((side, f"{side.capitalize()}: {ref} ({agent})", *shown))
    found = table.find(task_id)
    if found is None and not sides[0][3] and not sides[1][3]:
        raise KeyError(task_id)
    row = None if found is None else table.row(found)
    back = markup.link(markup.url("/compare", baseline=str(base), candidate=str(cand)),
                       "Back to the comparison", cls="back")  # fmt: skip
    source = inputs(catalog, catalog.report(cand.campaign_id)[0], cand.campaign_id, task_id)
    body = page_body(
        sides, row, source, back, (base.campaign_id, cand.campaign_id),
        markup.count(params.get("from", "")),
        lambda first: markup.url(COMPARE_TASK, baseline=str(base), candidate=str(cand), **task_query(task_id), **{"from": first}),
        markup.url(COMPARE_TASK, baseline=str(base), candidate=str(cand), **task_query(task_id),
                   **{"from": markup.count(params.get("from", ""))}),
    )  # fmt: skip
    return markup.layout(f"Task {task_id}", body, store=str(catalog.path))


def flips(tables: list[TaskTable]) -> list[tuple[str, int, str]]:
    """``(task id, flips, outcomes in order)`` of the tasks that flipped, most flips first.

    ``tables`` are the campaigns' task tables in creation order; outcomes are written ``P``
    (every run passed), ``F`` (none did), ``M`` (mixed) and ``-`` (not run in that campaign).
    """
    seen: dict[str, list[str]] = {}
    for k, table in enumerate(tables):
        for tid, passes, runs in zip(
            table.ids.tolist(), table.cand_passes.tolist(), table.cand_runs.tolist(), strict=True
        ):
            if runs == 0:
                continue
            marks = seen.setdefault(tid, ["-"] * len(tables))
            marks[k] = "P" if passes == runs else "F" if passes == 0 else "M"
    out = []
    for tid, marks in seen.items():
        ran = [x for x in marks if x != "-"]
        n = sum(a != b for a, b in itertools.pairwise(ran))
        if n:
            out.append((tid, n, "".join(marks)))
    out.sort(key=lambda item: (-item[1], item[0]))
    return out


#: What a history row shows of a campaign: its report's figures (``n_paired``, ``baseline``,
#: ``candidate``, ``uplift``), from :meth:`~ablation.view.catalog.Catalog.history`.
Figures = HeadlineFigures | AblationReport


def _no_data(report: Figures) -> bool:
    """Whether the report has no pass rate to show: no paired task, or no candidate trial
    (its rate is then written 0 over an interval of [0, 1], which is no measurement)."""
    return report.n_paired == 0 or report.candidate.n_trials == 0


def _plot(points: list[tuple[CampaignSummary, Figures]]) -> str:
    """An inline SVG: the candidate's pass rate (dot) and interval (line) per campaign; a
    campaign without data (:func:`_no_data`) keeps its place, marked ``no data``, not a dot."""
    width, height, pad = 640, 240, 30
    step = (width - 2 * pad) / max(1, len(points) - 1)
    marks = []
    for k, (record, report) in enumerate(points):
        x = pad + k * step if len(points) > 1 else width / 2
        cid = markup.esc(record.campaign_id)
        if _no_data(report):
            title = f"{record.campaign_id}: no data ({report.n_paired} paired tasks, {report.candidate.n_trials} candidate trials)"
            marks.append(
                f'<text class="tick no-data" x="{x:.1f}" y="{height / 2:.1f}" text-anchor="middle" '
                f'data-campaign="{cid}">no data<title>{markup.esc(title)}</title></text>'
            )
            continue
        ci = report.candidate.pass_rate_ci
        y = [height - pad - v * (height - 2 * pad) for v in (report.candidate.pass_rate, ci.low, ci.high)]
        title = f"{record.campaign_id}: {fmt_pct(report.candidate.pass_rate)} {fmt_interval(ci, 'pct')}"
        marks.append(
            f'<line class="ci" x1="{x:.1f}" x2="{x:.1f}" y1="{y[1]:.1f}" y2="{y[2]:.1f}"/>'
            f'<circle class="point" cx="{x:.1f}" cy="{y[0]:.1f}" r="5" '
            f'data-campaign="{cid}"><title>{markup.esc(title)}</title></circle>'
        )
    axis = "".join(
        f'<line class="grid" x1="{pad}" x2="{width - pad}" y1="{height - pad - v * (height - 2 * pad):.1f}" '
        f'y2="{height - pad - v * (height - 2 * pad):.1f}"/><text class="tick" x="2" '
        f'y="{height - pad - v * (height - 2 * pad) + 4:.1f}">{int(v * 100)}%</text>'
        for v in (0, 0.5, 1)
    )
    return (
        f'<svg class="history" id="history-plot" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="candidate pass rate per campaign">{axis}{"".join(marks)}</svg>'
    )


def _interval(iv: Interval, kind: str) -> str:
    """An interval as :func:`~ablation.view.markup.interval` writes it, its exact bounds kept
    (``data-low``, ``data-high``) as :func:`~ablation.view.markup.number` keeps a value."""
    return (f'<span class="interval" data-low="{markup.esc(repr(float(iv.low)))}" '
            f'data-high="{markup.esc(repr(float(iv.high)))}">{markup.interval(iv, kind)}</span>')  # fmt: skip


def _rates(report: Figures) -> list[str]:
    """The history table's figures of a campaign: the candidate's pass rate and its interval, the
    baseline's, and the uplift with its headline interval; ``no data`` for the rates of a report
    without data (:func:`_no_data`), whose uplift is then none."""
    if _no_data(report):
        none = '<span class="no-data">no data</span>'
        return [none, DASH, none, DASH, DASH, DASH]
    cand, base, uplift = report.candidate, report.baseline, report.uplift
    return [
        markup.pct(cand.pass_rate), _interval(cand.pass_rate_ci, "pct"),
        markup.pct(base.pass_rate), _interval(base.pass_rate_ci, "pct"),
        markup.number(uplift.estimate, fmt_pp(uplift.estimate)), _interval(uplift.ci, "pp"),
    ]  # fmt: skip


def _not_computed(older: int) -> str:
    """The note over a history listing ``older`` campaigns whose figures were not computed."""
    if not older:
        return ""
    return (
        f'<p class="note" id="not-computed">Pass rates, uplift, intervals, the plot and the flips are '
        f"of the newest {HISTORY_REPORTS} campaigns listed: each is computed from its trials. The {older} older ones "
        "listed show their agents and the verdict recorded when they completed; a campaign's page "
        "shows its report.</p>"
    )


def history_page(catalog: Catalog, fingerprint: str, limit: str = "") -> str:
    """The newest ``limit`` campaigns of one suite (:data:`HISTORY_SHOWN` unless given, ``0``:
    all; read by suite in SQL, as summaries) over time, and the tasks that flip most often among
    the newest :data:`HISTORY_REPORTS` of them, whose reports' figures
    (:meth:`~ablation.view.catalog.Catalog.history`) give the pass rates, uplift, intervals and
    plot (the older ones listed say theirs were not computed); a campaign among those whose stored
    row does not decode or whose figures the analysis refuses
    (:class:`~ablation.view.catalog.ReportError`) is an error line above them, left out of the
    table, the plot and the flips; the older campaigns are counted, with a link showing them.

    When every campaign read is damaged but older ones were not read, the page names the damage
    and links to them.

    Raises:
        StoreError: the store holds no campaign of that suite, or every one is damaged (the page
            is a 404).
    """
    damaged: list[StoreError] = []
    wanted = markup.count(limit)
    records = catalog.campaigns(
        damaged, suite=fingerprint, limit=HISTORY_SHOWN if wanted is None else wanted or None
    )[::-1]
    total = catalog.count(suite=fingerprint)
    left = total - len(records) - len(damaged)
    if not records and left <= 0:  # older campaigns, not read yet, may still be readable
        unread = f" ({len(damaged)} stored campaign(s) could not be read)" if damaged else ""
        raise StoreError(f"no campaign of suite {fingerprint!r} in this store{unread}")
    older = (
        f'<p class="note" id="older">The newest {len(records) + len(damaged)} of {total} campaigns of this '
        f"suite; {left} older ones are not shown: "
        f"{markup.link(markup.url(markup.suite_url(fingerprint), limit=0), 'show all', cls='show-all')}.</p>"
        if left > 0 else ""
    )
    points: list[tuple[CampaignSummary, Figures]] = []
    tables: list[TaskTable] = []
    failed: list[ReportError] = []
    unreported = records[: max(0, len(records) - HISTORY_REPORTS)]
    for record in records[len(unreported) :]:
        try:
            figures, table, _ = catalog.history(record.campaign_id)
            points.append((record, figures))
            tables.append(table)
        except ReportError as exc:  # named above the table, never left out without a word
            failed.append(exc)
        except AblationError as exc:
            damaged.append(StoreError(f"campaign {record.campaign_id!r}: {exc}"))
    none = '<span class="not-computed">not computed</span>'
    rows = [
        [markup.link(markup.campaign_url(r.campaign_id), r.campaign_id), markup.esc(r.created_at[:19]),
         markup.esc(r.candidate_agent), *rates[:2], markup.esc(r.baseline_agent), *rates[2:],
         markup.verdict_badge(r.verdict)]  # recorded at completion
        for r, rates in [*((r, [none, DASH, none, DASH, DASH, DASH]) for r in unreported),
                         *((r, _rates(rep)) for r, rep in points)]
    ]  # fmt: skip
    headers = ["campaign", "created (UTC)", "candidate", "pass rate", "interval", "baseline",
               "pass rate", "interval", "uplift", "interval", "verdict"]  # fmt: skip
    flipped = flips(tables)
    flip_rows = [
        [markup.esc(markup.id_text(tid)), str(n), f'<code>{markup.esc(marks)}</code>'] for tid, n, marks in flipped[:FLIPS_SHOWN]
    ]
    flip_html = (
        markup.table(["task", "flips", "candidate outcome per campaign (P pass, F fail, M mixed)"],
                flip_rows, tid="flips")
        if flip_rows else '<p class="note" id="flips">No task changed outcome across campaigns.</p>'
    )
    body = markup.damaged(damaged) + markup.damaged(failed) + older + _not_computed(len(unreported)) + (
        f'<p>Suite <code>{markup.esc(fingerprint)}</code>: {len(unreported) + len(points)} campaign(s), oldest first. '
        "The candidate's pass rate with its interval:</p>"
        f"{_plot(points) if points else ''}{markup.table(headers, rows, tid='history')}"
        f"<h2>Tasks that flip most often</h2>{flip_html}"
    )
    return markup.layout("Suite history", body, store=str(catalog.path))
