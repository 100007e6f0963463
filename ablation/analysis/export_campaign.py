"""A comparison of one campaign's export, read as the campaign: its settings, suite and family.

``ablation report --export-jsonl`` writes a campaign's trials after a header naming the
configuration it ran with, its suite (``task_digests``) and, for a run of several candidates,
its family (``provenance.candidate_family``). The trials alone do not say how they are to be
judged: the runs per task (a task with fewer stored runs was interrupted), ``on_error`` (an
excluded error is not a failure), alpha and the gate policy, the tasks that never ran, the
candidates the claim of improvement is adjusted over, and, for a sequential campaign, the stop
(every trial that finished is in the file, those of tasks still in flight at the stop
included: read as plain results they would be a fixed-n test of more pairs than the campaign
decided on, their number chosen by the stop, docs/STATISTICS.md section 10).

So a comparison whose files are all the export of one campaign, arm against arm, is judged as
``ablation report`` judges the stored campaign (:func:`campaign_settings`): the campaign's
configuration with the settings the user gave in place of its own (as ``report`` takes them:
each gate option its own field), except those that decided a sequential stop, which are refused
when they differ (:mod:`ablation.analysis.stop_settings`); its suite as the expected ids, unless
a filter beyond ``arm`` keeps some of its tasks; and its family's size, over which the claim of
improvement is Holm-adjusted with the other candidates (not in the file) counted at p = 1, which
never claims more than the run's own report (:func:`~ablation.analysis.candidates.holm_claims`).
Files of different campaigns, or plain files, are compared as their rows say; a sequential
export beside another file, or filtered, is refused, as nothing there can replay its stop.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

from ablation.analysis.stop_settings import (
    keep_stop_settings_from_file,
    refuse_policy_changes,
    refuse_stop_changes,
)
from ablation.config import CampaignConfig
from ablation.errors import InputError, validation_line
from ablation.sources.readers.ablation_export import sequential_header

__all__ = ["CampaignSettings", "ExportCampaign", "campaign_settings", "export_campaign"]

_REPLAYED_BY = "a comparison of its export"
#: Configuration fields a comparison's settings never replace: its labels and prices name the
#: comparison, not how the campaign's trials are judged; the sequential policy is the campaign's.
_NOT_REPLACED = frozenset({"labels", "prices", "sequential", "gates"})


class ExportCampaign(NamedTuple):
    """What a comparison reads from an export's header (the ``campaign`` object of its first line).

    Attributes:
        name: The file, as the user named it.
        campaign_id: The campaign's id (``""`` when the header names none).
        time_limit: The limit its trials ran under (``config.timeout_s``): a positive finite
            number, else ``None`` (no limit named).
        config: The header's ``config``, as written (validated when it is used; ``{}`` when absent).
        task_ids: The tasks of its suite, in the header's order (``task_digests``).
        family_size: The candidates of the run the campaign was one of (1 for a lone candidate).
    """

    name: str
    campaign_id: str
    time_limit: float | None
    config: Any
    task_ids: tuple[str, ...]
    family_size: int

    @property
    def sequential(self) -> bool:
        """Whether the campaign was sequential (its configuration names a policy)."""
        return sequential_header({"config": self.config})


class CampaignSettings(NamedTuple):
    """How a comparison judges its files (:func:`campaign_settings`).

    Attributes:
        config: The configuration the comparison is built with.
        expected_ids: The ids it expects (``None``: those of the files).
        family_size: The candidates its claim of improvement is Holm-adjusted over (1: none).
        note: A line for stderr: settings of the settings file left unused (or ``None``).
    """

    config: CampaignConfig
    expected_ids: Sequence[str] | None
    family_size: int
    note: str | None


def export_campaign(name: str, header: Mapping[str, Any]) -> ExportCampaign:
    """What a comparison reads from the export ``name``'s header (:class:`ExportCampaign`)."""
    raw = header.get("config", {})
    given = raw.get("timeout_s") if isinstance(raw, Mapping) else None
    real = isinstance(given, int | float) and not isinstance(given, bool) and 0 < given < math.inf
    campaign_id = header.get("campaign_id")
    digests = header.get("task_digests")
    provenance = header.get("provenance")
    family = provenance.get("candidate_family") if isinstance(provenance, Mapping) else None
    size = family.get("size") if isinstance(family, Mapping) else None
    return ExportCampaign(
        name,
        campaign_id if isinstance(campaign_id, str) else "",
        float(given) if real and given is not None else None,
        raw,
        tuple(map(str, digests)) if isinstance(digests, Mapping) else (),
        size if isinstance(size, int) and not isinstance(size, bool) and size > 1 else 1,
    )


