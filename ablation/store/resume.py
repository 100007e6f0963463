"""The resume check of the run store: may a stored campaign be continued with these inputs?

:class:`ResumeGuard` owns :meth:`ResumeGuard.check_resume`. It reads what the campaign was run
with and compares it, step by step, with what a resume would run: the tasks (ids and digests),
the suite fingerprint, both agent names and the config fields that change trials
(:data:`~ablation.store.format.TRIAL_CONFIG_FIELDS`). Each step is a function returning the
differences it found, worded for the error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ablation.config import CampaignConfig
from ablation.errors import ResumeMismatchError
from ablation.store.connection import StoreConnection
from ablation.store.format import TRIAL_CONFIG_FIELDS, listing

__all__ = ["ResumeGuard", "config_problems"]

#: What each kind of agent fingerprint (:mod:`ablation.agents.fingerprint`) digests, for messages.
_KINDS = {
    "source": "source digest",
    "file": "source file digest",
    "command": "command line and executable digest",
    "url": "URL",
    "name": "qualified name",
    "pydantic-ai": "pydantic-ai agent definition digest",
}


class ResumeGuard(StoreConnection):
    """The resume check of :class:`~ablation.store.run_store.RunStore`."""

    def check_resume(
        self,
        campaign_id: str,
        *,
        suite_fingerprint: str,
        task_digests: Mapping[str, str],
        baseline_agent: str,
        candidate_agent: str,
        config: CampaignConfig,
        agent_fingerprints: Mapping[str, str] | None = None,
        allow_changed_agent: bool = False,
    ) -> bool:
        """Refuse to resume a campaign whose stored trials would not match the new ones.

        Compared: the tasks (ids and digests), both agent names, the suite fingerprint (which also
        covers the quality scorers) and the config fields that change trials
        (:data:`TRIAL_CONFIG_FIELDS`). Cosmetic fields (concurrency, labels, alpha, ...) may differ.
        Then the agents' code: each arm's ``agent_fingerprints`` entry against the stored one,
        for the arms that store a trial; an arm that stores none (a broken arm whose trials were
        not kept, :mod:`ablation.run.failfast`) has nothing to mix with, so its agent may have
        changed (the fix), and the new fingerprint is recorded for later resumes.

        Args:
            agent_fingerprints: ``arm -> fingerprint`` of the agents about to run (arms missing on
                either side are not compared).
            allow_changed_agent: Resume even when an agent's fingerprint changed (the report then
                mixes trials of two versions of that agent: an explicit opt-out).

        Returns:
            ``False`` when the campaign was stored without fingerprints (before schema version 3):
            the agents' code could not be checked (the caller warns); ``True`` otherwise.

        Raises:
            ResumeMismatchError: naming every difference: task ids added, removed or changed, old
                and new agent names, old and new config values.
            ResumeMismatchError: for a changed agent, one line naming the arm, the agent and the
                digests, unless ``allow_changed_agent``.
            StoreError: for an unknown campaign.
        """
        row = self._resume_identity(campaign_id)
        old_digests, old_config = json.loads(row[1]), json.loads(row[4])
        problems = _task_problems(old_digests, task_digests)
        if not problems and row[0] != suite_fingerprint:
            problems.append(_fingerprint_problem(row[0], suite_fingerprint))
        problems += _agent_problems((row[2], row[3]), (baseline_agent, candidate_agent))
        problems += config_problems(old_config, config)
        if problems:
            raise ResumeMismatchError(
                f"cannot resume campaign {campaign_id!r}: {'; '.join(problems)}; "
                "start a new campaign instead"
            )
        if row[5] is None:
            return False
        stored, new = json.loads(row[5]), dict(agent_fingerprints or {})
        empty = {arm for arm in new if arm in stored and not self._holds_trials(campaign_id, arm)}
        changed = _changed_agents(
            stored, {a: f for a, f in new.items() if a not in empty}, {"baseline": row[2], "candidate": row[3]}
        )
        if changed and not allow_changed_agent:
            raise ResumeMismatchError(
                f"{'; '.join(changed)}; start a new campaign or pass --allow-changed-agent"
            )
        if any(stored[arm] != new[arm] for arm in empty):  # nothing stored to mix: take the new code
            with self._op("record the agents' fingerprints", transaction=True) as conn:
                conn.execute(
                    "UPDATE campaigns SET agent_fingerprints_json = ? WHERE id = ?",
                    (json.dumps({**stored, **{a: new[a] for a in empty}}, sort_keys=True), campaign_id),
                )
        return True

    def agent_fingerprints(self, campaign_id: str) -> dict[str, str]:
        """``arm -> fingerprint`` of the agents a campaign ran (empty when stored without them).

        Raises:
            StoreError: for an unknown campaign.
        """
        stored = self._resume_identity(campaign_id)[5]
        return {} if stored is None else dict(json.loads(stored))

    def _holds_trials(self, campaign_id: str, arm: str) -> bool:
        """Whether the campaign stores any trial of ``arm``."""
        with self._op("count a campaign's trials") as conn:
            found = conn.execute(
                "SELECT 1 FROM trials WHERE campaign_id = ? AND arm = ? LIMIT 1", (campaign_id, arm)
            ).fetchone()
        return found is not None

    def _resume_identity(self, campaign_id: str) -> tuple[Any, ...]:
        """The stored suite fingerprint, task digests, agent names and config of a campaign.

        Raises:
            StoreError: for an unknown campaign.
        """
        where = f"run store {self.path}: campaign {campaign_id!r}"
        with self._op(f"read campaign {campaign_id!r}") as conn:
            rows = self._rows(
                conn,
                "SELECT suite_fingerprint, task_digests_json, baseline_agent, candidate_agent,"
                " config_json, agent_fingerprints_json FROM campaigns WHERE id = ?",
                (campaign_id,), lambda _: where,
            )  # fmt: skip
            if not rows:
                raise self._unknown(conn, campaign_id)
        return tuple(rows[0])


def _task_problems(old_digests: Mapping[str, str], task_digests: Mapping[str, str]) -> list[str]:
    """Task ids changed, added or removed since the campaign was stored (in that order)."""
    added = sorted(set(task_digests) - set(old_digests))
    removed = sorted(set(old_digests) - set(task_digests))
    changed = sorted(t for t in set(old_digests) & set(task_digests)
                     if old_digests[t] != task_digests[t])  # fmt: skip
    return [
        f"{'task' if len(ids) == 1 else 'tasks'} {listing(ids)} {what}"
        for ids, what in (
            (changed, "changed (input, expected output or verifier)"),
            (added, "added"),
            (removed, "removed"),
        )
        if ids
    ]


def _changed_agents(
    old: Mapping[str, str], new: Mapping[str, str], names: Mapping[str, str]
) -> list[str]:
    """One sentence per arm whose agent's code changed since the campaign was stored."""
    return [
        f"{arm} agent {names.get(arm, '?')} changed since the campaign started "
        f"({_KINDS.get(new[arm].partition(':')[0], 'fingerprint')} {_short(old[arm])} -> {_short(new[arm])})"
        for arm in ("baseline", "candidate")
        if arm in old and arm in new and old[arm] != new[arm]
    ]


