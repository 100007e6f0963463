"""The run store's connection: opening the file, the schema-version check and locked operations.

:class:`StoreConnection` owns the SQLite connection of a :class:`~ablation.store.run_store.RunStore`
and the lock that serialises its use: it opens the file (WAL, ``synchronous=NORMAL``, foreign
keys on), creates the tables, refuses a file written by a newer ``ablation``, and closes. Every
operation of the other parts runs through :meth:`StoreConnection._op`, which holds the lock, wraps
transactions and turns SQLite errors into :class:`~ablation.errors.StoreError`. It also owns the
campaign lookups every part shares: does a campaign exist, and the error naming an unknown one.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from ablation.errors import StoreError
from ablation.store.format import (
    DDL,
    MIGRATIONS,
    NEWEST_FIRST,
    REDEFINED_TRIGGERS,
    SCHEMA_VERSION,
    check_text,
    damaged,
    lenient_text,
    listing,
)

__all__ = ["DEFAULT_STORE_PATH", "READ_ONLY_LOCK_WAIT_S", "StoreConnection"]

#: SQL a read-only open of a store of version ``v`` runs on its own connection (it may not
#: migrate the file), so that reads see the columns migration ``v``
#: (:data:`~ablation.store.format.MIGRATIONS`) adds, with the values it would write: 1 -> 2: a
#: temporary view ``trials`` (which shadows the table on this connection only) with the
#: ``tokens`` column, read from the stored results as migration 1 fills it.
READ_ONLY_VIEWS: dict[int, str] = {
    1: "CREATE TEMP VIEW trials AS SELECT *, json_extract(result_json, '$.tokens') AS tokens"
    " FROM main.trials;",
}

DEFAULT_STORE_PATH = ".ablation/runs.db"

#: How long a read-only open waits for a lock another process holds on the store (seconds) before
#: it fails with :class:`StoreError`. It waits in steps of :data:`_LOCK_STEP_S` inside SQLite
#: and :data:`_LOCK_PAUSE_S` in Python, so a Ctrl-C during the wait ends the command at once.
READ_ONLY_LOCK_WAIT_S = 30.0
_LOCK_STEP_S = 0.1
_LOCK_PAUSE_S = 0.05

# SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode`` is the extended code: the
# primary one is its low byte) and the extended codes of a WAL index that cannot be created.
_SQLITE_BUSY = 5
_SQLITE_READONLY = 8
_SQLITE_CANTOPEN = 14
_SQLITE_IOERR_SHM = frozenset({4618, 4874, 5386})  # SQLITE_IOERR_SHMOPEN, _SHMSIZE, _SHMMAP
#: How :mod:`sqlite3` words a TEXT value that is not UTF-8 (an ``OperationalError`` that ends the
#: whole query, whichever row holds the value).
_NOT_UTF8 = "Could not decode to UTF-8"
#: The first trial of a campaign (and arm) whose JSON does not parse.
_NOT_JSON = (
    "SELECT task_id, arm, run FROM trials WHERE campaign_id = ? AND (? IS NULL OR arm = ?)"
    " AND NOT json_valid(result_json) ORDER BY task_id, arm, run LIMIT 1"
)


class StoreConnection:
    """The open SQLite connection of a run store, its lock, and the shared campaign lookups.

    Args:
        path: The database file, relative to the working directory unless absolute; parent
            directories are created. ``":memory:"`` gives a private in-memory store.
        read_only: Open an existing file read-only (``mode=ro``; ``immutable=1`` when even the
            WAL index cannot be written, e.g. a read-only directory, never when the store is
            locked): for reports and exports, which must work on a store the user may only
            read. A lock another process holds is waited for, up to
            :data:`READ_ONLY_LOCK_WAIT_S`, in short steps a Ctrl-C ends. Writes then fail with
            :class:`StoreError`.

    Raises:
        StoreError: if the path is a directory, the file cannot be opened, is not a SQLite
            database (or, opened to write, one with tables but no ablation schema version), was
            written by a newer ``ablation`` (its schema version is above
            :data:`SCHEMA_VERSION`), or (read only) stays locked by another process for longer
            than :data:`READ_ONLY_LOCK_WAIT_S`.
    """

    def __init__(
        self, path: str | os.PathLike[str] = DEFAULT_STORE_PATH, *, read_only: bool = False
    ) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.read_only = read_only
        self.migrated_from: int | None = None
        #: The file's schema version as opened (a read-only open does not migrate).
        self.schema_version = SCHEMA_VERSION
        if str(path) != ":memory:" and self.path.is_dir():  # every open, read-only or not
            raise StoreError(f"{self.path} is a directory, not a run store file")
        if read_only:
            self._conn = self._open_read_only()
            return
        conn: sqlite3.Connection | None = None
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: autocommit, so a lone INSERT is its own committed transaction.
            conn = sqlite3.connect(
                str(path), timeout=30.0, isolation_level=None, check_same_thread=False
            )
            version = self._check_version(conn)
            if version is None and conn.execute("SELECT 1 FROM sqlite_master").fetchone():
                raise StoreError(  # tables and no schema version: not a store ablation wrote
                    f"{self.path} is a SQLite database of another program, not a run store: "
                    "pass another --store"
                )
            if str(path) == ":memory:":  # in memory only: no temporary file for big sorts either
                conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(
                f"BEGIN IMMEDIATE;{_migrations(version)}{_redefined(conn)}{DDL}INSERT OR IGNORE INTO meta (key, value)"
                f" VALUES ('schema_version', '{SCHEMA_VERSION}'); COMMIT;"
            )
        except (OSError, sqlite3.Error, StoreError) as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot open run store {self.path}: {exc}") from exc
        self._conn = conn
        #: The schema version the open migrated from (``None``: none was needed).
        self.migrated_from = version if version is not None and version < SCHEMA_VERSION else None

    def _open_read_only(self) -> sqlite3.Connection:
        """Open with ``mode=ro``, waiting for another process's lock in short steps; fall back
        to ``immutable=1`` only when SQLite cannot open or create the WAL index or lock files
        (a read-only directory or file system), never for a lock: ``immutable`` ignores the WAL
        and the locks, so it would read stale data for as long as the store stays open.

        Raises:
            StoreError: if the file cannot be opened, or another process keeps it locked for
                longer than :data:`READ_ONLY_LOCK_WAIT_S`.
        """
        uri = self.path.resolve().as_uri()
        deadline = time.monotonic() + READ_ONLY_LOCK_WAIT_S
        while True:
            try:
                conn = self._try_open(f"{uri}?mode=ro")
            except sqlite3.Error as exc:
                code = getattr(exc, "sqlite_errorcode", None) or 0
                if code & 0xFF == _SQLITE_BUSY:  # locked: wait, a Ctrl-C between tries ends it
                    if time.monotonic() >= deadline:
                        raise StoreError(
                            f"run store {self.path} is locked by another process (waited "
                            f"{READ_ONLY_LOCK_WAIT_S:g} s): try again when it is released"
                        ) from exc
                    time.sleep(_LOCK_PAUSE_S)
                    continue
                if code & 0xFF not in (_SQLITE_CANTOPEN, _SQLITE_READONLY) and (
                    code not in _SQLITE_IOERR_SHM
                ):
                    raise StoreError(f"cannot open run store {self.path} read-only: {exc}") from exc
                break  # no WAL index here: read the file as it is
            # later reads wait for a lock as long as the open may (a WAL reader rarely meets one)
            conn.execute(f"PRAGMA busy_timeout = {int(READ_ONLY_LOCK_WAIT_S * 1000)}")
            return conn
        try:
            return self._try_open(f"{uri}?mode=ro&immutable=1")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open run store {self.path} read-only: {exc}") from exc

    def _try_open(self, uri: str) -> sqlite3.Connection:
        """One read-only open of ``uri`` (SQLite waits :data:`_LOCK_STEP_S` for a lock)."""
        conn = sqlite3.connect(
            uri, uri=True, timeout=_LOCK_STEP_S, isolation_level=None, check_same_thread=False
        )
        try:
            self.schema_version = self._check_version(conn) or SCHEMA_VERSION
            conn.executescript("".join(
                READ_ONLY_VIEWS.get(v, "") for v in range(self.schema_version, SCHEMA_VERSION)
            ))  # an older file, not migrated: its reads see the columns it lacks  # fmt: skip
            conn.execute("SELECT count(*) FROM campaigns").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_version(self, conn: sqlite3.Connection) -> int | None:
        """The store's schema version (``None`` for a new file); a newer one, or one that is not
        a whole number in ASCII digits, is an error."""
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            return None  # a new file
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = row[0] if row else None
        # ASCII digits only: "²" is a digit to isdigit() but int() refuses it
        whole = str(version).isascii() and str(version).isdigit()
        if version is not None and (not whole or int(version) > SCHEMA_VERSION):
            raise StoreError(
                f"run store {self.path} has schema version {version}, but this ablation supports "
                f"schema version {SCHEMA_VERSION}: upgrade ablation or use another store"
            )
        return None if version is None else int(version)

    def close(self) -> None:
        """Close the connection (idempotent). Every appended trial is already committed."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"  # the only class composed from these parts

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

    @staticmethod
    def _rows(
        conn: sqlite3.Connection, sql: str, params: Sequence[Any] = (),
        where: Callable[[Sequence[Any]], str] | None = None,
    ) -> list[tuple[Any, ...]]:
        """``conn.execute(sql, params).fetchall()``, through a TEXT value that is not UTF-8.

        :mod:`sqlite3` refuses such a value (no ablation writes one: a hand edit, another
        program, a damaged file) with an error that ends the whole query, so one bad row would
        hide every other. Only then is the query run again with :func:`lenient_text`, which
        reads such a value as its :class:`~ablation.store.format.NotText` bytes: without
        ``where`` the rows are returned for the caller to check row by row; with it (naming the
        store, campaign, arm and task of a row) the first row holding one is the
        :func:`~ablation.store.format.damaged` :class:`StoreError` naming the column. The caller
        holds the connection's lock (:meth:`_op`), so the factory is this query's alone.
        """
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if not str(exc).startswith(_NOT_UTF8):
                raise
        conn.text_factory = lenient_text
        try:
            cursor = conn.execute(sql, params)
            rows = cursor.fetchall()
        finally:
            conn.text_factory = str
        if where is not None:
            names = [d[0] for d in cursor.description]
            for row in rows:
                check_text(row, names, where(row))
        return rows

    def _trial_named(self, campaign_id: str, task_id: object, arm: object, run: object) -> str:
        """A trial as a store error names it: the store, campaign, arm, task and run."""
        return (
            f"run store {self.path}: campaign {campaign_id!r}: the {arm} trial of task "
            f"{task_id!r} (run {run!r})"
        )

    def _name_not_json(
        self, conn: sqlite3.Connection, exc: sqlite3.OperationalError, campaign_id: str,
        arm: str | None,
    ) -> None:
        """For SQLite's "malformed JSON" (read by ``json_extract``: a trial's ``result_json``
        no ablation wrote), raise the :func:`~ablation.store.format.damaged` error naming the
        first such trial of the campaign (of ``arm``, unless ``None``); else return, and the
        caller raises ``exc``."""
        if "malformed JSON" not in str(exc):
            return
        rows = self._rows(conn, _NOT_JSON, (campaign_id, arm, arm))
        if rows:
            with damaged(self._trial_named(campaign_id, *rows[0])):
                raise ValueError("its result_json is not JSON") from None

    # -- campaign lookups shared by every part -----------------------------------------------

    @staticmethod
    def _exists(conn: sqlite3.Connection, campaign_id: str) -> bool:
        return (
            conn.execute("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
            is not None
        )

    def _unknown(self, conn: sqlite3.Connection, campaign_id: str) -> StoreError:
        sql = f"SELECT c.id FROM campaigns c{NEWEST_FIRST}"
        known = [str(r[0]) for r in self._rows(conn, sql)]
        if not known:
            return StoreError(f"no campaign {campaign_id!r}: the run store {self.path} is empty")
        return StoreError(
            f"no campaign {campaign_id!r} in run store {self.path}; "
            f"known (newest first): {listing(known, 'campaign id')}"
        )

    def _require(self, conn: sqlite3.Connection, campaign_id: str) -> None:
        if not self._exists(conn, campaign_id):
            raise self._unknown(conn, campaign_id)


def _redefined(conn: sqlite3.Connection) -> str:
    """The SQL that drops the triggers of :data:`~ablation.store.format.REDEFINED_TRIGGERS`
    stored with an older definition, for :data:`~ablation.store.format.DDL` to create anew
    (``IF EXISTS``: another process may have replaced one meanwhile)."""
    sql = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'trials'"
    stored = dict(conn.execute(sql).fetchall())
    return "".join(
        f"DROP TRIGGER IF EXISTS {name};"
        for name, fragment in REDEFINED_TRIGGERS.items()
        if name in stored and fragment not in str(stored[name])
    )


def _migrations(version: int | None) -> str:
    """The SQL that upgrades a store of ``version`` to :data:`SCHEMA_VERSION` (``""`` if current)."""
    if version is None or version >= SCHEMA_VERSION:
        return ""
    steps = "".join(MIGRATIONS[v] for v in range(version, SCHEMA_VERSION))
    return f"{steps} UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version';"

