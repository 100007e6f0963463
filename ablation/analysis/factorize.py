"""Task ids to integer codes in sorted order: ``np.unique(ids, return_inverse=True)``, faster.

``np.unique`` on a fixed-width unicode array sorts every string with numpy's introsort, about
a second per million ids, and does not profit from ids that are already in order (result files
usually list their tasks sorted, in the same order in both arms). Here the distinct ids are
found with a ``dict`` (hashing), only the distinct ids are sorted (Python's ``sorted``, which is
linear on sorted input and compares ``str`` by code point, as numpy does), and each id is mapped
to its rank with one more ``dict`` look-up; when both arms list the same sorted ids, the codes
are their positions. The result equals ``np.unique``'s (tested).

:func:`trial_keys` turns one arm's task codes and runs into sorted ``(task, run)`` keys: the
pairing finds duplicates, runs one arm lacks and each task's first-run row with them, and
sorts nothing when the rows already come in that order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "TrialKeys", "code_adders", "first_occurrences", "first_rows_of", "object_codes", "sorted_codes",
    "trial_keys", "unicode_ids",
]  # fmt: skip


def _increasing(ids: NDArray[Any]) -> bool:
    """True when ``ids`` (an object array of ``str``) is strictly increasing."""
    return len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1]))


def unicode_ids(ids: NDArray[Any]) -> NDArray[np.str_]:
    """Ids as a fixed-width unicode array: sorts in Python's ``str`` order, much faster."""
    if ids.dtype.kind == "U":
        return ids
    return np.asarray(ids, dtype=str) if len(ids) else np.zeros(0, dtype="<U1")


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
    return unicode_ids(distinct), codes


def object_codes(
    arms: Sequence[NDArray[Any]],
) -> tuple[NDArray[np.object_], list[NDArray[np.int64]]]:
    """:func:`sorted_codes` with the distinct ids as the arms' own ``str`` objects.

    No fixed-width copy of the ids is made (converting a million ids to a numpy unicode array
    costs more than the codes when both arms list the same sorted ids).
    """
    arrays = [np.asarray(a, dtype=object) for a in arms]
    first = arrays[0]
    if all(a is first or np.array_equal(a, first) for a in arrays[1:]) and _increasing(first):
        positions = np.arange(len(first), dtype=np.int64)  # one array for every arm (read only)
        return first, [positions] * len(arrays)
    items = np.concatenate(arrays).tolist()
    distinct = sorted(dict.fromkeys(items))
    rank = {task_id: i for i, task_id in enumerate(distinct)}
    codes = np.fromiter(map(rank.__getitem__, items), dtype=np.int64, count=len(items))
    bounds = np.cumsum([len(a) for a in arrays])[:-1]
    return np.array(distinct, dtype=object), list(np.split(codes, bounds))


@dataclass(frozen=True)
class TrialKeys:
    """One arm's trial keys ``task code * width + run``, sorted, with the row of each.

    Attributes:
        sorted: The keys in increasing order (ties, i.e. duplicates, in row order).
        order: Row of each sorted key, or ``None`` when the rows are already in key order (the
            usual case: a file listing its tasks sorted, one run each); no sort is done then.
        width: The multiplier of the task code (above every run index of both arms).
    """

    sorted: NDArray[np.int64]
    order: NDArray[np.int64] | None
    width: int

    def rows(self, positions: NDArray[np.int64]) -> NDArray[np.int64]:
        """Rows of the keys at ``positions`` of :attr:`sorted`."""
        return positions if self.order is None else self.order[positions]

    def first_repeat(self) -> tuple[int, int] | None:
        """``(row, earlier row)`` of the first row (in row order) whose key an earlier row has."""
        if self.order is None:  # keys strictly increasing in row order: no two are equal
            return None
        same = np.flatnonzero(self.sorted[1:] == self.sorted[:-1])
        if not same.size:
            return None
        later = self.rows(same + 1)
        j = int(np.argmin(later))
        return int(later[j]), int(self.rows(same[j : j + 1])[0])

    def first_rows(self, codes: NDArray[np.int64]) -> NDArray[np.int64]:
        """Row of the lowest run of each task of ``codes``, ``-1`` where the arm has no trial
        of it (one vectorised search for all the codes)."""
        start = np.searchsorted(self.sorted, codes * self.width)
        rows = np.full(len(codes), -1, dtype=np.int64)
        inside = np.flatnonzero(start < len(self.sorted))
        found = inside[self.sorted[start[inside]] < (codes[inside] + 1) * self.width]
        rows[found] = self.rows(start[found])
        return rows


