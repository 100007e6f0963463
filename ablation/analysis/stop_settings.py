"""The settings that decided a sequential campaign's stop, kept by every later reading of it.

A sequential campaign's stop is a fact of the campaign (:mod:`ablation.analysis.sequential`),
decided with the settings of :data:`~ablation.analysis.sequential.STOP_SETTINGS` over the tasks of
its suite. Two readings replay it: the report of the stored campaign
(:func:`~ablation.analysis.stored.report_stored_campaign`) and a comparison of its export
(:func:`~ablation.analysis.export_campaign.campaign_settings`). Both refuse a setting that
differs from the campaign's (:func:`refuse_stop_changes`, :func:`refuse_policy_changes`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from ablation.analysis.sequential import STOP_SETTINGS, stop_settings_changed
from ablation.config import CampaignConfig
from ablation.errors import ConfigError

__all__ = ["keep_stop_settings_from_file", "refuse_policy_changes", "refuse_stop_changes", "setting_words"]


#: The sequential policy's fields a comparison may give (its flags), in words.
_POLICY_WORDS = {"futility_after": "inconclusive stop after", "suite_claim": "suite-only claim"}


def refuse_policy_changes(
    campaign_id: str, stored: CampaignConfig, config: CampaignConfig, names: Mapping[str, str], replayed_by: str
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
                f"its stop was decided with {setting_words(_POLICY_WORDS[field], old)}; {replayed_by} "
                f"replays that stop with the stored settings (drop {flag})"
            )


def keep_stop_settings_from_file(
    campaign_id: str,
    stored: CampaignConfig,
    update: Mapping[str, Any],
    from_file: Collection[str],
    names: Mapping[str, str],
    replayed_by: str = "its report",
) -> tuple[dict[str, Any], str | None]:
    """``update`` with each stop setting that a settings file (``[tool.ablation]``) changes put
    back to the campaign's value, and the note that says so (``None`` when there is none).

    A value in a project's settings file was written for the project's new campaigns, not to
    re-decide a stored one's stop: it is left unused, with one note, where the same value given
    as a flag is refused (:func:`refuse_stop_changes`).

    Args:
        campaign_id: The campaign, as the note names it.
        stored: The configuration the campaign ran with.
        update: The configuration fields to replace (as :func:`refuse_stop_changes` takes them).
        from_file: The configuration field paths whose value came from a settings file.
        names: How each field was set, by path (``FILE [tool.ablation] margin``).
        replayed_by: What replays the stop, for the note.
    """
    kept = dict(update)
    unused: list[tuple[str, str]] = []  # (as given, the stored setting)
    for path, old, new in stop_settings_changed(stored, update):
        if path not in from_file:
            continue
        unused.append((f"{names.get(path, path)} = {json.dumps(new)}", setting_words(STOP_SETTINGS[path], old)))
        top, _, leaf = path.partition(".")
        kept[top] = kept[top].model_copy(update={leaf: old}) if leaf else old
    if not unused:
        return kept, None
    what = "value is" if len(unused) == 1 else "values are"
    return kept, (
        f"ablation: note: {', '.join(g for g, _ in unused)}: campaign {campaign_id} is sequential and its "
        f"stop was decided with {', '.join(w for _, w in unused)}; {replayed_by} replays that stop with "
        f"the stored settings, so the file's {what} not used"
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
