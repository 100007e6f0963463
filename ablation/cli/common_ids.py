"""``compare`` refuses two result files that share no task id, and two sides that are the same
rows: there is nothing to pair, or nothing to compare; and it names look-alike ids.

Without the first check such a pair became a report of zero pairs whose headline said the arms
agree on every task, and a gate failure (exit 2) that blamed the inventory. Files with no id in
common are almost always a wrong ``--key`` or the wrong file, so it is bad input: one line, exit 1.
Without the second, ``compare export.jsonl export.jsonl --where arm=candidate`` (an export holds
both arms; ``--baseline-where`` picks BEFORE's) compared the candidate with itself: every pair
concordant, a PASS about nothing.

Ids are exact keys: two tools may write one task's id as ``'café'`` (NFC) and ``'cafe\\u0301'``
(NFD), or with a space around it, and the two rows then pair with nothing. Such ids are never
merged (that would change what pairs), but wherever the ids present in one file only are named
(the no-common-id error, the report's exclusions, a numeric comparison's unpaired ids, noted on
stderr as its result has no notes) the look-alike pairs among them are named too,
escaped (:func:`ascii`) so the difference shows, with the files (:func:`look_alike_pairs`). Only
the one-sided ids are normalised, never the ids that pair.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.text import short_repr

__all__ = ["look_alike_note", "look_alike_pairs", "refuse_same_rows", "require_common_ids", "with_look_alikes"]

#: Look-alike pairs a message shows (the count says how many more).
_SHOWN = 5
#: The pairing's reasons for an id one file holds, BEFORE's and AFTER's (``analysis.pair_arms``).
_ONE_SIDED = ("only in baseline", "only in candidate")


def require_common_ids(before: Any, after: Any, names: tuple[str, str]) -> None:
    """Raise :class:`InputError` when the task ids of two arms' columns do not overlap.

    Args:
        before: The baseline's :class:`~ablation.columns.TrialColumns`.
        after: The candidate's :class:`~ablation.columns.TrialColumns`.
        names: How the two files are named in the message.

    Assumes both arms hold at least one row (an empty file is refused when it is read). The
    example ids are cut to 80 characters, so the message stays one short line.
    """
    if before.task_id[0] == after.task_id[0]:
        return  # files of one suite usually start with the same task: no set of every id
    ids = set(before.task_id.tolist())
    if ids.isdisjoint(after.task_id.tolist()):
        first_b, first_a = str(before.task_id[0]), str(after.task_id[0])
        other = set(after.task_id.tolist())
        alike = look_alike_pairs(ids, other)
        raise InputError(
            f"{names[0]} and {names[1]} have no task id in common ({len(ids)} and "
            f"{len(other)} distinct ids, e.g. {short_repr(first_b)} and {short_repr(first_a)}): "
            "nothing to pair; " + (f"{_alike_text(alike, names)}; " if alike else "") + "check --key or the files"
        )


def look_alike_pairs(only_before: Iterable[str], only_after: Iterable[str]) -> list[tuple[str, str]]:
    """``(BEFORE's id, AFTER's id)`` pairs, sorted, of ids each file holds alone that are equal
    once NFC-normalised (:func:`unicodedata.normalize`) and stripped of surrounding whitespace.

    Assumes the arguments are the one-sided ids only (a million paired ids are never normalised).
    """
    keyed: dict[str, list[str]] = {}
    for task_id in only_before:
        keyed.setdefault(_alike(task_id), []).append(task_id)
    return sorted((b, a) for a in only_after for b in keyed.get(_alike(a), ()))


def with_look_alikes(report: Any, names: tuple[str, str]) -> Any:
    """``report`` (an :class:`~ablation.report.AblationReport`) with a note naming the look-alike
    pairs among the ids its exclusions list as present in one file only, or ``report`` itself
    when there is none."""
    sides: tuple[list[str], list[str]] = ([], [])
    for item in report.excluded:
        for side, reason in enumerate(_ONE_SIDED):
            if item.run is None and item.reason.startswith(reason):
                sides[side].append(item.task_id)
    note = look_alike_note(*sides, names)
    return report if note is None else report.model_copy(update={"notes": [*report.notes, note]})


def look_alike_note(only_before: Iterable[str], only_after: Iterable[str], names: tuple[str, str]) -> str | None:
    """The sentence naming the :func:`look_alike_pairs` of two files' one-sided ids, or ``None``."""
    alike = look_alike_pairs(only_before, only_after)
    if not alike:
        return None
    return f"Look-alike ids: {_alike_text(alike, names)}; ids are exact keys: write them alike in both files"


def _alike(task_id: str) -> str:
    return (task_id if unicodedata.is_normalized("NFC", task_id) else unicodedata.normalize("NFC", task_id)).strip()


def _alike_text(pairs: list[tuple[str, str]], names: tuple[str, str]) -> str:
    """``N pair(s) of ids differ only by ...: 'a' (FILE) and 'b' (FILE), ...`` (ids escaped)."""
    shown = "; ".join(f"{_escaped(b)} ({names[0]}) and {_escaped(a)} ({names[1]})" for b, a in pairs[:_SHOWN])
    more = f"; and {len(pairs) - _SHOWN} more" if len(pairs) > _SHOWN else ""
    return (f"{len(pairs)} pair(s) of ids, each in one file only, differ only by Unicode normalisation (NFC) "
            f"or surrounding whitespace, and were not paired: {shown}{more}")  # fmt: skip


def _escaped(task_id: str) -> str:
    """The id as :func:`ascii` writes it (every non-ASCII character escaped), cut to 80 characters."""
    text = ascii(task_id)
    return text if len(text) <= 80 else text[:77] + "..."


def refuse_same_rows(
    paths: tuple[str, str], reads: tuple[Mapping[str, Any], Mapping[str, Any]], names: tuple[str, str]
) -> None:
    """Raise :class:`InputError` when BEFORE and AFTER would read the same filtered rows: one
    file (the same path, or two names of one file) read with the same options and the same
    ``--where`` filters. A filter alike on both sides says the user meant to pick rows for each
    and picked the same; a file named twice without a filter is the comparison typed (an A/A
    check), left as it is.

    Args:
        paths: The files read for BEFORE and AFTER.
        reads: The read options of each (``read_options``; BEFORE's with ``--baseline-where``).
        names: How the two files are named in the message.
    """
    if reads[0] != reads[1] or not reads[0].get("where"):
        return
    try:
        same = os.path.samefile(*paths)
    except OSError:  # unreadable: the read that follows names it
        return
    if same:
        raise InputError(
            f"{names[0]} and {names[1]} are the same rows (one file, filtered alike): the comparison "
            "would pair each trial with itself; pick BEFORE's rows with --baseline-where (e.g. "
            "--baseline-where arm=baseline --where arm=candidate on an export)"
        )
