"""What the viewer reads from a run store: campaigns, their reports, task tables and trials.

:class:`Catalog` holds one read-only :class:`~ablation.store.RunStore` (the open ``ablation
report`` uses, so a campaign may write to the file meanwhile) and caches each campaign's report
and task table under a key that changes whenever the campaign does (its trial count, status and
last update; for a report, those of every campaign of its several-candidate run too): a
finished campaign is analysed once, a running one again when it has new trials.
Every report is the one ``ablation report`` builds (:func:`report_stored_campaign`), every figure a
suite's history shows of a campaign its report's, by the report's own steps
(:func:`~ablation.analysis.stored.headline_figures`), and every
comparison of two stored arms the one ``ablation compare`` builds (:func:`compare_columns`): the
viewer computes no statistic of its own.

Pages that list campaigns read their summaries
(:meth:`~ablation.store.summaries.CampaignSummaries.campaign_summaries`: task counts and filters in
SQL, no campaign's task digests decoded), a page of them at a time, so a store of 10^4 campaigns
of 10^3 tasks lists as fast as one of ten; only a campaign a page is about is read in full. A
task's trials are read one at a time (:meth:`Catalog.trial`), a trace's rows by range
(:meth:`Catalog.trace_steps`), never a task's every trial at once.

Assumptions: the cache keeps the last :data:`CACHED` analyses of each kind.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ablation.analysis.build import compare_columns
from ablation.analysis.stored import (
    HeadlineFigures,
    StoredTrials,
    headline_figures,
    report_stored_campaign,
)
from ablation.columns import TrialColumns
from ablation.errors import AblationError, StoreError
from ablation.report import AblationReport
from ablation.schema import AblationTask, TaskResult, task_digests
from ablation.store import CampaignRecord, RunStore
from ablation.store.campaigns import campaign_family
from ablation.store.summaries import CampaignSummary
from ablation.view.tasks import TaskTable, task_table

__all__ = ["ARMS", "CACHED", "ArmRef", "Catalog", "ReportError"]

#: Analyses kept in memory per kind (least recently used dropped first): reports are small (a
#: suite's history page shows each campaign's figures), task tables and comparisons hold columns.
CACHED = {"report": 64, "figures": 64, "table": 8, "compare": 8, "compare-table": 8}
ARMS = ("baseline", "candidate")
_T = TypeVar("_T")


class ReportError(AblationError):
    """A stored campaign whose report cannot be built: its row reads, but the analysis refuses
    its stored settings or trials. Its message names the campaign and the analysis's error."""


@dataclasses.dataclass(frozen=True)
class ArmRef:
    """One arm of one stored campaign, as the compare page picks it."""

    campaign_id: str
    arm: str

    @classmethod
    def parse(cls, text: str) -> ArmRef:
        """``"CAMPAIGN:arm"`` (the arm defaults to the candidate), the white space around it
        ignored (a campaign id pasted into the compare form's field brings some).

        Raises:
            ValueError: for an arm other than ``baseline`` or ``candidate``.
        """
        text = text.strip()
        campaign, sep, arm = text.rpartition(":")
        if not sep:
            campaign, arm = text, "candidate"
        if arm not in ARMS:
            raise ValueError(f"unknown arm {arm!r}: use baseline or candidate")
        return cls(campaign, arm)

    def __str__(self) -> str:
        return f"{self.campaign_id}:{self.arm}"


