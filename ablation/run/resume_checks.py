"""Checks a stored campaign needs before anything runs: stable task digests, unchecked agents.

A campaign with a store may be resumed later, and a resume compares each task's digest and each
agent's fingerprint with the stored ones (:mod:`ablation.store.resume`). A task whose input has no
stable representation (a default ``repr`` carrying a memory address) would digest differently in
every process, so it is refused up front (:func:`check_stable_tasks`) rather than at the resume.
A campaign stored before agent fingerprints existed resumes with one warning
(:func:`warn_unchecked_agents`). A baseline reused from a stored campaign must be the agent given
for it, and of the same code (:func:`check_reused_baseline`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ablation.errors import ConfigError, ResumeMismatchError
from ablation.schema import AblationTask, unstable_task_values

__all__ = ["check_reused_baseline", "check_stable_tasks", "refuse_unstable", "warn_unchecked_agents"]


def check_stable_tasks(tasks: Sequence[AblationTask]) -> None:
    """Refuse a suite with a task value that has no stable representation, naming the task.

    Raises:
        ConfigError: naming the first such task and the type of the value.
    """
    refuse_unstable(unstable_task_values(tasks))


def refuse_unstable(unstable: Sequence[tuple[str, str]]) -> None:
    """Raise for the first ``(task_id, type name)`` of :func:`~ablation.schema.unstable_task_values`.

    Raises:
        ConfigError: naming the task and the type of the value, when ``unstable`` is not empty.
    """
    if unstable:
        task_id, type_name = unstable[0]
        more = f" (and {len(unstable) - 1} more)" if len(unstable) > 1 else ""
        raise ConfigError(
            f"task {task_id!r} input contains a {type_name} object with no stable representation"
            f"{more}; resume could not check it: use plain data, a dataclass or a pydantic model"
        )


def warn_unchecked_agents(campaign_id: str) -> None:
    """Warn that a campaign stored without agent fingerprints resumes unchecked."""
    warnings.warn(
        f"campaign {campaign_id!r} was stored without agent fingerprints (an older ablation): "
        "resuming without checking that the agents' code is unchanged",
        UserWarning,
        stacklevel=3,
    )


def check_reused_baseline(
    source_id: str, stored: tuple[str, str | None], given: tuple[str, str], allow_changed_agent: bool
) -> None:
    """Refuse to reuse the baseline trials of campaign ``source_id`` for another baseline agent.

    Args:
        source_id: The campaign whose baseline trials would be reused.
        stored: Its baseline agent's name and code fingerprint (``None``: stored without one).
        given: The name and fingerprint of the baseline agent given for this campaign.
        allow_changed_agent: Reuse although the baseline's code changed (the report then holds
            trials of the old code as the baseline: an explicit opt-out, as for a resume).

    Raises:
        ResumeMismatchError: for another agent (always), or for changed code (unless allowed).
    """
    if given[0] != stored[0]:
        raise ResumeMismatchError(
            f"cannot reuse the baseline of campaign {source_id!r}: its baseline is {stored[0]}, "
            f"not {given[0]}; give that baseline or start a new campaign"
        )
    if stored[1] is not None and given[1] != stored[1] and not allow_changed_agent:
        raise ResumeMismatchError(
            f"cannot reuse the baseline of campaign {source_id!r}: baseline agent {given[0]} "
            "changed since that campaign ran (its trials are of the old code); start a new "
            "campaign or pass --allow-changed-agent"
        )
