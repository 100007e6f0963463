"""The resume check of the run store: may a stored campaign be continued with these inputs?

:class:`ResumeGuard` owns :meth:`ResumeGuard.check_resume`. It reads what the campaign was run
with and compares it, step by step, with what a resume would run: the tasks (ids and digests),
the suite fingerprint, both agent names and the config fields that change trials
(:data:`~ablation.store.format.TRIAL_CONFIG_FIELDS`). Each step is a function returning the
differences it found, worded for the error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ablation.config import CampaignConfig
from ablation.errors import ResumeMismatchError
from ablation.store.connection import StoreConnection
from ablation.store.format import TRIAL_CONFIG_FIELDS, listing

__all__ = ["ResumeGuard"]


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
        row = self._resume_identity(campaign_id)
        old_digests, old_config = json.loads(row[1]), json.loads(row[4])
        problems = _task_problems(old_digests, task_digests)
        if not problems and row[0] != suite_fingerprint:
            problems.append(_fingerprint_problem(row[0], suite_fingerprint))
        problems += _agent_problems((row[2], row[3]), (baseline_agent, candidate_agent))
        problems += _config_problems(old_config, config)
        if problems:
            raise ResumeMismatchError(
                f"cannot resume campaign {campaign_id!r}: {'; '.join(problems)}; "
                "start a new campaign instead"
            )

    def _resume_identity(self, campaign_id: str) -> tuple[Any, ...]:
        """The stored suite fingerprint, task digests, agent names and config of a campaign.

        Raises:
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
        return tuple(row)


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


def _config_problems(old_config: Mapping[str, Any], config: CampaignConfig) -> list[str]:
    """Changed values of the config fields that change trials, old against new."""
    new_config = json.loads(config.model_dump_json())
    problems = []
    for name in TRIAL_CONFIG_FIELDS:
        old, new = old_config.get(name), new_config.get(name)
        if old != new:
            problems.append(f"config.{name} changed: {json.dumps(old)} -> {json.dumps(new)}")
    return problems