class Catalog:
    """A read-only run store and the analyses the viewer shows, cached per campaign state.

    Args:
        path: The run store file (it must exist).
        suite: The suite's tasks, when the user gave one: a task page shows a task's input and
            expected output only when its digest equals the one stored with the campaign.

    Raises:
        StoreError: if the file cannot be opened read-only.
    """

    def __init__(self, path: str | Path, suite: Mapping[str, AblationTask] | None = None) -> None:
        self.path = Path(path)
        self.store = RunStore(self.path, read_only=True)
        self._suite = dict(suite or {})
        self._digests = task_digests(list(self._suite.values())) if self._suite else {}
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        self._building = threading.Lock()
        #: campaign id -> the state whose task digests were last found readable.
        self._readable: dict[str, tuple[Any, ...]] = {}

    @property
    def has_suite(self) -> bool:
        """Whether the viewer was given a suite."""
        return bool(self._suite)

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def campaigns(
        self, damaged: list[StoreError], *, limit: int | None = None, offset: int = 0,
        suite: str | None = None, agent: str | None = None,
    ) -> list[CampaignSummary]:
        """The newest ``limit`` readable campaigns after the newest ``offset`` (every one when
        ``limit`` is ``None``), newest first, of suite fingerprint ``suite`` and with ``agent``
        as an arm when given (filtered in SQL), each with its status as it stands; ``damaged``
        receives one error per campaign among them whose row or task digests do not decode
        (:meth:`~ablation.store.summaries.CampaignSummaries.campaign_summaries`), and those are
        left out, so one damaged row never takes down a page that lists or compares campaigns."""
        return self.store.campaign_summaries(
            limit=limit, offset=offset, suite=suite, agent=agent, damaged=damaged
        )

    def count(self, *, suite: str | None = None, agent: str | None = None) -> int:
        """How many campaigns the store holds, of ``suite`` and with ``agent`` when given (the
        damaged ones counted: a page names those it reads)."""
        return self.store.count_campaigns(suite=suite, agent=agent)

    def choices(self) -> tuple[list[str], list[str]]:
        """The stored campaigns' distinct suite fingerprints and agent names, sorted."""
        return self.store.campaign_choices()

    def _now(self, record: CampaignRecord) -> CampaignRecord:
        """The record with its status as it stands (``RunStore.status_now``): a campaign stored
        as ``running`` that no live process runs is ``interrupted``, as ``ablation list`` says."""
        status = self.store.status_now(record)
        return record if status == record.status else dataclasses.replace(record, status=status)

    def record(self, campaign_id: str) -> CampaignRecord:
        """One campaign's record (its trial count and status read now, :meth:`_now`), its task
        digests known readable.

        Raises:
            StoreError: for an unknown campaign, or one whose stored row or task digests do not
                decode (naming the damage): every page about it is then that error.
        """
        record = self._now(self.store.get_campaign(campaign_id))
        state = self._state(record)
        with self._lock:
            checked = self._readable.get(campaign_id) == state
        if not checked:  # decoded once per campaign state, not on every progress poll
            len(record.task_digests)
            with self._lock:
                self._readable[campaign_id] = state
        return record

    def _cached(self, key: tuple[Any, ...], build: Callable[[], _T]) -> _T:
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]  # type: ignore[no-any-return]
        with self._building:  # one analysis at a time: two requests do not build one twice
            with self._lock:
                if key in self._cache:
                    return self._cache[key]  # type: ignore[no-any-return]
            value = build()
            with self._lock:
                self._cache[key] = value
                kind = [k for k in self._cache if k[0] == key[0]]
                for old in kind[: max(0, len(kind) - CACHED[key[0]])]:
                    del self._cache[old]
            return value

    @staticmethod
    def _state(record: CampaignRecord) -> tuple[Any, ...]:
        return (record.campaign_id, record.n_trials, record.status, record.updated_at)

    def report(self, campaign_id: str) -> tuple[AblationReport, CampaignRecord]:
        """The campaign's report, as ``ablation report CAMPAIGN`` builds it, and its record.

        A campaign of a several-candidate run is Holm-adjusted across its family's campaigns, so
        its cached report is keyed by the state of each of them too: it is rebuilt (the others'
        reports with it) only when one of them changes.

        Raises:
            StoreError: as :meth:`record`, or when the campaign's trials cannot be read.
            ReportError: when the analysis refuses the campaign (a :class:`ValueError` or an
                :class:`~ablation.errors.AblationError` other than a store error); nothing is
                cached.
        """
        record = self.record(campaign_id)
        family = campaign_family(record)
        members = () if family is None else self.store.family_campaigns(family.family_id)

        def build() -> AblationReport:
            try:
                return report_stored_campaign(self.store, campaign_id)[0]
            except StoreError:
                raise
            except (AblationError, ValueError) as exc:
                raise _refused(campaign_id, exc) from exc

        key = ("report", *self._state(record), *(self._state(m) for m in members))
        return self._cached(key, build), record

    def table(self, campaign_id: str) -> tuple[TaskTable, CampaignRecord]:
        """The campaign's per-task table (paired and classified as its report) and its record."""
        record = self.record(campaign_id)

        def build() -> TaskTable:
            return self._table(record, self.store.campaign_columns(campaign_id))

        return self._cached(("table", *self._state(record)), build), record

    def _table(self, record: CampaignRecord, columns: tuple[TrialColumns, TrialColumns]) -> TaskTable:
        return task_table(
            *columns, config=record.config, expected_ids=list(record.task_digests) or None,
            stored_categories=self.store.task_categories(record.campaign_id),
        )  # fmt: skip

    def history(self, campaign_id: str) -> tuple[HeadlineFigures | AblationReport, TaskTable, CampaignRecord]:
        """What a suite's history shows of a campaign: its report's headline figures (pass
        rates, intervals, uplift: :func:`~ablation.analysis.stored.headline_figures`, the
        report's own steps without the rest of the report; the report itself when
        :meth:`report` has it cached for this state), its task table (:meth:`table`) and its
        record. The arms' columns are read once for both; each is cached per campaign state.

        Raises:
            StoreError: as :meth:`report`.
            ReportError: when the analysis refuses the campaign (as :meth:`report`).
        """
        record = self.record(campaign_id)
        columns = functools.cache(lambda: self.store.campaign_columns(campaign_id))
        key = ("report", *self._state(record))
        with self._lock:
            full = next((v for k, v in self._cache.items() if k[: len(key)] == key), None)

        def build() -> HeadlineFigures:
            try:
                return headline_figures(
                    *columns(), config=record.config, expected_ids=self.store.expected_ids(campaign_id),
                    agents=(record.baseline_agent, record.candidate_agent),
                )  # fmt: skip
            except StoreError:
                raise
            except (AblationError, ValueError) as exc:
                raise _refused(campaign_id, exc) from exc

        figures = full if full is not None else self._cached(("figures", *self._state(record)), build)
        table = self._cached(("table", *self._state(record)), lambda: self._table(record, columns()))
        return figures, table, record

    def task_runs(self, campaign_id: str, task_id: str) -> list[tuple[str, int]]:
        """``(arm, run)`` of every stored trial of one task, in that order (none decoded)."""
        return self.store.task_runs(campaign_id, task_id)

    def trial(self, campaign_id: str, task_id: str, arm: str, run: int) -> TaskResult | None:
        """One stored trial, decoded (``None``: no such trial). A page reads a task's trials
        one at a time and keeps only what it shows of each (:mod:`ablation.view.shown`)."""
        return self.store.trial(campaign_id, task_id, arm, run)

    def trace_length(self, campaign_id: str, task_id: str, arm: str, run: int) -> int | None:
        """Steps of one trial's trace, counted by SQLite (``None``: no such trial or list)."""
        return self.store.trace_length(campaign_id, task_id, arm, run)

    def trace_steps(self, campaign_id: str, task_id: str, arm: str, run: int, start: int, stop: int) -> list[Any]:
        """Steps ``start`` to ``stop - 1`` of one trial's trace, read by SQLite (the rest of the
        trial is not decoded); ``stop`` at most the trace's length."""
        return self.store.trace_steps(campaign_id, task_id, arm, run, start, stop)

    def task(self, campaign_id: str, task_id: str) -> AblationTask | None:
        """The given suite's task ``task_id`` when it is the one the campaign ran, else ``None``."""
        task = self._suite.get(task_id)
        if task is None:
            return None
        stored = self.record(campaign_id).task_digests.get(task_id)
        return task if stored is not None and stored == self._digests.get(task_id) else None

    def compare(self, baseline: ArmRef, candidate: ArmRef) -> AblationReport:
        """The paired report of two stored arms, as ``ablation compare`` builds it.

        The candidate campaign's configuration (alpha, seed, gates) is used and its task ids are
        the expected ones, so a baseline arm and a candidate arm of one campaign give exactly that
        campaign's report figures. Nothing is run again.

        Raises:
            StoreError: for an unknown campaign.
        """
        base_rec, cand_rec = self.record(baseline.campaign_id), self.record(candidate.campaign_id)

        def build() -> AblationReport:
            lookups = {
                arm: StoredTrials(self.store, ref.campaign_id)
                for ref, arm in ((baseline, "baseline"), (candidate, "candidate"))
            }
            return compare_columns(
                *self._arms(baseline, candidate), names=(str(baseline), str(candidate)),
                expected_ids=list(cand_rec.task_digests) or None, config=cand_rec.config,
                trial_lookup=_ArmLookup(lookups, {"baseline": baseline.arm, "candidate": candidate.arm}),
            )  # fmt: skip

        key = ("compare", *self._state(base_rec), baseline.arm, *self._state(cand_rec), candidate.arm)
        return self._cached(key, build)

    def _arms(self, baseline: ArmRef, candidate: ArmRef) -> tuple[TrialColumns, TrialColumns]:
        """The two stored arms' trial columns, labelled ``baseline`` and ``candidate``."""
        return (
            dataclasses.replace(self.store.trial_columns(baseline.campaign_id, baseline.arm), arm="baseline"),
            dataclasses.replace(self.store.trial_columns(candidate.campaign_id, candidate.arm), arm="candidate"),
        )

    def compare_table(self, baseline: ArmRef, candidate: ArmRef) -> TaskTable:
        """The per-task table of two stored arms, paired and classified as :meth:`compare`'s
        report pairs them (the candidate campaign's configuration and expected task ids)."""
        base_rec, cand_rec = self.record(baseline.campaign_id), self.record(candidate.campaign_id)

        def build() -> TaskTable:
            return task_table(
                *self._arms(baseline, candidate), config=cand_rec.config,
                expected_ids=list(cand_rec.task_digests) or None,
                stored_categories=self.store.task_categories(cand_rec.campaign_id),
            )  # fmt: skip

        key = ("compare-table", *self._state(base_rec), baseline.arm, *self._state(cand_rec), candidate.arm)
        return self._cached(key, build)


def _refused(campaign_id: str, exc: Exception) -> ReportError:
    """The error of a campaign whose report (or its figures) the analysis refuses with ``exc``."""
    return ReportError(f"campaign {campaign_id!r}: its report cannot be built: {exc}")


class _ArmLookup(Mapping[tuple[str, str], TaskResult]):
    """``(task_id, side) -> TaskResult`` over two stored arms, for the report's drill-downs."""

    def __init__(self, lookups: Mapping[str, StoredTrials], arms: Mapping[str, str]) -> None:
        self._lookups = lookups
        self._arms = arms

    def __getitem__(self, key: tuple[str, str]) -> TaskResult:
        task_id, side = key
        found = self._lookups[side][(task_id, self._arms[side])]
        return found.model_copy(update={"arm": side})

    def __iter__(self) -> Any:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True
