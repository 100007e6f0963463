"""Reports of stored campaigns: stream a campaign's rows from the run store into the analysis.

The analysis reads light rows and asks :class:`StoredTrials` only for the few trials its
drill-downs show, so a report over a million stored trials never loads them all. A campaign of a
several-candidate run is reported as the run reported it (:func:`family_claims`), and a sequential
campaign's report replays its stop with the settings that decided it (:func:`~ablation.analysis.stop_settings.refuse_stop_changes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ablation.analysis import breakdowns, headline
from ablation.analysis.background import import_report_statistics
from ablation.analysis.build import build_report
from ablation.analysis.candidates import holm_claims, improvement_p
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.sequential import counted_pairs
from ablation.analysis.stop_settings import refuse_stop_changes
from ablation.columns import TrialColumns
from ablation.config import CampaignConfig, Provenance
from ablation.errors import ConfigError
from ablation.process_hooks import during_large_work
from ablation.report import AblationReport, ArmSummary, Uplift
from ablation.schema import AblationTask, TaskResult
from ablation.store.campaigns import CampaignFamily, campaign_family
from ablation.store.run_store import CampaignRecord, RunStore

__all__ = [
    "HeadlineFigures",
    "StoredTrials",
    "family_claims",
    "headline_figures",
    "report_from_store",
    "report_stored_campaign",
    "with_task_details",
]


class StoredTrials(Mapping[tuple[str, str], TaskResult]):
    """A lazy ``(task_id, arm) -> first-run TaskResult`` view of a stored campaign.

    The analysis streams light rows from the store and asks this view only for the few trials
    its drill-downs show, so a report over a million stored trials never loads them all.
    """

    def __init__(self, store: RunStore, campaign_id: str) -> None:
        self._store = store
        self._campaign_id = campaign_id

    def __getitem__(self, key: tuple[str, str]) -> TaskResult:
        task_id, arm = key
        found = self._store.results(self._campaign_id, arm=arm, task_ids=[task_id])
        if not found:
            raise KeyError(key)
        return min(found, key=lambda r: r.run)

    def iter_runs(
        self, keys: Iterable[tuple[str, str]], *, every_run: bool = True
    ) -> Iterator[tuple[tuple[str, str], TaskResult]]:
        """The trials of ``keys`` (absent keys are left out), one at a time: every run's, or
        only the first run's unless ``every_run``; in ``(task_id, arm, run)`` order.

        Each trial is read and decoded when the consumer asks for it
        (:meth:`~ablation.store.reads.TrialReader.iter_task_trials`): a drill-down that keeps
        only what it shows of each holds one whole trial (its trace, its spans) at a time.
        """
        wanted = set(keys)
        seen: set[tuple[str, str]] = set()

        def keep(task_id: str, arm: str, run: int) -> bool:
            key = (task_id, arm)
            first = key not in seen
            seen.add(key)
            return key in wanted and (every_run or first)  # listed by run: the first is the lowest

        if not wanted:
            return
        for result in self._store.iter_task_trials(self._campaign_id, {t for t, _ in wanted}, keep=keep):
            yield (result.task_id, result.arm), result
            del result  # not alive while the next trial is decoded

    def many(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], TaskResult]:
        """The first-run trials of ``keys``, all at once (absent keys are left out)."""
        return dict(self.iter_runs(keys, every_run=False))

    def all_runs(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[TaskResult]]:
        """Every run's trial of ``keys``, all at once, by run (absent keys are left out)."""
        found: dict[tuple[str, str], list[TaskResult]] = {}
        for key, result in self.iter_runs(keys):
            found.setdefault(key, []).append(result)
        return found

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(())

    def __len__(self) -> int:
        return self._store.count(self._campaign_id)

    def __bool__(self) -> bool:
        return True  # truth-testing must not count the store's trials (a full COUNT each time)


