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
the columns the analysis needs plus ``result_json`` (``TaskResult.model_dump_json()``). The primary
key's index serves every read by campaign, so no second index slows the appends.

Assumptions: one :class:`RunStore` is used by one thread at a time, possibly different threads over
its life (a lock serialises operations). Several processes may open one file; SQLite's locking and
a busy timeout arbitrate. SQLite's JSON functions are built in (SQLite >= 3.38).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ablation.config import CampaignConfig
from ablation.errors import ConfigError, InputError, ResumeMismatchError, StoreError
from ablation.schema import TaskResult, to_jsonable
from ablation.store.format import (
    CAMPAIGN_FIELDS,
    CAMPAIGN_STATUSES,
    CHUNK,
    DDL,
    INSERT_TRIAL,
    NEWEST_FIRST,
    ROW_COLUMNS,
    SCHEMA_VERSION,
    SELECT_CAMPAIGN,
    TRIAL_CONFIG_FIELDS,
    CampaignRecord,
    TrialRow,
    check_status,
    decode_line,
    listing,
    load_trial,
    now,
    parse_trial,
    read_header,
    trial_params,
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

DEFAULT_STORE_PATH = ".ablation/runs.db"
_PAGE = 2000  # rows per lock hold when streaming


class RunStore:
    """A SQLite file holding campaigns and their trials.

    Args:
        path: The database file, relative to the working directory unless absolute; parent
            directories are created. ``":memory:"`` gives a private in-memory store.

    Raises:
        StoreError: if the file cannot be opened, is not a SQLite database, or was written by a
            newer ``ablation`` (its schema version is above :data:`SCHEMA_VERSION`).
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_STORE_PATH) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        conn: sqlite3.Connection | None = None
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: autocommit, so a lone INSERT is its own committed transaction.
            conn = sqlite3.connect(
                str(path), timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._check_version(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(
                f"BEGIN IMMEDIATE;{DDL}INSERT OR IGNORE INTO meta (key, value)"
                f" VALUES ('schema_version', '{SCHEMA_VERSION}'); COMMIT;"
            )
        except (OSError, sqlite3.Error, StoreError) as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot open run store {self.path}: {exc}") from exc
        self._conn = conn

    def _check_version(self, conn: sqlite3.Connection) -> None:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            return  # a new file
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = row[0] if row else None
        if version is not None and (not str(version).isdigit() or int(version) > SCHEMA_VERSION):
            raise StoreError(
                f"run store {self.path} has schema version {version}, but this ablation supports "
                f"schema version {SCHEMA_VERSION}: upgrade ablation or use another store"
            )

    def close(self) -> None:
        """Close the connection (idempotent). Every appended trial is already committed."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    @contextmanager
    def _op(self, what: str, *, transaction: bool = False) -> Iterator[sqlite3.Connection]:
        """Hold the lock and yield the connection; SQLite errors become :class:`StoreError`.

        With ``transaction=True`` the block runs in ``BEGIN IMMEDIATE ... COMMIT`` and any
        exception rolls it back.
        """
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(f"run store {self.path} is closed (cannot {what})")
            try:
                if transaction:
                    conn.execute("BEGIN IMMEDIATE")
                yield conn
                if transaction:
                    conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"run store {self.path}: cannot {what}: {exc}") from exc
                raise

    # -- campaigns ---------------------------------------------------------------------------

    def create_campaign(
        self,
        *,
        config: CampaignConfig,
        suite_fingerprint: str,
        task_digests: Mapping[str, str],
        baseline_agent: str,
        candidate_agent: str,
        provenance: Mapping[str, Any] | None = None,
        campaign_id: str | None = None,
    ) -> str:
        """Record a new campaign with status ``"running"`` and return its id.

        Args:
            config: The campaign's configuration (a mapping is validated into one).
            suite_fingerprint: Fingerprint of the suite.
            task_digests: ``task_id -> digest`` for every task of the suite.
            baseline_agent: Name of the baseline agent.
            candidate_agent: Name of the candidate agent.
            provenance: Extra fields, converted to JSON-safe data with ``to_jsonable``.
            campaign_id: Explicit id; by default a time-sortable ``YYYYmmdd-HHMMSS-xxxxxx`` (UTC).

        Raises:
            StoreError: if ``campaign_id`` is already taken.
            ConfigError: if ``campaign_id`` is empty.
        """
        fields = {
            "status": "running", "config": config, "suite_fingerprint": suite_fingerprint,
            "task_digests": task_digests, "baseline_agent": baseline_agent,
            "candidate_agent": candidate_agent, "provenance": provenance or {},
        }  # fmt: skip
        with self._op("create a campaign", transaction=True) as conn:
            return self._insert_campaign(conn, campaign_id, fields)

    def _insert_campaign(
        self, conn: sqlite3.Connection, campaign_id: str | None, f: Mapping[str, Any]
    ) -> str:
        config = f["config"]
        if not isinstance(config, CampaignConfig):
            config = CampaignConfig.model_validate(config)
        check_status(f["status"])
        if campaign_id is not None and (
            not isinstance(campaign_id, str) or not campaign_id.strip()
        ):
            raise ConfigError(f"a campaign id must be a non-empty string, got {campaign_id!r}")
        if campaign_id is not None and self._exists(conn, campaign_id):
            raise StoreError(f"campaign {campaign_id!r} already exists in run store {self.path}")
        while campaign_id is None:
            new = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            campaign_id = None if self._exists(conn, new) else new
        stamp = now()
        digests = {str(k): str(v) for k, v in f["task_digests"].items()}
        values = (
            campaign_id, f["status"], config.model_dump_json(), str(f["suite_fingerprint"]),
            json.dumps(digests, sort_keys=True), str(f["baseline_agent"]),
            str(f["candidate_agent"]),
            json.dumps(to_jsonable(dict(f.get("provenance") or {})), sort_keys=True),
            str(f.get("created_at") or stamp),
            str(f.get("updated_at") or f.get("created_at") or stamp),
        )  # fmt: skip
        conn.execute(
            f"INSERT INTO campaigns ({', '.join(CAMPAIGN_FIELDS)}) VALUES ({', '.join('?' * 10)})",
            values,
        )
        return campaign_id

    @staticmethod
    def _exists(conn: sqlite3.Connection, campaign_id: str) -> bool:
        return (
            conn.execute("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
            is not None
        )

    def _record(self, row: tuple[Any, ...]) -> CampaignRecord:
        try:
            config = CampaignConfig.model_validate_json(row[2])
        except ValueError as exc:
            raise StoreError(
                f"campaign {row[0]!r} in {self.path}: its stored config cannot be read: {exc}"
            ) from exc
        return CampaignRecord(
            campaign_id=row[0], status=row[1], config=config, suite_fingerprint=row[3],
            task_digests=json.loads(row[4]), baseline_agent=row[5], candidate_agent=row[6],
            provenance=json.loads(row[7]), created_at=row[8], updated_at=row[9], n_trials=row[10],
        )  # fmt: skip

    def _unknown(self, conn: sqlite3.Connection, campaign_id: str) -> StoreError:
        sql = f"SELECT c.id FROM campaigns c{NEWEST_FIRST}"
        known = [r[0] for r in conn.execute(sql)]
        if not known:
            return StoreError(f"no campaign {campaign_id!r}: the run store {self.path} is empty")
        return StoreError(
            f"no campaign {campaign_id!r} in run store {self.path}; "
            f"known (newest first): {listing(known)}"
        )

    def _require(self, conn: sqlite3.Connection, campaign_id: str) -> None:
        if not self._exists(conn, campaign_id):
            raise self._unknown(conn, campaign_id)

    def get_campaign(self, campaign_id: str) -> CampaignRecord:
        """The stored campaign ``campaign_id``.

        Raises:
            StoreError: if there is no such campaign (naming it and a few known ids).
        """
        with self._op("read a campaign") as conn:
            row = conn.execute(f"{SELECT_CAMPAIGN} WHERE c.id = ?", (campaign_id,)).fetchone()
            if row is None:
                raise self._unknown(conn, campaign_id)
        return self._record(row)

    def find_campaigns(
        self,
        *,
        suite_fingerprint: str | None = None,
        baseline_agent: str | None = None,
        status: str | None = None,
    ) -> list[CampaignRecord]:
        """Campaigns matching every given filter, newest first (by creation time)."""
        wanted = {"suite_fingerprint": suite_fingerprint, "baseline_agent": baseline_agent,
                  "status": status}  # fmt: skip
        clauses = [f"c.{k} = ?" for k, v in wanted.items() if v is not None]
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        params = [v for v in wanted.values() if v is not None]
        with self._op("list campaigns") as conn:
            rows = conn.execute(f"{SELECT_CAMPAIGN}{where}{NEWEST_FIRST}", params).fetchall()
        return [self._record(r) for r in rows]

    def list_campaigns(self) -> list[CampaignRecord]:
        """Every campaign, newest first."""
        return self.find_campaigns()

    def latest_campaign(self) -> CampaignRecord | None:
        """The most recently created campaign, or ``None`` for an empty store."""
        with self._op("read the latest campaign") as conn:
            row = conn.execute(f"{SELECT_CAMPAIGN}{NEWEST_FIRST} LIMIT 1").fetchone()
        return None if row is None else self._record(row)

    def set_status(self, campaign_id: str, status: str) -> None:
        """Set a campaign's status (``running``, ``complete``, ``interrupted`` or ``aborted``).

        Raises:
            ConfigError: for an unknown status.
            StoreError: for an unknown campaign.
        """
        check_status(status)
        with self._op("set a campaign status") as conn:
            sql = "UPDATE campaigns SET status = ?, updated_at = ? WHERE id = ?"
            if conn.execute(sql, (status, now(), campaign_id)).rowcount == 0:
                raise self._unknown(conn, campaign_id)

    def update_provenance(self, campaign_id: str, **fields: Any) -> None:
        """Merge ``fields`` (converted to JSON-safe data) into a campaign's provenance.

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op("update provenance", transaction=True) as conn:
            sql = "SELECT provenance_json FROM campaigns WHERE id = ?"
            row = conn.execute(sql, (campaign_id,)).fetchone()
            if row is None:
                raise self._unknown(conn, campaign_id)
            provenance = {**json.loads(row[0]), **to_jsonable(fields)}
            conn.execute(
                "UPDATE campaigns SET provenance_json = ?, updated_at = ? WHERE id = ?",
                (json.dumps(provenance, sort_keys=True), now(), campaign_id),
            )

    # -- trials ------------------------------------------------------------------------------

    def _integrity_error(
        self, conn: sqlite3.Connection, exc: sqlite3.IntegrityError, campaign_id: str, r: TaskResult
    ) -> StoreError:
        if "FOREIGN KEY" in str(exc).upper():
            return self._unknown(conn, campaign_id)
        return StoreError(
            f"duplicate trial in campaign {campaign_id!r}: (task_id={r.task_id!r}, "
            f"arm={r.arm!r}, run={r.run}) is already stored"
        )

    def append(self, campaign_id: str, result: TaskResult) -> None:
        """Store one trial as its own committed transaction (one INSERT, no read before it).

        Raises:
            StoreError: if the campaign is unknown, or ``(task_id, arm, run)`` is already stored
                for it (naming the key); nothing is written then.
        """
        params = trial_params(campaign_id, result)
        with self._lock:  # inlined (no _op) to keep the hot path short
            conn = self._conn
            if conn is None:
                raise StoreError(f"run store {self.path} is closed (cannot append a trial)")
            try:
                conn.execute(INSERT_TRIAL, params)
            except sqlite3.IntegrityError as exc:
                raise self._integrity_error(conn, exc, campaign_id, result) from None
            except sqlite3.Error as exc:
                raise StoreError(f"run store {self.path}: cannot append a trial: {exc}") from exc

    def append_many(self, campaign_id: str, results: Iterable[TaskResult]) -> int:
        """Store several trials in one transaction (all or nothing); return how many.

        ``results`` is consumed while the store is locked: it must not use this store.

        Raises:
            StoreError: as :meth:`append`; on any error nothing of this call is kept.
        """
        n = 0
        rows = iter(results)
        with self._op("append trials", transaction=True) as conn:
            self._require(conn, campaign_id)
            while chunk := list(itertools.islice(rows, CHUNK)):  # bounded memory for big imports
                conn.execute("SAVEPOINT chunk")
                try:
                    conn.executemany(INSERT_TRIAL, [trial_params(campaign_id, r) for r in chunk])
                except sqlite3.IntegrityError:
                    # Replay row by row to name the offending trial; the whole call rolls back.
                    conn.execute("ROLLBACK TO SAVEPOINT chunk")
                    for result in chunk:
                        try:
                            conn.execute(INSERT_TRIAL, trial_params(campaign_id, result))
                        except sqlite3.IntegrityError as exc:
                            raise self._integrity_error(conn, exc, campaign_id, result) from None
                    raise
                conn.execute("RELEASE SAVEPOINT chunk")
                n += len(chunk)
        return n

    def _pages(
        self, columns: str, campaign_id: str, arm: str | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """A campaign's rows in ``(task_id, arm, run)`` order, one page per lock hold.

        Keyset pagination on the primary key: no statement stays open between pages, so memory
        is bounded and the consumer may append to the store while iterating.
        """
        arm_sql, head = (
            ("", (campaign_id,)) if arm is None else (" AND arm = ?", (campaign_id, arm))
        )
        sql = (
            f"SELECT task_id, arm, run, {columns} FROM trials WHERE campaign_id = ?{arm_sql}"
            " AND (task_id, arm, run) > (?, ?, ?) ORDER BY task_id, arm, run LIMIT ?"
        )
        last: tuple[Any, ...] = ("", "", -1)
        with self._op("read trials") as conn:
            self._require(conn, campaign_id)
        while True:
            with self._op("read trials") as conn:
                rows = conn.execute(sql, (*head, *last, _PAGE)).fetchall()
            if rows:
                yield rows
            if len(rows) < _PAGE:
                return
            last = rows[-1][:3]

    def iter_results(self, campaign_id: str, *, arm: str | None = None) -> Iterator[TaskResult]:
        """Stream a campaign's trials (optionally one arm) in ``(task_id, arm, run)`` order.

        Memory stays bounded by one page of rows, whatever the campaign's size.
        """
        for page in self._pages("result_json", campaign_id, arm):
            for row in page:
                yield load_trial(campaign_id, row[-1])

    def results(
        self,
        campaign_id: str,
        *,
        arm: str | None = None,
        task_ids: Collection[str] | None = None,
    ) -> list[TaskResult]:
        """A campaign's trials in ``(task_id, arm, run)`` order, optionally filtered.

        ``task_ids`` given as one string means that single id.

        Raises:
            StoreError: for an unknown campaign.
        """
        if task_ids is None:
            return list(self.iter_results(campaign_id, arm=arm))
        sql = (
            "SELECT result_json FROM trials WHERE campaign_id = ? AND (? IS NULL OR arm = ?)"
            " AND task_id IN (SELECT value FROM json_each(?)) ORDER BY task_id, arm, run"
        )
        ids = json.dumps([task_ids] if isinstance(task_ids, str) else sorted(set(task_ids)))
        with self._op("read trials") as conn:
            self._require(conn, campaign_id)
            rows = conn.execute(sql, (campaign_id, arm, arm, ids)).fetchall()
        return [load_trial(campaign_id, r[0]) for r in rows]

    def trial_rows(self, campaign_id: str) -> Iterator[TrialRow]:
        """Stream light :class:`TrialRow` tuples in ``(task_id, arm, run)`` order.

        Only the two quality dictionaries are taken from ``result_json`` (by SQLite's
        ``json_extract``), so no :class:`TaskResult` is built and memory stays bounded.
        """
        loads = json.loads
        for page in self._pages(ROW_COLUMNS, campaign_id):
            for r in page:
                yield TrialRow(
                    r[0], r[1], r[2], r[3], bool(r[4]), r[5], r[6], r[7], r[8], r[9],
                    {} if r[10] in (None, "{}") else loads(r[10]),
                    {} if r[11] in (None, "{}") else loads(r[11]),
                    r[12], bool(r[13]), r[14], r[15],
                )  # fmt: skip

    def completed_keys(self, campaign_id: str) -> set[tuple[str, str, int]]:
        """``(task_id, arm, run)`` of every stored trial of a campaign: what a resume skips.

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op("read trial keys") as conn:
            self._require(conn, campaign_id)
            sql = "SELECT task_id, arm, run FROM trials WHERE campaign_id = ?"
            return set(conn.execute(sql, (campaign_id,)).fetchall())

    def count(self, campaign_id: str, *, arm: str | None = None) -> int:
        """Number of stored trials of a campaign (optionally of one arm).

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op("count trials") as conn:
            self._require(conn, campaign_id)
            sql = "SELECT COUNT(*) FROM trials WHERE campaign_id = ? AND (? IS NULL OR arm = ?)"
            return int(conn.execute(sql, (campaign_id, arm, arm)).fetchone()[0])

    # -- resume ------------------------------------------------------------------------------

    def check_resume(
        self,
        campaign_id: str,
        *,
        suite_fingerprint: str,
        task_digests: Mapping[str, str],
        baseline_agent: str,
        candidate_agent: str,
        config: CampaignConfig,
    ) -> None:
        """Refuse to resume a campaign whose stored trials would not match the new ones.

        Compared: the tasks (ids and digests), both agent names, the suite fingerprint (which also
        covers the quality scorers) and the config fields that change trials
        (:data:`TRIAL_CONFIG_FIELDS`). Cosmetic fields (concurrency, labels, alpha, ...) may differ.

        Raises:
            ResumeMismatchError: naming every difference: task ids added, removed or changed, old
                and new agent names, old and new config values.
            StoreError: for an unknown campaign.
        """
        with self._op("read a campaign") as conn:
            row = conn.execute(
                "SELECT suite_fingerprint, task_digests_json, baseline_agent, candidate_agent,"
                " config_json FROM campaigns WHERE id = ?",
                (campaign_id,),
            ).fetchone()
            if row is None:
                raise self._unknown(conn, campaign_id)
        old_digests, old_config = json.loads(row[1]), json.loads(row[4])
        added = sorted(set(task_digests) - set(old_digests))
        removed = sorted(set(old_digests) - set(task_digests))
        changed = sorted(t for t in set(old_digests) & set(task_digests)
                         if old_digests[t] != task_digests[t])  # fmt: skip
        problems = [
            f"{'task' if len(ids) == 1 else 'tasks'} {listing(ids)} {what}"
            for ids, what in (
                (changed, "changed (input, expected output or verifier)"),
                (added, "added"),
                (removed, "removed"),
            )
            if ids
        ]
        if not problems and row[0] != suite_fingerprint:
            problems.append(
                f"suite fingerprint changed ({row[0][:12]} -> {suite_fingerprint[:12]}) with the "
                "same tasks: the quality scorers differ"
            )
        for arm, old, new in (
            ("baseline", row[2], baseline_agent),
            ("candidate", row[3], candidate_agent),
        ):
            if old != new:
                problems.append(f"{arm} agent changed: {old!r} -> {new!r}")
        new_config = json.loads(config.model_dump_json())
        for name in TRIAL_CONFIG_FIELDS:
            old, new = old_config.get(name), new_config.get(name)
            if old != new:
                problems.append(f"config.{name} changed: {json.dumps(old)} -> {json.dumps(new)}")
        if problems:
            raise ResumeMismatchError(
                f"cannot resume campaign {campaign_id!r}: {'; '.join(problems)}; "
                "start a new campaign instead"
            )

    # -- export / import ---------------------------------------------------------------------

    def export_jsonl(self, campaign_id: str, path: str | os.PathLike[str]) -> int:
        """Write a campaign as JSONL: a ``{"campaign": {...}}`` header, then one trial per line.

        The file is written beside its destination and renamed into place, so a failed export
        leaves no half-written file. Returns the number of trials written.

        Raises:
            StoreError: for an unknown campaign or an unwritable path.
        """
        rec = self.get_campaign(campaign_id)
        header = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec)}
        header.update(
            config=json.loads(rec.config.model_dump_json()), schema_version=SCHEMA_VERSION
        )
        target = Path(path)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        n = 0
        try:
            with tmp.open("w", encoding="utf-8", newline="\n") as fh:
                fh.write(json.dumps({"campaign": header}, sort_keys=True) + "\n")
                for page in self._pages("result_json", campaign_id):
                    fh.writelines(row[3] + "\n" for row in page)
                    n += len(page)
            os.replace(tmp, target)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise StoreError(
                    f"cannot export campaign {campaign_id!r} to {target}: {exc}"
                ) from exc
            raise
        return n

    def import_jsonl(self, path: str | os.PathLike[str]) -> str:
        """Create a campaign from a file written by :meth:`export_jsonl`; return its id.

        The original id is kept when it is free in this store, else a new one is made; status,
        provenance and timestamps are kept. The import is one transaction: a bad file leaves the
        store unchanged. Blank lines are skipped.

        Raises:
            InputError: naming the file and line of a malformed header or trial or a duplicate
                trial, or naming the file when its trial count differs from its header's.
            StoreError: if the file cannot be read.
        """
        source = Path(path)
        try:
            fh = source.open("rb")  # bytes: each line is decoded alone, for exact line numbers
        except OSError as exc:
            raise StoreError(f"cannot read {source}: {exc}") from exc
        with fh, self._op("import a campaign", transaction=True) as conn:
            header = read_header(source, decode_line(source, 1, fh.readline()))
            wanted = header.get("campaign_id")
            free = (
                isinstance(wanted, str) and bool(wanted.strip()) and not self._exists(conn, wanted)
            )
            try:
                campaign_id = self._insert_campaign(conn, wanted if free else None, header)
            except (ValueError, TypeError, AttributeError) as exc:
                raise InputError(f"{source}, line 1: invalid campaign header: {exc}") from None
            n = 0
            for lineno, raw in enumerate(fh, start=2):
                if not raw.strip():
                    continue
                result = parse_trial(source, lineno, raw)
                try:
                    conn.execute(INSERT_TRIAL, trial_params(campaign_id, result))
                except sqlite3.IntegrityError:
                    raise InputError(
                        f"{source}, line {lineno}: duplicate trial (task_id={result.task_id!r}, "
                        f"arm={result.arm!r}, run={result.run})"
                    ) from None
                n += 1
            declared = header.get("n_trials")
            if isinstance(declared, int) and declared != n:
                raise InputError(
                    f"{source}: the header declares {declared} trials but the file holds {n} "
                    "(truncated or edited?)"
                )
        return campaign_id
