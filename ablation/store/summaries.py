"""Campaign summaries: what a listing shows of each campaign, read without its task digests.

A campaign keeps its ``task_id -> digest`` map as JSON text, about 80 bytes a task; a listing
needs only how many there are. :meth:`CampaignSummaries.campaign_summaries` counts them in SQL
(:data:`~ablation.store.format.TASK_COUNT`: SQLite's ``json_each``), so the text never reaches
Python, and reads only the newest ``limit`` campaigns when given one. Digests that SQLite does
not count (not ASCII JSON text of an object, which ablation never writes) are decoded in Python
for that campaign alone: a damaged campaign is the same error naming it as every other read
gives, and a hand-written one that decodes is counted as Python counts it.

The viewer pages through the same summaries: ``offset`` skips the newest rows, ``suite`` and
``agent`` filter in SQL (every campaign is seen, none decoded), :meth:`count_campaigns` counts what
a filter matches and :meth:`campaign_choices` lists the distinct suites and agents. A summary
carries the campaign's runs per task (from its configuration, which is checked anyway), so that
its planned trials need no digests either.

Every other value of a summary is checked as :class:`~ablation.store.format.CampaignRecord`'s
are (:meth:`~ablation.store.campaigns.CampaignStore._checked`), so a campaign that cannot be
reported is not listed as readable.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ablation.errors import StoreError
from ablation.store.campaigns import CampaignStore
from ablation.store.format import NEWEST_FIRST, TaskDigests, recorded_verdict

__all__ = ["CampaignSummaries", "CampaignSummary", "planned_trials"]


@dataclasses.dataclass(frozen=True)
class CampaignSummary:
    """One stored campaign as a listing shows it.

    Attributes:
        campaign_id: The campaign's id.
        status: Its status as it stands (:meth:`CampaignStore.status_now`: a ``running``
            campaign no live process runs is ``interrupted``).
        suite_fingerprint: The suite's fingerprint.
        n_tasks: How many tasks the suite had (its stored task digests).
        baseline_agent: Name of the baseline agent.
        candidate_agent: Name of the candidate agent.
        verdict: The verdict kept when it completed (:attr:`CampaignRecord.verdict`), or ``None``.
        created_at: ISO 8601 UTC creation time.
        n_trials: Number of stored trials.
        runs: Runs per task per arm (its configuration's ``runs``).
    """

    campaign_id: str
    status: str
    suite_fingerprint: str
    n_tasks: int
    baseline_agent: str
    candidate_agent: str
    verdict: str | None
    created_at: str
    n_trials: int
    runs: int

    @property
    def planned_trials(self) -> int:
        """Trials the campaign plans (:func:`planned_trials`)."""
        return planned_trials(self.n_tasks, self.runs)


def planned_trials(n_tasks: int, runs: int) -> int:
    """Trials a campaign plans: tasks x runs x 2 arms."""
    return n_tasks * runs * 2


class CampaignSummaries(CampaignStore):
    """The campaign listing of :class:`~ablation.store.run_store.RunStore`."""

    def campaign_summaries(
        self, *, limit: int | None = None, damaged: list[StoreError] | None = None, offset: int = 0,
        suite: str | None = None, agent: str | None = None,
    ) -> list[CampaignSummary]:
        """The newest ``limit`` campaigns (every one when ``None``) after the newest ``offset``,
        newest first, of suite fingerprint ``suite`` and with ``agent`` as baseline or candidate
        when given.

        ``damaged``: a list that receives the error of each of them that does not decode, which
        is then left out; without it, the first such campaign raises its :class:`StoreError`.
        """
        where, matched = _matching(suite, agent)
        tail, params = f"{where}{NEWEST_FIRST}", tuple[object, ...](matched)
        if limit is not None or offset:  # the newest rows first, so that only theirs are counted
            inner = f"SELECT c.rowid FROM campaigns c{where}{NEWEST_FIRST} LIMIT ? OFFSET ?"
            tail = f" WHERE c.rowid IN ({inner}){NEWEST_FIRST}"
            params = (*params, -1 if limit is None else limit, offset)
        with self._op("list campaigns") as conn:
            rows = self._campaign_rows(conn, tail, params, counted=True)
        found = []
        for row in rows:
            try:
                found.append(self._summary(row))
            except StoreError as exc:
                if damaged is None:
                    raise
                damaged.append(exc)
        return found

    def count_campaigns(self, *, suite: str | None = None, agent: str | None = None) -> int:
        """How many campaigns the store holds (of ``suite``, with ``agent``: as
        :meth:`campaign_summaries` filters them)."""
        where, params = _matching(suite, agent)
        with self._op("count campaigns") as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM campaigns c{where}", params).fetchone()[0])

    def campaign_choices(self) -> tuple[list[str], list[str]]:
        """The distinct suite fingerprints and the distinct agent names (baseline or candidate)
        of the stored campaigns, each sorted; values that are not text (a damaged row) are left
        out, as that campaign is from every list."""
        with self._op("list suites and agents") as conn:
            sql = "SELECT DISTINCT suite_fingerprint, baseline_agent, candidate_agent FROM campaigns"
            rows = self._rows(conn, sql)  # text that is not UTF-8: its bytes, left out below
        suites = {r[0] for r in rows if isinstance(r[0], str)}
        agents = {a for r in rows for a in r[1:] if isinstance(a, str)}
        return sorted(suites), sorted(agents)

    def _summary(self, row: tuple[Any, ...]) -> CampaignSummary:
        config, provenance = self._checked(row)
        n_tasks = row[4] if row[4] is not None else self._decoded_count(row[0])
        return CampaignSummary(
            campaign_id=row[0], status=self._status_now(row[1], row[0]), suite_fingerprint=row[3], n_tasks=n_tasks,
            baseline_agent=row[5], candidate_agent=row[6],
            verdict=recorded_verdict(row[1], provenance), created_at=row[8], n_trials=row[10],
            runs=config.runs,
        )  # fmt: skip

    def _decoded_count(self, campaign_id: str) -> int:
        """The task count of digests SQLite did not count, decoded in Python (or the error)."""
        where = f"run store {self.path}: campaign {campaign_id!r}"
        with self._op(f"read campaign {campaign_id!r}") as conn:
            sql = "SELECT id, task_digests_json FROM campaigns WHERE id = ?"
            rows = self._rows(conn, sql, (campaign_id,), lambda _: where)
            if not rows:  # deleted meanwhile
                raise self._unknown(conn, campaign_id)
        return len(TaskDigests(rows[0][1], where))


def _matching(suite: str | None, agent: str | None) -> tuple[str, tuple[str, ...]]:
    """The ``WHERE`` clause (over ``campaigns c``) and parameters of a suite and agent filter."""
    clauses, params = [], tuple[str, ...]()
    if suite is not None:
        clauses, params = ["c.suite_fingerprint = ?"], (suite,)
    if agent is not None:
        clauses.append("(c.baseline_agent = ? OR c.candidate_agent = ?)")
        params = (*params, agent, agent)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params
