"""The settings that decided a sequential campaign's stop, kept by every later reading of it.

A sequential campaign's stop is a fact of the campaign (:mod:`ablation.analysis.sequential`),
decided with the settings of :data:`~ablation.analysis.sequential.STOP_SETTINGS` over the tasks of
its suite. Two readings replay it: the report of the stored campaign
(:func:`~ablation.analysis.stored.report_stored_campaign`) and a comparison of its export (the
file ``ablation report --export-jsonl`` writes, :func:`replay_of_export`). Both refuse a setting
that differs from the campaign's (:func:`refuse_stop_changes`).

An export holds every trial that finished, those of tasks still in flight at the stop included.
Read as plain results, they would be a fixed-n comparison of more pairs than the campaign decided
on, tested as if their number had been fixed in advance (docs/STATISTICS.md section 10), and over
the tasks that happen to be in the file rather than the suite the stop was planned over.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ablation.analysis.sequential import STOP_SETTINGS, stop_settings_changed
from ablation.config import CampaignConfig
from ablation.errors import ConfigError, InputError, validation_line

__all__ = ["ExportCampaign", "export_campaign", "refuse_stop_changes", "replay_of_export", "setting_words"]


_REPLAYED_BY = "a comparison of its export"
#: The sequential policy's fields a comparison may give (its flags), in words.
_POLICY_WORDS = {"futility_after": "inconclusive stop after", "suite_claim": "suite-only claim"}


class ExportCampaign(NamedTuple):
    """What a comparison reads from an export's header (the ``campaign`` object of its first line).

    Attributes:
        campaign_id: The campaign's id (``""`` when the header names none).
        time_limit: The limit its trials ran under (``config.timeout_s``): a positive finite
            number, else ``None`` (no limit named).
        sequential: The configuration of a sequential campaign (``config.sequential`` set),
            validated; ``None`` for any other campaign, whose configuration is not read.
        task_ids: The tasks of its suite, in the header's order (``task_digests``).
    """

    campaign_id: str
    time_limit: float | None
    sequential: CampaignConfig | None
    task_ids: tuple[str, ...]


def export_campaign(name: str, header: Mapping[str, Any]) -> ExportCampaign:
    """What a comparison reads from an export's header (:class:`ExportCampaign`).

    Raises:
        InputError: the header of a sequential campaign whose ``config`` is not a campaign
            configuration or whose ``task_digests`` is not an object, one line naming the file
            and line 1.
    """
    raw = header.get("config")
    raw = raw if isinstance(raw, Mapping) else {}
    given = raw.get("timeout_s")
    real = isinstance(given, int | float) and not isinstance(given, bool) and 0 < given < math.inf
    limit = float(given) if real and given is not None else None
    campaign_id = header.get("campaign_id")
    campaign_id = campaign_id if isinstance(campaign_id, str) else ""
    digests = header.get("task_digests", {})
    task_ids = tuple(map(str, digests)) if isinstance(digests, Mapping) else ()
    if raw.get("sequential") is None:
        return ExportCampaign(campaign_id, limit, None, task_ids)
    try:
        config = CampaignConfig.model_validate(raw)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise InputError(f"{name}, line 1: the campaign header's config: {validation_line(exc)}") from None
    if not isinstance(digests, Mapping):
        raise InputError(f"{name}, line 1: the campaign header's task_digests must be an object")
    return ExportCampaign(campaign_id, limit, config, task_ids)


def replay_of_export(
    config: CampaignConfig,
    files: Sequence[tuple[str, ExportCampaign | None]],
    *,
    expected_ids: Sequence[str] | None = None,
    filters: Mapping[str, Sequence[str]] | None = None,
    names: Mapping[str, str] | None = None,
) -> tuple[CampaignConfig, Sequence[str] | None]:
    """The configuration and expected ids of a comparison, replaying a sequential export's stop.

    When no file of the comparison is an export of a sequential campaign, ``config`` and
    ``expected_ids`` are returned unchanged. Otherwise the comparison must be of that campaign's
    own arms (every file an export of it, with no row filter but ``arm``), and it is replayed as
    the campaign decided: the campaign's stop settings (seed, alpha, margin, critical gate and
    sequential policy) replace ``config``'s, and its suite is the expected ids, so that tasks
    never run are listed as not run, as in the campaign's report. The other settings (the
    remaining gates, the confidence level, resamples) stay ``config``'s.

    Args:
        config: The comparison's settings; a stop setting in its ``model_fields_set`` (a gate in
            ``gates.model_fields_set``; for ``sequential`` its ``futility_after`` when set and a
            ``suite_claim`` turned on) is one the user gave, refused when it differs.
        files: ``(name, campaign of its header or None)`` of every file of the comparison.
        expected_ids: The ids the user expects; refused when they are not the campaign's suite.
        filters: ``{name: row filter paths}`` of each file (``--where``).
        names: How the caller names each setting, by field path (as
            :func:`refuse_stop_changes` takes them).

    Raises:
        InputError: a comparison that cannot replay the stop (another file, a filter, other
            expected ids), one line naming the file and what to compare instead.
        ConfigError: a stop setting given with another value (:func:`refuse_stop_changes`).
    """
    sequential = [(n, c) for n, c in files if c is not None and c.sequential is not None]
    if not sequential:
        return config, expected_ids
    name, campaign = sequential[0]
    about = (
        f"{name} is an export of sequential campaign {campaign.campaign_id or '(no id)'}, whose stop was "
        "decided over its own pairs of its whole suite"
    )
    for other, seen in files:
        if seen is None or seen.campaign_id != campaign.campaign_id or seen.sequential != campaign.sequential:
            what = "is not an export" if seen is None else f"is of campaign {seen.campaign_id or '(no id)'}"
            raise InputError(
                f"{about}; {other} {what}, so the stop cannot be replayed: compare the campaign's two "
                "arms (--baseline-where arm=baseline --where arm=candidate on the export)"
            )
        kept = [path for path in (filters or {}).get(other, ()) if path != "arm"]
        if kept:
            raise InputError(f"{about}; --where {kept[0]}=... on {other} keeps some of its tasks, so the stop cannot be replayed")
    if expected_ids is not None and set(expected_ids) != set(campaign.task_ids):
        raise InputError(f"{about}; the expected ids are not its suite ({len(campaign.task_ids)} tasks in its header)")
    stored = campaign.sequential
    assert stored is not None
    refuse_stop_changes(campaign.campaign_id, stored, _given(config, stored), names, replayed_by=_REPLAYED_BY)
    _refuse_policy_changes(campaign.campaign_id, stored, config, names or {})
    gates = config.gates.model_copy(update={
        "noninferiority_margin": stored.gates.noninferiority_margin,
        "critical_must_not_regress": stored.gates.critical_must_not_regress,
    })  # fmt: skip
    update = {"seed": stored.seed, "alpha": stored.alpha, "sequential": stored.sequential, "gates": gates}
    return config.model_copy(update=update), list(campaign.task_ids)


def _given(config: CampaignConfig, stored: CampaignConfig) -> dict[str, Any]:
    """The stop settings ``config`` was given (see :func:`replay_of_export`), as an update of the
    campaign's configuration for :func:`~ablation.analysis.sequential.stop_settings_changed`."""
    update: dict[str, Any] = {k: getattr(config, k) for k in ("seed", "alpha") if k in config.model_fields_set}
    if "gates" in config.model_fields_set:  # each gate field given, on the campaign's policy
        given = config.gates
        update["gates"] = stored.gates.model_copy(update={k: getattr(given, k) for k in given.model_fields_set})
    return update