def first_occurrences(codes: NDArray[np.int64]) -> tuple[NDArray[np.int64], Any]:
    """``np.unique(codes, return_index=True)``: the distinct codes and the index of each one's
    first occurrence, with no sort when the codes already come in order (rows of a file listing
    its tasks sorted: each code's first row is where the code changes, or every row when no
    code repeats; the index is then a slice, no copy)."""
    if len(codes) < 2:
        return codes, slice(None)
    step = codes[1:] - codes[:-1]
    if bool((step > 0).all()):
        return codes, slice(None)
    if bool((step >= 0).all()):
        starts = np.flatnonzero(np.concatenate(([True], step > 0)))
        return codes[starts], starts
    return np.unique(codes, return_index=True)  # type: ignore[no-any-return]


def first_rows_of(
    uniq: NDArray[np.object_], keys: TrialKeys | None, task_ids: list[str]
) -> NDArray[np.int64]:
    """Row of the lowest run of each of ``task_ids`` in the arm of ``keys`` (``None``: no such
    arm), ``-1`` where it has none; ``uniq``: the sorted distinct ids of the pairing.

    Vectorised: the drill-downs fetch up to a thousand trials, and two ``searchsorted`` calls
    per id were most of their time.
    """
    rows = np.full(len(task_ids), -1, dtype=np.int64)
    if keys is not None and task_ids:
        wanted = np.array(task_ids, dtype=object)
        at = np.searchsorted(uniq, wanted)
        inside = np.flatnonzero(at < len(uniq))
        known = inside[uniq[at[inside]] == wanted[inside]]
        rows[known] = keys.first_rows(at[known])
    return rows


def trial_keys(code: NDArray[np.int64], run: NDArray[np.int64], width: int) -> TrialKeys:
    """The :class:`TrialKeys` of one arm (a stable sort unless the keys already increase).

    With one run (``width`` 1 and every run 0) the keys are the codes themselves: no new array.
    """
    key = code if width == 1 and not run.any() else code * width + run
    if len(key) < 2 or bool(np.all(key[1:] > key[:-1])):
        return TrialKeys(sorted=key, order=None, width=width)
    order = np.argsort(key, kind="stable")
    return TrialKeys(sorted=key[order], order=order, width=width)


def code_adders(code: NDArray[np.int64], size: int) -> tuple[Any, Any]:
    """``(count(mask), total(values, mask))``: per-task row counts and sums over masked rows.

    When row ``i`` is task ``i`` (each task once, in order: ``code`` is ``arange(size)``) the
    sums are the masked values themselves, with no ``bincount``; ``+ 0.0`` turns ``-0.0`` into
    ``0.0`` as ``bincount``'s sum from ``0.0`` does, so both give the same floats. When every
    row is masked in and none holds a negative sign, the sums are a read-only view of
    ``values`` (no new array: 8 MB a column at a million tasks). The counts are then the mask
    viewed as ``uint8`` (it must not change while they are used); otherwise they are ``int64``.
    Callers treat both as numbers (``astype``, ``sum``, division) and never write the sums.
    """
    # size codes below size, strictly increasing: arange(size)
    if len(code) == size and (size == 0 or bool(np.all(code[1:] > code[:-1]))):

        def count_rows(mask: NDArray[np.bool_]) -> NDArray[np.uint8]:
            return mask.view(np.uint8)  # counts 0 and 1: the mask's own bytes, no new array

        def total_rows(values: NDArray[np.float64], mask: NDArray[np.bool_]) -> NDArray[np.float64]:
            if mask.all() and not np.signbit(values).any():
                same = values.view()
                same.flags.writeable = False
                return same
            out = np.where(mask, values, 0.0)
            out += 0.0
            return out

        return count_rows, total_rows

    def count(mask: NDArray[np.bool_]) -> NDArray[np.int64]:
        return np.bincount(code[mask], minlength=size)

    def total(values: NDArray[np.float64], mask: NDArray[np.bool_]) -> NDArray[np.float64]:
        # float64 already with weights: asarray only states the type (no copy)
        return np.asarray(np.bincount(code[mask], weights=values[mask], minlength=size), np.float64)

    return count, total
