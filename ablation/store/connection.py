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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from ablation.errors import StoreError
from ablation.store.format import DDL, MIGRATIONS, NEWEST_FIRST, SCHEMA_VERSION, listing

__all__ = ["DEFAULT_STORE_PATH", "StoreConnection"]

DEFAULT_STORE_PATH = ".ablation/runs.db"


class StoreConnection:
    """The open SQLite connection of a run store, its lock, and the shared campaign lookups.

    Args:
        path: The database file, relative to the working directory unless absolute; parent
            directories are created. ``":memory:"`` gives a private in-memory store.
        read_only: Open an existing file read-only (``mode=ro``; ``immutable=1`` when even the
            WAL index cannot be written, e.g. a read-only directory): for reports and exports,
            which must work on a store the user may only read. Writes then fail with
            :class:`StoreError`.

    Raises:
        StoreError: if the file cannot be opened, is not a SQLite database, or was written by a
            newer ``ablation`` (its schema version is above :data:`SCHEMA_VERSION`).
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
            if str(path) == ":memory:":  # in memory only: no temporary file for big sorts either
                conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(
                f"BEGIN IMMEDIATE;{_migrations(version)}{DDL}INSERT OR IGNORE INTO meta (key, value)"
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
        uri = self.path.resolve().as_uri()
        last: Exception | None = None
        for query in ("mode=ro", "mode=ro&immutable=1"):
            conn = None
            try:
                conn = sqlite3.connect(
                    f"{uri}?{query}", uri=True, timeout=30.0, isolation_level=None,
                    check_same_thread=False,
                )
                self.schema_version = self._check_version(conn) or SCHEMA_VERSION
                conn.execute("SELECT count(*) FROM campaigns").fetchone()
                return conn
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                last = exc
        raise StoreError(f"cannot open run store {self.path} read-only: {last}")

    def _check_version(self, conn: sqlite3.Connection) -> int | None:
        """The store's schema version (``None`` for a new file); a newer one is an error."""
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            return None  # a new file
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = row[0] if row else None
        if version is not None and (not str(version).isdigit() or int(version) > SCHEMA_VERSION):
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

    # -- campaign lookups shared by every part -----------------------------------------------

    @staticmethod
    def _exists(conn: sqlite3.Connection, campaign_id: str) -> bool:
        return (
            conn.execute("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
            is not None
        )

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


def _migrations(version: int | None) -> str:
    """The SQL that upgrades a store of ``version`` to :data:`SCHEMA_VERSION` (``""`` if current)."""
    if version is None or version >= SCHEMA_VERSION:
        return ""
    steps = "".join(MIGRATIONS[v] for v in range(version, SCHEMA_VERSION))
    return f"{steps} UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version';"

