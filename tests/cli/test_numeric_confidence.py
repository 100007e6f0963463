"""``compare --field`` on a numeric field: the interval follows ``--confidence`` and is shown
from ``MEAN_DIFFERENCE_MIN_N`` pairs only, as in the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.cli_shared import run_here
from scipy import stats as sps

from ablation.stats import MEAN_DIFFERENCE_MIN_N


def _compare(tmp_path: Path, n: int, *extra: str) -> tuple[dict, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    x = rng.random(n)
    y = np.clip(x + rng.normal(0.02, 0.1, n), 0, 1)
    for name, v in (("before.jsonl", x), ("after.jsonl", y)):
        (tmp_path / name).write_text(
            "".join(json.dumps({"id": f"t{i}", "score": float(s)}) + "\n" for i, s in enumerate(v))
        )
    proc = run_here(["compare", "before.jsonl", "after.jsonl", "--field", "score", "--format", "json",
                     *extra], cwd=tmp_path)  # fmt: skip
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout), x, y


def test_numeric_interval_uses_the_confidence_flag(tmp_path: Path) -> None:
    n = MEAN_DIFFERENCE_MIN_N + 20
    out, x, y = _compare(tmp_path, n, "--confidence", "0.9")
    ref = sps.ttest_rel(y, x).confidence_interval(0.9)
    assert out["confidence_level"] == 0.9
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((ref.low, ref.high), rel=1e-9)


def test_numeric_interval_is_not_shown_below_the_minimum(tmp_path: Path) -> None:
    out, *_ = _compare(tmp_path, 30)
    assert out["ci_low"] is None and out["ci_high"] is None
    assert str(MEAN_DIFFERENCE_MIN_N) in out["ci_note"]


def test_several_after_files_get_a_holm_summary(tmp_path: Path) -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(1)
    n = 40
    x = rng.random(n)
    afters = {"a.jsonl": x + 0.05 + rng.normal(0, 0.1, n), "b.jsonl": x + rng.normal(0, 0.1, n)}
    (tmp_path / "before.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "score": float(s)}) + "\n" for i, s in enumerate(x))
    )
    for name, v in afters.items():
        (tmp_path / name).write_text(
            "".join(json.dumps({"id": f"t{i}", "score": float(s)}) + "\n" for i, s in enumerate(v))
        )
    proc = run_here(["compare", "before.jsonl", "a.jsonl", "b.jsonl", "--field", "score", "--format", "json"],
                    cwd=tmp_path)  # fmt: skip
    out = json.loads(proc.stdout)  # one JSON document
    better = [sps.ttest_rel(v, x, alternative="greater").pvalue for v in afters.values()]
    expected = multipletests(better, method="holm")[1]
    got = [row["holm_pvalue"] for row in out["summary"]["rows"]]
    assert got == pytest.approx(list(expected), rel=1e-9)
    assert sorted(out["candidates"]) == ["a.jsonl", "b.jsonl"]
