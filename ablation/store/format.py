"""The run store's on-disk format: SQL schema, trial rows and the JSONL export lines.

Kept apart from :mod:`ablation.store` (which owns connections, locking and the operations) so
that the format is readable in one place: the tables, the INSERT of a trial, the light row the
analysis streams, and the parsing of an export's header and trial lines with errors that name
the file and line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from ablation.config import CampaignConfig
from ablation.errors import ConfigError, InputError, StoreError
from ablation.schema import TaskResult, shown_name

__all__ = [
    "CAMPAIGN_STATUSES",
    "SCHEMA_VERSION",
    "TRIAL_CONDITION_FIELDS",
    "TRIAL_CONFIG_FIELDS",
    "CampaignRecord",
    "NotText",
    "TrialRow",
    "damaged",
]

SCHEMA_VERSION = 5
#: SQL that brings a store of version ``v`` to ``v + 1`` (run inside one transaction on open).
#: 1 -> 2: trials get a ``tokens`` column, filled from the stored results (which always had it).
#: 2 -> 3: campaigns get ``agent_fingerprints_json`` (``arm -> fingerprint`` of the agent's code,
#: :func:`ablation.agents.fingerprint.agent_fingerprint`); NULL for campaigns stored before.
#: 3 -> 4: (a second copy of the trials as column blocks, which version 5 removes again).
#: 4 -> 5: the column blocks and ``campaigns.blocks`` are dropped; ``trial_counts`` is filled
#: from the rows (its triggers, created by :data:`DDL`, keep it from then on); ``arm_snapshots``
#: starts empty, and each snapshot is written from the rows when first needed.
MIGRATIONS: dict[int, str] = {
    1: "ALTER TABLE trials ADD COLUMN tokens INTEGER;"
    " UPDATE trials SET tokens = json_extract(result_json, '$.tokens');",
    2: "ALTER TABLE campaigns ADD COLUMN agent_fingerprints_json TEXT;",
    3: "ALTER TABLE campaigns ADD COLUMN blocks INTEGER NOT NULL DEFAULT 1;",
    4: "DROP TABLE IF EXISTS trial_blocks; ALTER TABLE campaigns DROP COLUMN blocks;"
    " CREATE TABLE IF NOT EXISTS trial_counts (campaign_id TEXT NOT NULL, arm TEXT NOT NULL,"
    " n INTEGER NOT NULL, rowid_sum INTEGER NOT NULL, PRIMARY KEY (campaign_id, arm));"
    " INSERT INTO trial_counts SELECT campaign_id, arm, COUNT(*), SUM(rowid) FROM trials"
    " GROUP BY campaign_id, arm;",
}
CAMPAIGN_STATUSES: frozenset[str] = frozenset({"running", "complete", "interrupted", "aborted"})
#: Config fields that change what the trials are; any other field is cosmetic for a resume.
TRIAL_CONFIG_FIELDS: tuple[str, ...] = (
    "runs", "seed", "timeout_s", "retry", "on_error", "sequential", "isolation",
    "worker_memory_mb", "sandbox", "max_output_bytes", "prices",
)
#: Of those, what a trial runs under (not the order, stopping or counting of the trials): the
#: baseline trials another campaign reuses must have run under this campaign's.
TRIAL_CONDITION_FIELDS = tuple(f for f in TRIAL_CONFIG_FIELDS if f not in ("seed", "on_error", "sequential"))

LISTED = 10  # ids named in one error message

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY, status TEXT NOT NULL, config_json TEXT NOT NULL,
    suite_fingerprint TEXT NOT NULL, task_digests_json TEXT NOT NULL,
    baseline_agent TEXT NOT NULL, candidate_agent TEXT NOT NULL, provenance_json TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, agent_fingerprints_json TEXT);
CREATE TABLE IF NOT EXISTS trials (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL, arm TEXT NOT NULL, run INTEGER NOT NULL, status TEXT NOT NULL,
    passed INTEGER NOT NULL, latency_s REAL, wall_s REAL, attempts INTEGER NOT NULL, cost REAL,
    category TEXT, critical INTEGER NOT NULL, error_type TEXT, result_json TEXT NOT NULL,
    tokens INTEGER,
    PRIMARY KEY (campaign_id, task_id, arm, run));
CREATE TABLE IF NOT EXISTS arm_snapshots (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    arm TEXT NOT NULL, n INTEGER NOT NULL, rowid_sum INTEGER NOT NULL,
    tasks_match INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (campaign_id, arm));
CREATE TABLE IF NOT EXISTS trial_counts (
    campaign_id TEXT NOT NULL, arm TEXT NOT NULL, n INTEGER NOT NULL, rowid_sum INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, arm));
CREATE TRIGGER IF NOT EXISTS trials_inserted AFTER INSERT ON trials BEGIN
    INSERT INTO trial_counts (campaign_id, arm, n, rowid_sum)
    VALUES (NEW.campaign_id, NEW.arm, 1, NEW.rowid) ON CONFLICT (campaign_id, arm)
    DO UPDATE SET n = n + 1, rowid_sum = rowid_sum + excluded.rowid_sum; END;
CREATE TRIGGER IF NOT EXISTS trials_deleted AFTER DELETE ON trials BEGIN
    UPDATE trial_counts SET n = n - 1, rowid_sum = rowid_sum - OLD.rowid
    WHERE campaign_id = OLD.campaign_id AND arm = OLD.arm;
    DELETE FROM arm_snapshots WHERE campaign_id = OLD.campaign_id; END;
CREATE TRIGGER IF NOT EXISTS trials_updated AFTER UPDATE ON trials BEGIN
    UPDATE trial_counts SET n = n - 1, rowid_sum = rowid_sum - OLD.rowid
    WHERE campaign_id = OLD.campaign_id AND arm = OLD.arm;
    INSERT INTO trial_counts (campaign_id, arm, n, rowid_sum)
    VALUES (NEW.campaign_id, NEW.arm, 1, NEW.rowid) ON CONFLICT (campaign_id, arm)
    DO UPDATE SET n = n + 1, rowid_sum = rowid_sum + excluded.rowid_sum;
    DELETE FROM arm_snapshots WHERE campaign_id IN (OLD.campaign_id, NEW.campaign_id); END;
CREATE TRIGGER IF NOT EXISTS campaign_tasks_updated AFTER UPDATE OF task_digests_json ON campaigns BEGIN
    DELETE FROM arm_snapshots WHERE campaign_id = NEW.id; END;
CREATE TABLE IF NOT EXISTS task_details (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL, input_json TEXT NOT NULL, expected_json TEXT NOT NULL,
    PRIMARY KEY (campaign_id, task_id));
CREATE TABLE IF NOT EXISTS task_categories (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL, category TEXT NOT NULL, PRIMARY KEY (campaign_id, task_id));
"""
#: Triggers that stores of schema 5 were first written with and :data:`DDL` now defines anew:
#: ``name -> a fragment of the current definition``; a writable open drops one whose stored SQL
#: lacks it, and :data:`DDL` creates it again (``trials_deleted`` once kept the counts only, so
#: a row deleted and inserted again under its ``rowid`` left the snapshot in use).
REDEFINED_TRIGGERS: dict[str, str] = {"trials_deleted": "arm_snapshots"}
INSERT_TRIAL = (
    "INSERT INTO trials (campaign_id, task_id, arm, run, status, passed, latency_s, wall_s,"
    " attempts, cost, category, critical, error_type, result_json, tokens)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
CAMPAIGN_FIELDS = (
    "id", "status", "config_json", "suite_fingerprint", "task_digests_json", "baseline_agent",
    "candidate_agent", "provenance_json", "created_at", "updated_at",
)  # fmt: skip
_FIELDS_SQL = ", ".join("c." + f for f in CAMPAIGN_FIELDS)
#: A campaign and its trial count, kept by the ``trial_counts`` triggers (no pass over the rows).
SELECT_CAMPAIGN = (
    f"SELECT {_FIELDS_SQL}, (SELECT COALESCE(SUM(k.n), 0) FROM trial_counts k"
    " WHERE k.campaign_id = c.id) FROM campaigns c"
)
#: :data:`SELECT_CAMPAIGN` for a store older than schema 5 opened read-only (rows counted).
SELECT_CAMPAIGN_ROWS = (
    f"SELECT {_FIELDS_SQL}, (SELECT COUNT(*) FROM trials t WHERE t.campaign_id = c.id)"
    " FROM campaigns c"
)
NEWEST_FIRST = " ORDER BY c.created_at DESC, c.rowid DESC"
#: A campaign's task count from its stored digests, in SQL (the text stays in SQLite); ``NULL``
#: unless it is JSON text of an object, one byte a character (what ablation writes: ``json.dumps``
#: escapes the rest; SQLite's ``length`` counts a character of several bytes, or stops at a NUL,
#: short), for Python to decode and judge (:class:`TaskDigests`).
TASK_COUNT = (
    "CASE WHEN typeof(c.task_digests_json) <> 'text' OR length(c.task_digests_json)"
    " <> length(CAST(c.task_digests_json AS BLOB)) THEN NULL"
    " WHEN json_valid(c.task_digests_json) THEN CASE json_type(c.task_digests_json)"
    " WHEN 'object' THEN (SELECT COUNT(*) FROM json_each(c.task_digests_json)) END END"
)
ROW_COLUMNS = (
    "status, passed, latency_s, wall_s, cost, attempts, error_type,"
    " json_extract(result_json, '$.quality'), json_extract(result_json, '$.quality_errors'),"
    " category, critical, json_extract(result_json, '$.error_stage'),"
    " json_extract(result_json, '$.error_message'), tokens, json_extract(result_json, '$.metrics')"
)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def listing(items: list[str], kind: str = "task id") -> str:
    """The first :data:`LISTED` of ``items``, each quoted as :func:`~ablation.schema.shown_name`
    names it (a task id may hold a million characters), then how many more."""
    text = ", ".join(repr(shown_name(i, kind)) for i in items[:LISTED])
    return text + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


@contextmanager
def damaged(what: str) -> Iterator[None]:
    """Raise what the block fails to decode as a :class:`StoreError` that names ``what`` (the
    store, campaign, arm and task of the value), in one line: a value no ablation wrote (a hand
    edit, another program, a damaged file) never surfaces as a bare ``KeyError``."""
    try:
        yield
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        if isinstance(exc, StoreError):
            raise
        detail = " ".join(str(exc).split()[:40])
        raise StoreError(
            f"{what} cannot be read ({type(exc).__name__}: {detail}): the store is damaged or "
            "was written by another program"
        ) from exc


class NotText(bytes):
    """A stored TEXT value that is not UTF-8 (no ablation writes one): its bytes, shown as text
    with the bytes that do not decode escaped (``\\xff``)."""

    def __str__(self) -> str:
        return self.decode("utf-8", "backslashreplace")

    def __repr__(self) -> str:
        return f"'{self}'"  # as a str's repr, the escapes written once


def lenient_text(raw: bytes) -> str | NotText:
    """A ``text_factory`` for SQLite text: the decoded text, or :class:`NotText` of the bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return NotText(raw)


def check_text(row: Sequence[Any], names: Sequence[str], what: str) -> None:
    """Raise the :func:`damaged` error of ``what`` (naming the column) when a value of ``row``
    (read with :func:`lenient_text`; ``names``: its columns) is :class:`NotText`."""
    for name, value in zip(names, row, strict=False):
        if isinstance(value, NotText):
            column = name.partition("json_extract(")[2].partition(",")[0] or name
            with damaged(what):
                raise ValueError(f"its {column} is not UTF-8 text: {value!r:.60}")


def check_status(status: str) -> None:
    if status not in CAMPAIGN_STATUSES:
        raise ConfigError(f"unknown campaign status {status!r}: use {sorted(CAMPAIGN_STATUSES)}")


class TaskDigests(Mapping[str, str]):
    """A campaign's ``task_id -> digest``, decoded from its stored JSON on first use.

    A campaign of a million tasks stores ~32 MB of digests; finding or listing campaigns does
    not need them, so the text is parsed only when a digest, an id or the count is read.
    """

    def __init__(self, text: str, where: str = "a campaign") -> None:
        self._text: str | None = text
        self._digests: dict[str, str] = {}
        self._where = where

    def _decoded(self) -> dict[str, str]:
        if self._text is not None:
            with damaged(f"{self._where}: its task digests"):
                digests = json.loads(self._text)
                if not isinstance(digests, dict):
                    raise TypeError(f"a JSON object was expected, not {type(digests).__name__}")
            self._digests, self._text = digests, None
        return self._digests

    def __getitem__(self, task_id: str) -> str:
        return self._decoded()[task_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return repr(self._decoded())


@dataclasses.dataclass(frozen=True)
class CampaignRecord:
    """One stored campaign, as read from the store.

    Attributes:
        campaign_id: The campaign's id.
        status: ``"running"``, ``"complete"``, ``"interrupted"`` or ``"aborted"``.
        config: The configuration the campaign ran with.
        suite_fingerprint: :func:`ablation.schema.suite_fingerprint` of the suite.
        task_digests: ``task_id -> digest`` (:func:`ablation.schema.task_digests`), decoded
            when first read (:class:`TaskDigests`).
        baseline_agent: Name of the baseline agent.
        candidate_agent: Name of the candidate agent.
        provenance: Free JSON-safe provenance fields (versions, labels, times, ...).
        created_at: ISO 8601 UTC creation time.
        updated_at: ISO 8601 UTC time of the last status or provenance change (an append does
            not touch it, so that an append stays one statement).
        n_trials: Number of stored trials, counted when the record was read.
    """

    campaign_id: str
    status: str
    config: CampaignConfig
    suite_fingerprint: str
    task_digests: Mapping[str, str]
    baseline_agent: str
    candidate_agent: str
    provenance: dict[str, Any]
    created_at: str
    updated_at: str
    n_trials: int

    @property
    def verdict(self) -> str | None:
        """The verdict recorded when the campaign completed (its report's, kept in its
        provenance), as ``ablation list`` and the viewer's campaign list show it; ``None`` for a
        campaign that did not complete (running, interrupted or aborted: its trials so far are
        no verdict) and for one stored before verdicts were kept."""
        return recorded_verdict(self.status, self.provenance)


def recorded_verdict(status: str, provenance: Mapping[str, Any]) -> str | None:
    """The verdict a campaign's provenance keeps (:attr:`CampaignRecord.verdict`)."""
    verdict = provenance.get("verdict") if status == "complete" else None
    return verdict if isinstance(verdict, str) else None


class TrialRow(NamedTuple):
    """A light view of one trial, read without building a :class:`TaskResult`."""

    task_id: str
    arm: str
    run: int
    status: str
    passed: bool
    latency_s: float | None
    wall_s: float | None
    cost: float | None
    attempts: int
    error_type: str | None
    quality: dict[str, float]
    quality_errors: dict[str, str]
    category: str | None
    critical: bool
    error_stage: str | None = None
    error_message: str | None = None
    tokens: int | None = None
    metrics: dict[str, float] | None = None

    @property
    def error(self) -> str | None:
        """``"Type: message"`` of the recorded error, as :attr:`TaskResult.error`."""
        if self.error_type is None:
            return None
        return f"{self.error_type}: {self.error_message}" if self.error_message else self.error_type


CHUNK = 2000  # trials per executemany in append_many


def trial_params(campaign_id: str, r: TaskResult) -> tuple[Any, ...]:
    """The INSERT parameters of a trial.

    A :class:`TaskResult` cannot hold a non-finite quality or metric value (the model refuses
    it), so its JSON always reads back.
    """
    return (
        campaign_id, r.task_id, r.arm, r.run, r.status, int(r.passed), r.latency_s, r.wall_s,
        r.attempts, r.cost, r.category, int(r.critical), r.error_type, r.model_dump_json(),
        r.tokens,
    )  # fmt: skip


def load_trial(campaign_id: str, text: str, what: str = "") -> TaskResult:
    """A stored trial; a row that no longer validates is a :class:`StoreError` naming it
    (``what``: the store, campaign, arm and task of the row, when the caller knows them)."""
    try:
        return TaskResult.model_validate_json(text)
    except ValueError as exc:
        detail = " ".join(str(exc).splitlines()[:3])
        raise StoreError(
            f"{what or f'campaign {campaign_id!r}'}: a stored trial cannot be read: {detail}"
        ) from exc


def read_header(source: Path, line: str) -> dict[str, Any]:
    """The ``campaign`` object of an export's first line, with its required keys checked."""
    try:
        data = json.loads(line) if line.strip() else None
    except ValueError as exc:
        raise InputError(f"{source}, line 1: malformed campaign header: {exc}") from None
    header = data.get("campaign") if isinstance(data, dict) else None
    if not isinstance(header, dict):
        raise InputError(
            f'{source}, line 1: expected the {{"campaign": {{...}}}} header written by export_jsonl'
        )
    required = ("status", "config", "suite_fingerprint", "task_digests", "baseline_agent",
                "candidate_agent")  # fmt: skip
    missing = [k for k in required if k not in header]
    if missing:
        raise InputError(f"{source}, line 1: the campaign header lacks {', '.join(missing)}")
    if not isinstance(header["task_digests"], dict):
        raise InputError(f"{source}, line 1: task_digests must be an object")
    return header


def decode_line(source: Path, lineno: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}, line {lineno}: not UTF-8 text ({exc.reason})") from None


def parse_trial(source: Path, lineno: int, raw: bytes) -> TaskResult:
    """One trial line, or an :class:`InputError` naming the file, line and (if known) task id."""
    line = decode_line(source, lineno, raw)
    try:
        return TaskResult.model_validate_json(line)
    except ValueError as exc:
        task = ""
        try:
            data = json.loads(line)
            if isinstance(data, dict) and "task_id" in data:
                task = f" (task {data['task_id']!r})"
        except ValueError:
            pass
        detail = " ".join(str(exc).splitlines()[:3])
        raise InputError(f"{source}, line {lineno}: malformed trial{task}: {detail}") from None
