"""``compare`` refuses two result files that share no task id: there is nothing to pair.

Without this check such a pair became a report of zero pairs whose headline said the arms agree on
every task, and a gate failure (exit 2) that blamed the inventory. Files with no id in common are
almost always a wrong ``--key`` or the wrong file, so it is bad input: one line, exit 1.
"""

from __future__ import annotations

from typing import Any

from ablation.errors import InputError
from ablation.sources.text import short_repr

__all__ = ["require_common_ids"]


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
