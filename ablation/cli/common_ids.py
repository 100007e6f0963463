"""``compare`` refuses two result files that share no task id, and two sides that are the same
rows: there is nothing to pair, or nothing to compare.

Without the first check such a pair became a report of zero pairs whose headline said the arms
agree on every task, and a gate failure (exit 2) that blamed the inventory. Files with no id in
common are almost always a wrong ``--key`` or the wrong file, so it is bad input: one line, exit 1.
Without the second, ``compare export.jsonl export.jsonl --where arm=candidate`` (an export holds
both arms; ``--baseline-where`` picks BEFORE's) compared the candidate with itself: every pair
concordant, a PASS about nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ablation.errors import InputError
from ablation.sources.text import short_repr

__all__ = ["refuse_same_rows", "require_common_ids"]


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
        raise InputError(
            f"{names[0]} and {names[1]} have no task id in common ({len(ids)} and "
            f"{len(set(after.task_id.tolist()))} distinct ids, e.g. {short_repr(first_b)} and {short_repr(first_a)}): "
            "nothing to pair; check --key or the files"
        )


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