def _short(fingerprint: str) -> str:
    """A fingerprint as shown in a message: a digest cut to 12 characters, a URL or name whole."""
    kind, _, value = fingerprint.partition(":")
    return value[:12] if kind in ("source", "file", "command", "pydantic-ai") else value


def _fingerprint_problem(old: str, new: str) -> str:
    """The suite fingerprint changed while the tasks did not: the quality scorers differ."""
    return (
        f"suite fingerprint changed ({old[:12]} -> {new[:12]}) with the "
        "same tasks: the quality scorers differ"
    )


def _agent_problems(old: tuple[str, str], new: tuple[str, str]) -> list[str]:
    """Changed agent names, ``(baseline, candidate)`` stored against ``(baseline, candidate)`` new."""
    return [
        f"{arm} agent changed: {was!r} -> {now!r}"
        for arm, was, now in zip(("baseline", "candidate"), old, new, strict=True)
        if was != now
    ]


def config_problems(
    old_config: Mapping[str, Any], config: CampaignConfig, fields: Sequence[str] = TRIAL_CONFIG_FIELDS
) -> list[str]:
    """Changed values of the config ``fields``, old (a stored configuration's JSON) against new:
    what a resume refuses (:data:`TRIAL_CONFIG_FIELDS`), and a reused baseline
    (:data:`~ablation.store.format.TRIAL_CONDITION_FIELDS`)."""
    new_config = json.loads(config.model_dump_json())
    problems = []
    for name in fields:
        if name not in old_config:  # stored before the field existed: nothing to compare
            continue
        old, new = old_config[name], new_config.get(name)
        if old != new:
            problems.append(f"config.{name} changed: {json.dumps(old)} -> {json.dumps(new)}")
    return problems
