"""Campaign records of the run store: create, read, find and update campaigns.

:class:`CampaignStore` owns the ``campaigns`` table: inserting a campaign (choosing a free
time-sortable id when none is given), turning rows into
:class:`~ablation.store.format.CampaignRecord`, the listings (by filter, all, latest, one family),
and the updates a campaign receives over its life (its status, its provenance and the
:class:`CampaignFamily` of a several-candidate run, kept in its provenance).
"""

from __future__ import annotations

import itertools
import json
import secrets
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ablation.config import CampaignConfig
from ablation.errors import ConfigError, StoreError
from ablation.schema import TaskResult, to_jsonable
from ablation.store.connection import StoreConnection
from ablation.store.format import (
    CAMPAIGN_FIELDS,
    CAMPAIGN_STATUSES,
    CHUNK,
    INSERT_TRIAL,
    NEWEST_FIRST,
    SCHEMA_VERSION,
    SELECT_CAMPAIGN,
    SELECT_CAMPAIGN_ROWS,
    TASK_COUNT,
    CampaignRecord,
    TaskDigests,
    check_status,
    check_text,
    damaged,
    now,
    trial_params,
)

__all__ = ["FAMILY_KEY", "CampaignFamily", "CampaignStore", "campaign_family", "new_campaign_id"]

#: The provenance key of a campaign's :class:`CampaignFamily`.
FAMILY_KEY = "candidate_family"


class CampaignFamily(BaseModel):
    """The campaigns of one ``run`` of several candidates against one baseline.

    Attributes:
        family_id: The id shared by the family's campaigns (its first campaign's id).
        size: How many candidates the run was started with; a candidate whose campaign was never
            created (the run was interrupted first) is a member without a campaign.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    family_id: str = Field(min_length=1)
    size: int = Field(ge=1, strict=True)


def campaign_family(record: CampaignRecord) -> CampaignFamily | None:
    """The family ``record`` belongs to (:meth:`CampaignStore.join_family`), or ``None`` for a
    campaign of a one-candidate run and one stored before families were kept.

    Raises:
        StoreError: the stored family cannot be read (a store no ablation wrote).
    """
    return _family_in(record.provenance, record.campaign_id)


def _family_in(provenance: Mapping[str, Any], campaign_id: str) -> CampaignFamily | None:
    found = provenance.get(FAMILY_KEY)
    if found is None:
        return None
    try:
        return CampaignFamily.model_validate(found)
    except ValidationError as exc:
        raise StoreError(
            f"campaign {campaign_id!r}: its stored {FAMILY_KEY} cannot be read "
            f"({exc.errors()[0]['msg']}): the store is damaged or was written by another program"
        ) from None



def new_campaign_id() -> str:
    """A new time-sortable campaign id, ``YYYYmmdd-HHMMSS-xxxxxx`` (UTC and 24 random bits)."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"

