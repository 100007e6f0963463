"""Task ids to integer codes in sorted order: ``np.unique(ids, return_inverse=True)``, faster.

``np.unique`` on a fixed-width unicode array sorts every string with numpy's introsort, about
a second per million ids, and does not profit from ids that are already in order (result files
usually list their tasks sorted, in the same order in both arms). Here the distinct ids are
found with a ``dict`` (hashing), only the distinct ids are sorted (Python's ``sorted``, which is
linear on sorted input and compares ``str`` by code point, as numpy does), and each id is mapped
to its rank with one more ``dict`` look-up; when both arms list the same sorted ids, the codes
are their positions. The result equals ``np.unique``'s (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["object_codes", "sorted_codes"]


def _increasing(ids: NDArray[Any]) -> bool:
    """True when ``ids`` (an object array of ``str``) is strictly increasing."""
    return len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1]))


def sorted_codes(
    arms: Sequence[NDArray[Any]],
) -> tuple[NDArray[np.str_], list[NDArray[np.int64]]]:
    """``(distinct ids sorted, code of each id per arm)`` for arms' arrays of ``str`` ids.

    Equal to ``np.unique`` of the concatenated ids with ``return_inverse=True``, split back per
    arm, for ids without trailing NUL characters (which a numpy unicode array drops). When every
    arm lists the same strictly increasing ids (sorted files of one run each), the codes are
    positions and nothing is hashed or sorted.
    """
    distinct, codes = object_codes(arms)
    return (distinct.astype(str) if len(distinct) else np.zeros(0, dtype="<U1")), codes


def object_codes(
    arms: Sequence[NDArray[Any]],
) -> tuple[NDArray[np.object_], list[NDArray[np.int64]]]:
    """:func:`sorted_codes` with the distinct ids as the arms' own ``str`` objects.

    No fixed-width copy of the ids is made (converting a million ids to a numpy unicode array
    costs more than the codes when both arms list the same sorted ids).
    """
    arrays = [np.asarray(a, dtype=object) for a in arms]
    first = arrays[0]
    if all(np.array_equal(a, first) for a in arrays[1:]) and _increasing(first):
        return first, [np.arange(len(first), dtype=np.int64) for _ in arrays]
    items = np.concatenate(arrays).tolist()
    distinct = sorted(dict.fromkeys(items))
    rank = {task_id: i for i, task_id in enumerate(distinct)}
    codes = np.fromiter(map(rank.__getitem__, items), dtype=np.int64, count=len(items))
    bounds = np.cumsum([len(a) for a in arrays])[:-1]
    return np.array(distinct, dtype=object), list(np.split(codes, bounds))