def _refuse_policy_changes(
    campaign_id: str, stored: CampaignConfig, config: CampaignConfig, names: Mapping[str, str]
) -> None:
    """Refuse a sequential policy setting given (``--stop-when-inconclusive-after``, a
    ``--suite-claim``) that differs from the campaign's; the rest of the policy is the campaign's."""
    policy, kept = config.sequential, stored.sequential
    if policy is None or kept is None:
        return
    for field, new in (("futility_after", policy.futility_after), ("suite_claim", policy.suite_claim or None)):
        old, path = getattr(kept, field), f"sequential.{field}"
        if new is not None and new != old:
            flag = names.get(path, path)
            raise ConfigError(
                f"{flag}{'' if isinstance(new, bool) else f' {new}'}: campaign {campaign_id} is sequential and "
                f"its stop was decided with {setting_words(_POLICY_WORDS[field], old)}; {_REPLAYED_BY} "
                f"replays that stop with the stored settings (drop {flag})"
            )


def refuse_stop_changes(
    campaign_id: str,
    stored: CampaignConfig,
    update: Mapping[str, Any],
    names: Mapping[str, str] | None = None,
    *,
    replayed_by: str = "its report",
) -> None:
    """Refuse an update of a setting that decided a sequential campaign's stop.

    The stop is a fact of the campaign (:mod:`ablation.analysis.sequential`): its report, and a
    comparison of its export, replay it with the campaign's settings, so another seed, alpha,
    margin, critical rule or sequential policy would report a stop the campaign never made. A
    fixed-n campaign takes any update.

    Args:
        campaign_id: The campaign, as the refusal names it.
        stored: The configuration the campaign ran with.
        update: The configuration fields to replace, as ``report_stored_campaign`` takes them
            (whole fields; a gate as the whole gate policy with that field changed).
        names: How the caller names each setting, by field path (``{"seed": "--seed"}``: the
            command line passes its flags); by default its words.
        replayed_by: What replays the stop, for the message.

    Raises:
        ConfigError: one line naming each setting as given, its stored value, and what to drop.
    """
    found = stop_settings_changed(stored, update)
    if not found:
        return
    named = dict(names or {})
    given = [
        named[path] + ("" if isinstance(new, bool) else f" {new}")
        if path in named else setting_words(STOP_SETTINGS[path], new)
        for path, _, new in found
    ]  # a switch (--no-critical-gate) says its value by being there
    old = [setting_words(STOP_SETTINGS[path], value) for path, value, _ in found]
    dropped = [named.get(path, STOP_SETTINGS[path]) for path, _, _ in found]
    raise ConfigError(
        f"{', '.join(given)}: campaign {campaign_id} is sequential and its stop was decided "
        f"with {', '.join(old)}; {replayed_by} replays that stop with the stored settings "
        f"(drop {', '.join(dropped)})"
    )


def setting_words(name: str, value: Any) -> str:
    """``margin 0.2``, ``no margin``, ``the critical gate on``."""
    if value is None:
        return f"no {name}"
    if isinstance(value, bool):
        return f"the {name} {'on' if value else 'off'}"
    return f"{name} {value}"