@during_large_work
def report_from_store(
    store: RunStore,
    campaign_id: str,
    *,
    config: CampaignConfig,
    provenance: Provenance,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
) -> AblationReport:
    """Build a stored campaign's report from its columns (paged reads, lazy drill-downs).

    Memory holds the two arms' columns (no per-trial Python object beyond one page) and the
    report's arrays; the drill-downs read their few trials through :class:`StoredTrials`.
    With ``tasks`` (the campaign that ran), the input and expected output of the drill-downs'
    tasks are kept in the store, and the suite category of each task the report leaves out as a
    whole (a task a sequential stop never ran has no stored trial to carry it); without them
    (``ablation report``), the inputs are read back from it.
    """
    baseline, candidate = store.campaign_columns(campaign_id)
    import_report_statistics(max(len(baseline), len(candidate)))  # before the pairing's lists
    data = pair_columns(
        baseline,
        candidate,
        tasks=tasks,
        expected_ids=expected_ids,
        on_error=config.on_error,
        trial_lookup=StoredTrials(store, campaign_id),
    )
    report = build_report(data, config=config, provenance=provenance, arms=(baseline, candidate))
    if tasks is not None:  # the campaign that ran: keep what its drill-downs show
        store.save_task_details(
            campaign_id, {d.task_id: (d.input, d.expected_output) for d in report.details}
        )
        left_out = {e.task_id for e in report.excluded if e.run is None}  # some with no trial
        store.save_task_categories(
            campaign_id, {t: data.tasks[t].category for t in left_out if t in data.tasks}
        )
        return report
    return with_task_details(report, store.task_details(campaign_id))


def with_task_details(report: AblationReport, kept: Mapping[str, tuple[Any, Any]]) -> AblationReport:
    """``report`` with the input and expected output of its drill-downs' tasks from ``kept``."""
    if not kept or not report.details:
        return report
    shown = [
        d.model_copy(update={"input": kept[d.task_id][0], "expected_output": kept[d.task_id][1]})
        if d.task_id in kept and d.input is None and d.expected_output is None
        else d
        for d in report.details
    ]
    return report.model_copy(update={"details": shown})