class CampaignStore(StoreConnection):
    """The campaign operations of :class:`~ablation.store.run_store.RunStore`."""

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
        agent_fingerprints: Mapping[str, str] | None = None,
        trials: Iterable[TaskResult] = (),
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
            agent_fingerprints: ``arm -> fingerprint`` of each agent's code
                (:func:`ablation.agents.fingerprint.agent_fingerprint`), checked on resume.
            trials: Trials the campaign starts with (a reused baseline), written in the same
                transaction: a campaign is never stored without them. Consumed while the store
                is locked: it must not use this store.

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
            new_id = self._insert_campaign(conn, campaign_id, fields)
            if agent_fingerprints is not None:
                conn.execute(
                    "UPDATE campaigns SET agent_fingerprints_json = ? WHERE id = ?",
                    (json.dumps(dict(agent_fingerprints), sort_keys=True), new_id),
                )
            rows = iter(trials)
            while chunk := list(itertools.islice(rows, CHUNK)):  # bounded memory
                conn.executemany(INSERT_TRIAL, [trial_params(new_id, r) for r in chunk])
            return new_id

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
            new = new_campaign_id()
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

    @property
    def _select_campaign(self) -> str:
        return SELECT_CAMPAIGN if self.schema_version >= SCHEMA_VERSION else SELECT_CAMPAIGN_ROWS

    def _campaign_rows(
        self, conn: sqlite3.Connection, tail: str, params: Sequence[Any] = (), *,
        counted: bool = False,
    ) -> list[tuple[Any, ...]]:
        """Campaign rows (:meth:`_select_campaign` then ``tail``) with their trial counts, kept
        by the ``trial_counts`` triggers; when that table cannot be read (a damaged file), counted
        from the trial rows, the store's source of truth, so that the campaigns are still listed
        (each one's own reads then say what is damaged). ``counted``: the task digests' column
        holds their count instead (:data:`~ablation.store.format.TASK_COUNT`)."""
        selects = [self._select_campaign, SELECT_CAMPAIGN_ROWS]
        if counted:
            selects = [q.replace("c.task_digests_json", TASK_COUNT, 1) for q in selects]
        try:
            return self._rows(conn, f"{selects[0]}{tail}", params)
        except sqlite3.DatabaseError:
            if selects[0] == selects[1]:
                raise
            return self._rows(conn, f"{selects[1]}{tail}", params)

    def _checked(self, row: tuple[Any, ...]) -> tuple[CampaignConfig, dict[str, Any]]:
        """A campaign row's config and provenance, its other values checked (not its digests).

        Raises:
            StoreError: a value that does not decode, naming the store and campaign.
        """
        where = f"run store {self.path}: campaign {row[0]!r}"
        check_text(row, CAMPAIGN_FIELDS, where)  # read by ``_rows``: text that is not UTF-8
        try:
            config = CampaignConfig.model_validate_json(row[2])
        except ValueError as exc:
            raise StoreError(
                f"campaign {row[0]!r} in {self.path}: its stored config cannot be read: {exc}"
            ) from exc
        with damaged(where):
            if row[1] not in CAMPAIGN_STATUSES:
                raise ValueError(f"unknown status {row[1]!r}")
            if not all(isinstance(row[i], str) for i in (3, 5, 6, 8, 9)):
                raise TypeError("a text column holds another type")
            provenance = json.loads(row[7])
            if not isinstance(provenance, dict):
                raise TypeError(f"its provenance is not a JSON object: {row[7]!r:.40}")
        return config, provenance

    def _record(self, row: tuple[Any, ...]) -> CampaignRecord:
        config, provenance = self._checked(row)
        where = f"run store {self.path}: campaign {row[0]!r}"
        return CampaignRecord(
            campaign_id=row[0], status=row[1], config=config, suite_fingerprint=row[3],
            task_digests=TaskDigests(row[4], where), baseline_agent=row[5], candidate_agent=row[6],
            provenance=provenance, created_at=row[8], updated_at=row[9], n_trials=row[10],
        )  # fmt: skip

    def get_campaign(self, campaign_id: str) -> CampaignRecord:
        """The stored campaign ``campaign_id``.

        Raises:
            StoreError: if there is no such campaign (naming it and a few known ids).
        """
        with self._op(f"read campaign {campaign_id!r}") as conn:
            rows = self._campaign_rows(conn, " WHERE c.id = ?", (campaign_id,))
            if not rows:
                raise self._unknown(conn, campaign_id)
        return self._record(rows[0])

    def find_campaigns(
        self,
        *,
        suite_fingerprint: str | None = None,
        baseline_agent: str | None = None,
        status: str | None = None,
        damaged: list[StoreError] | None = None,
    ) -> list[CampaignRecord]:
        """Campaigns matching every given filter, newest first (by creation time).

        ``damaged``: a list that receives the error of each campaign whose row does not decode
        (:func:`~ablation.store.format.damaged`), which is then left out; without it, the first
        such campaign raises its :class:`~ablation.errors.StoreError`.
        """
        wanted = {"suite_fingerprint": suite_fingerprint, "baseline_agent": baseline_agent,
                  "status": status}  # fmt: skip
        clauses = [f"c.{k} = ?" for k, v in wanted.items() if v is not None]
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        params = [v for v in wanted.values() if v is not None]
        with self._op("list campaigns") as conn:
            rows = self._campaign_rows(conn, f"{where}{NEWEST_FIRST}", params)
        if damaged is None:
            return [self._record(r) for r in rows]
        records = []
        for row in rows:
            try:
                records.append(self._record(row))
            except StoreError as exc:
                damaged.append(exc)
        return records

    def list_campaigns(self, damaged: list[StoreError] | None = None) -> list[CampaignRecord]:
        """Every campaign, newest first (``damaged``: see :meth:`find_campaigns`)."""
        return self.find_campaigns(damaged=damaged)

    def latest_campaign(self) -> CampaignRecord | None:
        """The most recently created campaign, or ``None`` for an empty store."""
        with self._op("read the latest campaign") as conn:
            rows = self._campaign_rows(conn, f"{NEWEST_FIRST} LIMIT 1")
        return self._record(rows[0]) if rows else None

    def status_now(self, record: CampaignRecord) -> str:
        """The campaign's status as it stands, for a reader of the store: the stored one, except
        that a ``running`` campaign no live process runs (its run lock free,
        :func:`~ablation.store.locks.campaign_running`: the run was killed or its machine went
        down) is ``interrupted``, which a resume continues as it does a stopped one."""
        return self._status_now(record.status, record.campaign_id)

    def _status_now(self, status: str, campaign_id: str) -> str:
        if status != "running" or str(self.path) == ":memory:":
            return status
        from ablation.store.locks import campaign_running  # POSIX only: not for other reads

        return "running" if campaign_running(self.path, campaign_id) else "interrupted"

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

    def join_family(
        self, campaign_id: str, family: CampaignFamily | None
    ) -> CampaignFamily | None:
        """Record that ``campaign_id`` belongs to ``family`` and return the family it belongs to.

        A campaign already in a family keeps it (a resumed run names fewer candidates than the
        run that started the campaign, so its own count would be too small). With ``family``
        ``None`` nothing is written: the stored family, if any, is returned.

        Raises:
            StoreError: for an unknown campaign, or a stored family that cannot be read.
        """
        with self._op("record a campaign family", transaction=True) as conn:
            provenance = self._provenance(conn, campaign_id)
            kept = _family_in(provenance, campaign_id)
            if kept is not None or family is None:
                return kept
            provenance[FAMILY_KEY] = family.model_dump()
            conn.execute(
                "UPDATE campaigns SET provenance_json = ?, updated_at = ? WHERE id = ?",
                (json.dumps(provenance, sort_keys=True), now(), campaign_id),
            )
        return family

    def family_campaigns(self, family_id: str) -> list[CampaignRecord]:
        """The stored campaigns of the family ``family_id``, oldest first (by creation time).

        Raises:
            StoreError: a campaign that names the family cannot be read.
        """
        with self._op("list a campaign family") as conn:  # a cheap text match, then the check
            tail = f" WHERE instr(c.provenance_json, ?) > 0{NEWEST_FIRST}"
            rows = self._campaign_rows(conn, tail, (json.dumps(family_id),))
        found = []
        for record in map(self._record, reversed(rows)):
            family = campaign_family(record)
            if family is not None and family.family_id == family_id:
                found.append(record)
        return found

    def _provenance(self, conn: sqlite3.Connection, campaign_id: str) -> dict[str, Any]:
        """A campaign's stored provenance (read inside the caller's operation).

        Raises:
            StoreError: for an unknown campaign, or provenance that does not decode.
        """
        sql = "SELECT provenance_json FROM campaigns WHERE id = ?"
        where = f"run store {self.path}: campaign {campaign_id!r}"
        rows = self._rows(conn, sql, (campaign_id,), lambda _: where)
        if not rows:
            raise self._unknown(conn, campaign_id)
        with damaged(where):
            provenance = json.loads(rows[0][0])
            if not isinstance(provenance, dict):
                raise TypeError(f"its provenance is not a JSON object: {rows[0][0]!r:.40}")
        return provenance

    def update_provenance(self, campaign_id: str, **fields: Any) -> None:
        """Merge ``fields`` (converted to JSON-safe data) into a campaign's provenance.

        Raises:
            StoreError: for an unknown campaign.
        """
        with self._op("update provenance", transaction=True) as conn:
            provenance = {**self._provenance(conn, campaign_id), **to_jsonable(fields)}
            conn.execute(
                "UPDATE campaigns SET provenance_json = ?, updated_at = ? WHERE id = ?",
                (json.dumps(provenance, sort_keys=True), now(), campaign_id),
            )
