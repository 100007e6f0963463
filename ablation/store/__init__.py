"""The run store: SQLite persistence of campaigns and trials (append, resume, reuse, export).

:mod:`ablation.store.format` is the on-disk format (tables, row types, export lines);
:mod:`ablation.store.run_store` is :class:`RunStore`, composed from one part per responsibility:
:mod:`~ablation.store.connection` (the connection, its lock and version check),
:mod:`~ablation.store.campaigns` (campaign records), :mod:`~ablation.store.trials` (trial writes),
:mod:`~ablation.store.reads` (trial reads and streaming), :mod:`~ablation.store.resume` (the resume
check) and :mod:`~ablation.store.transfer` (JSONL export and import).
"""

from ablation.store.run_store import (
    CAMPAIGN_STATUSES,
    DEFAULT_STORE_PATH,
    SCHEMA_VERSION,
    TRIAL_CONFIG_FIELDS,
    CampaignRecord,
    RunStore,
    TrialRow,
)

__all__ = [
    "CAMPAIGN_STATUSES",
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "TRIAL_CONFIG_FIELDS",
    "CampaignRecord",
    "RunStore",
    "TrialRow",
]
