"""Embedded SQLite run store: campaigns and their trials, committed one trial at a time.

The store is one SQLite file (``.ablation/runs.db`` by default) in WAL mode with
``synchronous=NORMAL``: every :meth:`RunStore.append` is its own committed transaction and every
:meth:`RunStore.append_many` one transaction, so a crash or ``kill -9`` of the writing process
loses no committed trial (a power cut may lose the last few). Values are plain columns or JSON
text; nothing is ever pickled. The format (tables, rows, export lines) is in
:mod:`ablation.store.format`.

Tables: ``meta(key, value)`` holds ``schema_version``; ``campaigns`` holds one row per campaign
(status, config, suite fingerprint, per-task digests, agent names, provenance, ISO 8601 UTC
timestamps); ``trials`` holds one row per trial keyed by ``(campaign_id, task_id, arm, run)``, with
the columns the analysis needs plus ``result_json`` (``TaskResult.model_dump_json()``): the rows
are the store's only source of truth, each trial written once. ``arm_snapshots`` caches each
arm's columns for reports, used only while the rows are unchanged (:mod:`ablation.store.snapshot`).
The primary key's index serves every read by campaign, so no second index slows the appends.

Assumptions: one :class:`RunStore` is used by one thread at a time, possibly different threads over
its life (a lock serialises operations). Several processes may open one file; SQLite's locking and
a busy timeout arbitrate. SQLite's JSON functions are built in (SQLite >= 3.38).

:class:`RunStore` is composed from one part per responsibility, each in its own module sharing the
connection of :mod:`ablation.store.connection`: campaign records (:mod:`ablation.store.campaigns`;
their listing without the task digests, :mod:`ablation.store.summaries`),
trial writes (:mod:`ablation.store.trials`), trial reads (:mod:`ablation.store.reads`; columnar
ones, through the snapshots, in :mod:`ablation.store.columns`), the resume
check (:mod:`ablation.store.resume`), JSONL export/import (:mod:`ablation.store.transfer`) and
the drill-down tasks' inputs (:mod:`ablation.store.task_details`). This
module owns the composition and the names callers import.
"""

from __future__ import annotations

import os

from ablation.store.campaigns import CampaignStore
from ablation.store.columns import ColumnReader
from ablation.store.connection import DEFAULT_STORE_PATH
from ablation.store.format import (
    CAMPAIGN_STATUSES,
    SCHEMA_VERSION,
    TRIAL_CONFIG_FIELDS,
    CampaignRecord,
    TrialRow,
)
from ablation.store.reads import _PAGE as _PAGE
from ablation.store.reads import TrialReader
from ablation.store.resume import ResumeGuard
from ablation.store.summaries import CampaignSummaries
from ablation.store.task_details import TaskDetailStore
from ablation.store.transfer import JsonlTransfer
from ablation.store.trials import TrialWriter

__all__ = [
    "CAMPAIGN_STATUSES",
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "TRIAL_CONFIG_FIELDS",
    "CampaignRecord",
    "RunStore",
    "TrialRow",
]


# JsonlTransfer builds on CampaignStore and TrialReader, so it is listed before them (and
# CampaignStore before TrialReader, as in JsonlTransfer), and CampaignSummaries before
# CampaignStore, which it builds on: any other order is a TypeError at import.
class RunStore(
    JsonlTransfer, CampaignSummaries, CampaignStore, TrialWriter, TrialReader, ResumeGuard,
    ColumnReader, TaskDetailStore,
):
    """A SQLite file holding campaigns and their trials.

    Args:
        path: The database file, relative to the working directory unless absolute; parent
            directories are created. ``":memory:"`` gives a private in-memory store.

    Raises:
        StoreError: if the file cannot be opened, is not a SQLite database, or was written by a
            newer ``ablation`` (its schema version is above :data:`SCHEMA_VERSION`).
        read_only: Open an existing file read-only (see
            :class:`~ablation.store.connection.StoreConnection`).
    """

    def __init__(
        self, path: str | os.PathLike[str] = DEFAULT_STORE_PATH, *, read_only: bool = False
    ) -> None:
        super().__init__(path, read_only=read_only)

    def set_status(self, campaign_id: str, status: str) -> None:
        """Set a campaign's status; a campaign that ends ``complete`` gets its arm snapshots.

        The snapshots (:mod:`ablation.store.snapshot`) are written from the rows here, when
        missing or stale, so that a later ``ablation report`` (a read-only open, which cannot
        write them) reads columns, not a million rows. Other statuses write none: an
        interrupted campaign stops at once.

        Raises:
            ConfigError: for an unknown status.
            StoreError: for an unknown campaign.
        """
        super().set_status(campaign_id, status)
        if status == "complete" and not self.read_only:
            self.write_snapshots(campaign_id)
