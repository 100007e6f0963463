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
the one-sided ids are normalised, never the ids that pair. With ``--expected-ids``, an expected id
a file lacks and an id that file holds but the list does not are such a pair too, the
``--expected-ids`` file named as the other side (:func:`expected_look_alikes`).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.text import short_repr

__all__ = [
    "Expected", "expected_look_alikes", "look_alike_note", "look_alike_pairs", "numeric_look_alike_note",
    "refuse_same_rows", "require_common_ids", "with_look_alikes",
]  # fmt: skip

#: Look-alike pairs a message shows (the count says how many more).
_SHOWN = 5
#: The pairing's reasons for an id one file holds, BEFORE's and AFTER's (``analysis.pair_arms``).
_ONE_SIDED = ("only in baseline", "only in candidate")
#: Its reasons for an expected id neither file holds and for an id the expected ids lack.
_MISSING, _UNKNOWN = "missing: no result in either arm", "unknown task id"
#: ``(the --expected-ids file's name, (BEFORE's ids, AFTER's ids))``: what
#: :func:`expected_look_alikes` needs besides the ids the comparison left out.
Expected = tuple[str, tuple[Iterable[str], Iterable[str]]]
#: A named look-alike pair: ``(id, the file holding it, its look-alike, the file holding that)``.
_Named = tuple[str, str, str, str]


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
            "nothing to pair; " + (f"{_alike_text(_named(alike, names))}; " if alike else "")
            + "check --key or the files"
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


def expected_look_alikes(
    expected: Expected | None, missing: tuple[Iterable[str], Iterable[str]], unknown: Iterable[str],
    names: tuple[str, str],
) -> list[_Named]:
    """The look-alike pairs of an expected id a file lacks and an id that file holds that the
    ``--expected-ids`` list lacks, as :func:`look_alike_pairs` finds them, named
    ``(expected id, the --expected-ids file, the file's id, the file)``, sorted.

    Args:
        expected: The ``--expected-ids`` file's name and each file's ids (:data:`Expected`), or
            ``None`` (no ``--expected-ids``: no pairs).
        missing: The expected ids BEFORE lacks, and those AFTER lacks.
        unknown: The ids either file holds that are not expected.
        names: How BEFORE and AFTER are named.

    Only the left-out ids are normalised; a file's ids are searched only for the few unknown ids
    that look like a missing one.
    """
    if expected is None:
        return []
    lacks = (set(missing[0]), set(missing[1]))
    near = {u for _, u in look_alike_pairs(lacks[0] | lacks[1], unknown)}
    named: list[_Named] = []
    for side, held in enumerate(expected[1]):
        pairs = look_alike_pairs(lacks[side], near.intersection(held)) if near else []  # one pass
        named += [(e, expected[0], u, names[side]) for e, u in pairs]
    return sorted(named)


def with_look_alikes(report: Any, names: tuple[str, str], expected: Expected | None = None) -> Any:
    """``report`` (an :class:`~ablation.report.AblationReport`) with a note naming the look-alike
    pairs among the ids its exclusions list as present in one file only and, with ``expected``,
    among the expected ids a file lacks and the ids the expected ids lack
    (:func:`expected_look_alikes`), or ``report`` itself when there is none."""
    sides: tuple[list[str], list[str]] = ([], [])
    missing: list[str] = []
    unknown: list[str] = []
    for item in report.excluded:
        if item.run is not None:
            continue
        for side, reason in enumerate(_ONE_SIDED):
            if item.reason.startswith(reason):
                sides[side].append(item.task_id)
        missing += [item.task_id] if item.reason.startswith(_MISSING) else []
        unknown += [item.task_id] if item.reason.startswith(_UNKNOWN) else []
    # an id only in baseline is one AFTER lacks, and the other way round
    lacks = ([*missing, *sides[1]], [*missing, *sides[0]])
    note = look_alike_note(*sides, names, expected_look_alikes(expected, lacks, unknown, names))
    return report if note is None else report.model_copy(update={"notes": [*report.notes, note]})


def numeric_look_alike_note(result: Any, names: tuple[str, str], expected: Expected | None) -> str | None:
    """:func:`look_alike_note` of a numeric comparison's ``result``
    (:class:`~ablation.analysis.numeric.NumericComparison`): its one-sided ids (with
    ``expected``, the expected ones only, as a verdict comparison's exclusions list them) and
    :func:`expected_look_alikes` of its expected ids without a value in an arm and its unknown ids."""
    unknown = set(result.unknown) if expected is not None else set()
    before, after = ([i for i in ids if i not in unknown] for ids in (result.only_baseline, result.only_candidate))
    also = expected_look_alikes(expected, (result.missing_baseline, result.missing_candidate), unknown, names)
    return look_alike_note(before, after, names, also)


def look_alike_note(
    only_before: Iterable[str], only_after: Iterable[str], names: tuple[str, str], also: Iterable[_Named] = ()
) -> str | None:
    """The sentence naming the :func:`look_alike_pairs` of two files' one-sided ids, and the
    already named pairs ``also`` (:func:`expected_look_alikes`), or ``None`` when there is none."""
    alike = [*_named(look_alike_pairs(only_before, only_after), names), *also]
    if not alike:
        return None
    return f"Look-alike ids: {_alike_text(alike)}; ids are exact keys: write them alike in both files"


def _alike(task_id: str) -> str:
    return (task_id if unicodedata.is_normalized("NFC", task_id) else unicodedata.normalize("NFC", task_id)).strip()


def _named(pairs: list[tuple[str, str]], names: tuple[str, str]) -> list[_Named]:
    """BEFORE's and AFTER's look-alike ``pairs``, each id with its file."""
    return [(b, names[0], a, names[1]) for b, a in pairs]


def _alike_text(pairs: list[_Named]) -> str:
    """``N pair(s) of ids differ only by ...: 'a' (FILE) and 'b' (FILE), ...`` (ids escaped)."""
    shown = "; ".join(f"{_escaped(b)} ({nb}) and {_escaped(a)} ({na})" for b, nb, a, na in pairs[:_SHOWN])
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