def campaign_settings(
    config: CampaignConfig,
    files: Sequence[tuple[str, ExportCampaign | None]],
    *,
    expected_ids: Sequence[str] | None = None,
    filters: Sequence[Sequence[str]] = (),
    names: Mapping[str, str] | None = None,
    from_file: Collection[str] = (),
) -> CampaignSettings:
    """How a comparison of ``files`` is judged (module docstring).

    Args:
        config: The comparison's settings; a field in its ``model_fields_set`` (a gate in
            ``gates.model_fields_set``; for ``sequential`` its ``futility_after`` when set and a
            ``suite_claim`` turned on) is one the user gave.
        files: ``(name, campaign of its header, or None for a file that is no export)`` of every
            file of the comparison.
        expected_ids: The ids the user expects.
        filters: The paths of each file's row filters (``--where``), in the order of ``files``.
        names: How the caller names each setting, by field path, for a refusal.
        from_file: The field paths whose value came from a settings file (``[tool.ablation]``):
            one that would change a sequential campaign's stop is left unused, with a note, as
            ``ablation report`` leaves it
            (:func:`~ablation.analysis.stop_settings.keep_stop_settings_from_file`).

    Returns:
        ``config``, ``expected_ids`` and a family of 1 unless every file is the export of one
        campaign; else that campaign's (module docstring).

    Raises:
        InputError: a sequential export beside another file, filtered beyond ``arm``, or with
            expected ids other than its suite; a header whose ``config`` is no configuration;
            two headers of one campaign id that differ.
        ConfigError: a setting that decided a sequential campaign's stop, given another value.
    """
    campaigns = [c for _, c in files]
    first = campaigns[0]
    one = first is not None and all(c is not None and _same_campaign(first, c) for c in campaigns)
    sequential = next((c for c in campaigns if c is not None and c.sequential), None)
    filtered = next(((n, p) for (n, _), paths in zip(files, filters, strict=False) for p in paths if p != "arm"), None)
    if sequential is not None:
        _replayable(sequential, files, one, filtered, expected_ids)
    if not one or first is None:
        return CampaignSettings(config, expected_ids, 1, None)
    try:
        stored = CampaignConfig.model_validate(first.config)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        line = validation_line(exc, CampaignConfig.model_fields)
        raise InputError(f"{first.name}, line 1: the campaign header's config: {line}") from None
    given = config.gates.model_fields_set if "gates" in config.model_fields_set else set()
    gates = stored.gates.model_copy(update={k: getattr(config.gates, k) for k in given})
    update: dict[str, Any] = {k: getattr(config, k) for k in config.model_fields_set - _NOT_REPLACED}
    update["gates"] = gates
    note = None
    if stored.sequential is not None:
        update, note = keep_stop_settings_from_file(first.campaign_id, stored, update, from_file, names or {}, _REPLAYED_BY)
        refuse_stop_changes(first.campaign_id, stored, update, names, replayed_by=_REPLAYED_BY)
        refuse_policy_changes(first.campaign_id, stored, config, names or {}, _REPLAYED_BY)
    elif config.sequential is not None:  # --sequential-replay of a fixed-n campaign: what it would have spent
        update["sequential"] = config.sequential
    suite = list(first.task_ids) if filtered is None and expected_ids is None and first.task_ids else expected_ids
    return CampaignSettings(stored.model_copy(update=update), suite, first.family_size, note)


def _same_campaign(first: ExportCampaign, other: ExportCampaign) -> bool:
    """Whether two headers are one campaign's: the same id (refused when the rest differs), or,
    without an id, the same header."""
    fields = ("config", "task_ids", "family_size")
    if not first.campaign_id or first.campaign_id != other.campaign_id:
        same = all(getattr(first, f) == getattr(other, f) for f in fields)
        return not first.campaign_id and not other.campaign_id and same
    differ = [f for f in fields if getattr(first, f) != getattr(other, f)]
    if differ:
        raise InputError(
            f"{first.name} and {other.name} are exports of campaign {first.campaign_id} whose headers differ "
            f"(in {', '.join(differ)}): one campaign's export has one header; compare the exports as written"
        )
    return True


def _replayable(
    campaign: ExportCampaign,
    files: Sequence[tuple[str, ExportCampaign | None]],
    one: bool,
    filtered: tuple[str, str] | None,
    expected_ids: Sequence[str] | None,
) -> None:
    """Refuse a comparison that cannot replay the sequential ``campaign``'s stop."""
    about = (
        f"{campaign.name} is an export of sequential campaign {campaign.campaign_id or '(no id)'}, whose "
        "stop was decided over its own pairs of its whole suite"
    )
    if not one:
        other, seen = next((n, c) for n, c in files if c is None or c.campaign_id != campaign.campaign_id
                           or c.config != campaign.config)  # fmt: skip
        what = "is not an export" if seen is None else f"is of campaign {seen.campaign_id or '(no id)'}"
        raise InputError(
            f"{about}; {other} {what}, so the stop cannot be replayed: compare the campaign's two "
            "arms (--baseline-where arm=baseline --where arm=candidate on the export)"
        )
    if filtered is not None:
        name, path = filtered
        raise InputError(f"{about}; --where {path}=... on {name} keeps some of its tasks, so the stop cannot be replayed")
    if expected_ids is not None and set(expected_ids) != set(campaign.task_ids):
        raise InputError(f"{about}; the expected ids are not its suite ({len(campaign.task_ids)} tasks in its header)")
