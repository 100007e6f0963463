"""``compare --field`` on rows that carry more than the id and the value.

Real result files hold a category, a model name, notes beside the score. Each row's extra
fields must leave the numeric field where it is: the comparison of files with them equals the
comparison of the same values without them, and its means are numpy's means of the values.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.cli_shared import run_here

N = 60

#: Extra fields of a row, as real result files carry them (a string, a nested dict, a number
#: that is a metric of its own, a list).
EXTRAS = {
    "category": lambda i: f"c{i % 3}",
    "meta": lambda i: {"model": "m-2", "attempt": 1},
    "notes": lambda i: "checked by hand" if i % 2 else "",
    "steps": lambda i: i % 5,
    "tags": lambda i: ["a", "b"][: i % 3],
}


def _values(seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [round(float(v), 4) for v in rng.uniform(0.0, 1.0, N)]


def _write(path: Path, values: list[float], extras: tuple[str, ...]) -> None:
    rows = [
        {"id": f"t{i:02d}", "score": v, **{k: EXTRAS[k](i) for k in extras}} for i, v in enumerate(values)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _compare(folder: Path) -> tuple[int, str, str]:
    done = run_here(["compare", "before", "after", "--field", "score", "--format", "json"], cwd=folder)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("extras", [(k,) for k in EXTRAS] + [tuple(EXTRAS)])
def test_extra_fields_leave_the_numeric_field_where_it_is(tmp_path: Path, extras: tuple[str, ...]) -> None:
    before, after = _values(1), _values(2)
    for folder, kept in (("given", extras), ("oracle", ())):
        (tmp_path / folder).mkdir()
        _write(tmp_path / folder / "before", before, kept)
        _write(tmp_path / folder / "after", after, kept)
    got, want = _compare(tmp_path / "given"), _compare(tmp_path / "oracle")
    assert got[0] in (0, 2), got[2]
    assert got == want
    report = json.loads(got[1])
    assert report["n_pairs"] == N
    assert report["baseline_mean"] == pytest.approx(float(np.mean(before)), rel=1e-12)
    assert report["candidate_mean"] == pytest.approx(float(np.mean(after)), rel=1e-12)