def report_stored_campaign(
    store: RunStore,
    campaign_id: str | None = None,
    *,
    config_update: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> tuple[AblationReport, CampaignRecord]:
    """Rebuild the report of a stored campaign (the newest when ``campaign_id`` is ``None``).

    The campaign's own configuration is used, with the fields in ``config_update`` replaced
    (e.g. another alpha or gate policy). Every task the campaign was started with is expected:
    tasks of an interrupted campaign that have no trials yet are listed as missing, never
    silently left out. A campaign of a several-candidate run is reported as that run reported
    it: its claim of improvement Holm-adjusted across the run's candidates
    (:func:`family_claims`, the other campaigns rebuilt with the same ``config_update``).
    A sequential campaign's stop was decided with the settings of
    :data:`~ablation.analysis.sequential.STOP_SETTINGS`, so an update that changes one of them
    is refused (:func:`~ablation.analysis.stop_settings.refuse_stop_changes`).

    Args:
        store: The run store.
        campaign_id: The campaign, or ``None`` for the newest.
        config_update: Configuration fields to replace (whole fields; a gate option as the whole
            stored gate policy with that field changed).
        names: How the caller names a setting in a refusal, by configuration field path
            (``{"seed": "--seed"}``: the command line passes its flags); by default its words.

    Raises:
        ConfigError: when the store holds no campaign, or ``config_update`` changes a setting
            that decided a sequential campaign's stop.
        StoreError: for an unknown campaign.
    """
    record = store.latest_campaign() if campaign_id is None else store.get_campaign(campaign_id)
    if record is None:
        raise ConfigError(f"{store.path}: the store holds no campaign")
    update = dict(config_update or {})
    refuse_stop_changes(record.campaign_id, record.config, update, names)
    report = _campaign_report(store, record, update)
    family = campaign_family(record)
    if family is not None:
        report = family_claims(store, family, [report], update)[0]
    return report, record


def family_claims(
    store: RunStore,
    family: CampaignFamily,
    reports: Sequence[AblationReport],
    config_update: Mapping[str, Any] | None = None,
) -> list[AblationReport]:
    """``reports`` (of campaigns of ``family``) with their claims of improvement Holm-adjusted
    across every candidate of the family (:func:`~ablation.analysis.candidates.holm_claims`).

    The family's stored campaigns not among ``reports`` are rebuilt with ``config_update`` for
    their one-sided p for improvement; a candidate the run planned whose campaign was never
    created (the run was interrupted before it) counts with p = 1, so Holm stays valid over the
    planned number of candidates. Assumes the reports carry their campaign ids.
    """
    members = store.family_campaigns(family.family_id)
    given = {r.provenance.campaign_id for r in reports}
    update = dict(config_update or {})
    others = [
        improvement_p(_campaign_report(store, m, update))
        for m in members
        if m.campaign_id not in given
    ]
    known = len(given | {m.campaign_id for m in members})
    others += [1.0] * max(0, family.size - known)
    return holm_claims(reports, others)


def _campaign_report(
    store: RunStore, record: CampaignRecord, update: Mapping[str, Any]
) -> AblationReport:
    """One stored campaign's own report (no family adjustment), its configuration updated."""
    config = record.config.model_copy(update=dict(update))
    provenance = Provenance(
        suite_fingerprint=record.suite_fingerprint,
        baseline_agent=record.baseline_agent,
        candidate_agent=record.candidate_agent,
        campaign_id=record.campaign_id,
        started_at=record.provenance.get("started_at") or record.created_at,
        finished_at=record.updated_at,
        baseline_reused_from=record.provenance.get("baseline_reused_from"),
        baseline_ran_at=record.provenance.get("baseline_ran_at"),
        isolation=record.config.isolation,
        sandbox=record.config.sandbox,
    )
    return report_from_store(
        store, record.campaign_id, config=config, provenance=provenance,
        expected_ids=store.expected_ids(record.campaign_id),
    )


@dataclasses.dataclass(frozen=True)
class HeadlineFigures:
    """The headline figures of a campaign's report, named as the report names them:
    ``n_paired``, each arm's summary (``baseline``, ``candidate``: pass rate and its interval)
    and ``uplift`` (its estimate and headline interval)."""

    n_paired: int
    baseline: ArmSummary
    candidate: ArmSummary
    uplift: Uplift


def headline_figures(
    baseline: TrialColumns,
    candidate: TrialColumns,
    *,
    config: CampaignConfig,
    expected_ids: Iterable[str] | None = None,
    agents: tuple[str | None, str | None] = (None, None),
) -> HeadlineFigures:
    """A stored campaign's :class:`HeadlineFigures`, without the rest of its report.

    The arms go through the report's own steps (:func:`report_from_store` then
    :func:`~ablation.analysis.build.build_report`): the pairing (:func:`pair_columns`, no trial
    read), the partly-run tasks left out, the sequential replay, the classification and its
    table, then :func:`~ablation.analysis.headline.arm_summary` and
    :func:`~ablation.analysis.headline.uplift`, so each figure is the report's, by the same
    function. Nothing else of the report is computed (no drill-downs, latency, categories,
    gates), which is most of a report's time (benchmarks/README.md).

    Args:
        baseline: The baseline arm's columns (``RunStore.campaign_columns``).
        candidate: The candidate arm's columns.
        config: The campaign's stored configuration.
        expected_ids: The ids the report expects (``RunStore.expected_ids``).
        agents: The arms' agent names, as the report's summaries carry them.
    """
    data = pair_columns(baseline, candidate, expected_ids=expected_ids, on_error=config.on_error)
    data, _ = counted_pairs(data, config)
    table = breakdowns.table(breakdowns.classify(data))
    level = config.confidence_level
    return HeadlineFigures(
        n_paired=len(data.task_ids),
        baseline=headline.arm_summary(data, "baseline", agents[0], level),
        candidate=headline.arm_summary(data, "candidate", agents[1], level),
        uplift=headline.uplift(data, table, config),
    )
