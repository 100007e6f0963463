"""Trial columns from objects: the same values and dtypes as a full read of every attribute.

``results_to_columns`` fills each array straight from the attribute reads and leaves the fields no
row set as constant (stride-0) columns; the reference here reads every attribute of every row into
a list and converts it with ``np.array`` (the conversion the columns replaced).
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers.random_trials import trial

from ablation.columns import (
    STATUS_CODES,
    constant_column,
    constant_value,
    fields_given,
    filled,
    known_rows,
    results_to_columns,
    share_ids,
    unknown,
)
from ablation.config import Provenance
from ablation.schema import TaskResult
from ablation.store import snapshot

_NUMBERS = {
    "run": np.int64, "passed": np.bool_, "latency_s": np.float64, "cost": np.float64,
    "tokens": np.float64, "critical": np.bool_, "attempts": np.int64,
}  # fmt: skip


def _reference(rows: list[TaskResult]) -> dict[str, np.ndarray]:
    """Every column from a list of every row's attribute (``None`` numbers become NaN)."""
    out = {name: np.array([getattr(r, name) for r in rows], dtype=dt) for name, dt in _NUMBERS.items()}
    out["status"] = np.array([STATUS_CODES[str(r.status)] for r in rows], dtype=np.int8)
    out["task_id"] = np.array([r.task_id for r in rows], dtype=object)
    out["category"] = np.array([r.category for r in rows], dtype=object)
    for name in ("error_type", "error_stage"):
        out[name] = np.array([getattr(r, name) or "" for r in rows], dtype=object)
    return out


def _sparse_rows(rng: random.Random, n: int) -> list[TaskResult]:
    """Random trials, each setting only some fields (so some columns are never given)."""
    names = ["run", "status", "passed", "latency_s", "cost", "tokens", "attempts", "category",
             "critical", "error_stage"]  # fmt: skip
    chosen = rng.sample(names, rng.randrange(1, len(names)))
    rows = []
    for i in range(n):
        full = trial(rng, f"t{i:04d}", "baseline", rng.randrange(3))
        given = {k: getattr(full, k) for k in chosen if rng.random() < 0.5}
        if given.get("status", "completed") == "completed":
            given.pop("error_stage", None)
        rows.append(TaskResult(task_id=full.task_id, **given))
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_columns_equal_a_full_read_in_values_and_dtypes(seed: int) -> None:
    rng = random.Random(seed)
    rows = _sparse_rows(rng, 300) if seed % 2 else [trial(rng, f"t{i}", "baseline", 0) for i in range(300)]
    assert any(r.latency_s is None for r in rows) or seed % 2  # None numbers met (full rows)
    cols, want = results_to_columns(rows, "baseline"), _reference(rows)
    for name, values in want.items():
        got = getattr(cols, name)
        if name == "category" and got is None:  # no row gave a category
            assert all(v is None for v in values.tolist())
            continue
        assert got.dtype == values.dtype, name
        np.testing.assert_array_equal(got, values, err_msg=name)


def test_fields_no_row_sets_are_constant_columns_of_their_dtype() -> None:
    """The benchmark's rows (id, arm, verdict, latency): the other numbers take no memory."""
    rows = [TaskResult(task_id=f"t{i}", arm="baseline", passed=i % 2 == 0, latency_s=i / 7) for i in range(50)]
    cols = results_to_columns(rows, "baseline", given=fields_given(rows))
    for name, value in (("run", 0), ("attempts", 1), ("cost", np.nan), ("tokens", np.nan), ("status", 0)):
        column = getattr(cols, name)
        constant, _ = constant_value(column)
        assert constant and column.strides == (0,) and not column.flags.writeable, name
        assert column.dtype == _NUMBERS.get(name, np.int8), name
        np.testing.assert_array_equal(column, np.full(50, value), err_msg=name)
    assert unknown(cols.cost) and unknown(cols.tokens) and not unknown(cols.latency_s)
    assert cols.latency_s.strides == (8,) and cols.passed.tolist() == [i % 2 == 0 for i in range(50)]


def test_constant_column_takes_the_dtype_of_a_numpy_scalar() -> None:
    assert constant_column(np.int64(3), 4).dtype == np.int64
    assert constant_column(np.float64(np.nan), 2).dtype == np.float64
    assert constant_column("", 2).dtype == object and constant_column(None, 2).tolist() == [None, None]
    assert filled(True, np.bool_, 3).tolist() == [True, True, True]
    assert constant_value(filled(7, np.int64, 0)) == (False, None)  # empty: no value to report
    assert not unknown(filled(0.5, np.float64, 3)) and not unknown(constant_column(np.nan, 3))


def test_a_store_snapshot_keeps_constant_numbers_numeric() -> None:
    """Columns given as constants (stride 0) go through a store snapshot as arrays of their
    own dtype (reference: the rows read in full)."""
    rows = [TaskResult(task_id=f"t{i:03d}", arm="baseline", passed=i % 3 == 0) for i in range(60)]
    got = snapshot.decode(snapshot.encode(results_to_columns(rows, "baseline")), "baseline")
    assert got is not None
    want = _reference(rows)
    for name in ("task_id", "run", "attempts", "cost", "passed"):
        assert getattr(got, name).dtype == want[name].dtype, name
        np.testing.assert_array_equal(getattr(got, name), want[name], err_msg=name)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_known_rows_are_the_mask_without_nan(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=200)
    values[rng.random(200) < 0.3] = np.nan
    mask = rng.random(200) < 0.6
    got: Any = known_rows(values, mask)
    np.testing.assert_array_equal(got, mask & ~np.isnan(values))
    assert known_rows(values, np.zeros(200, bool)) is None
    assert known_rows(np.full(200, np.nan), mask) is None
    assert known_rows(filled(np.nan, np.float64, 200), mask) is None
    np.testing.assert_array_equal(known_rows(filled(1.5, np.float64, 200), mask), mask)  # type: ignore[arg-type]


def test_fields_given_joins_every_chunk_and_refuses_a_stray_row_in_any() -> None:
    rows: list[Any] = [TaskResult(task_id=f"t{i}", arm="baseline") for i in range(9000)]  # 3 chunks
    rows[-1] = TaskResult(task_id="last", arm="baseline", cost=1.0)
    assert fields_given(rows) == {"task_id", "arm", "cost"}
    assert fields_given(rows, TaskResult) == {"task_id", "arm", "cost"}
    assert fields_given([]) == set()
    assert fields_given([*rows[:5000], {"task_id": "x"}, *rows[5000:]]) is None
    assert fields_given(rows, Provenance) is None  # models, but not of the class asked for
    light = [SimpleNamespace(task_id="t", passed=True)]
    assert fields_given(light) is None


def test_share_ids_shares_only_equal_ids_in_the_same_order() -> None:
    rows = [TaskResult(task_id=f"t{i}", arm="baseline", passed=True) for i in range(5)]
    first = results_to_columns(rows, "baseline")
    same = results_to_columns([r.model_copy(update={"arm": "candidate"}) for r in rows], "candidate")
    shuffled = results_to_columns([r.model_copy(update={"arm": "candidate"}) for r in rows[::-1]], "candidate")
    shorter = results_to_columns([r.model_copy(update={"arm": "candidate"}) for r in rows[:4]], "candidate")
    assert share_ids(first, same).task_id is first.task_id
    assert share_ids(first, same).passed is same.passed  # only the ids are taken
    assert share_ids(first, shuffled) is shuffled and share_ids(first, shorter) is shorter
