"""A numeric ``--field`` compare matches scipy on the same pairs, and gates on a regression delta."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.cli import cli_env, run, run_here
from scipy import stats

from ablation.analysis.numeric import compare_numeric, task_means
from ablation.sources.result_files import load_results


def _files(tmp_path: Path) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 0.9, 25).round(4)
    cand = (base + rng.normal(-0.02, 0.05, 25)).round(4)
    paths = []
    for name, values in (("b", base), ("c", cand)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": f"t{i}", "m": {"score": float(v)}}) + "\n"
                                for i, v in enumerate(values)))
        paths.append(path)
    return paths[0], paths[1], base, cand


def test_numeric_compare_matches_scipy(tmp_path: Path) -> None:
    b, c, base, cand = _files(tmp_path)
    before = task_means(load_results(b, field="m.score", numeric=True), "m.score")
    after = task_means(load_results(c, field="m.score", numeric=True), "m.score")
    result = compare_numeric(before, after, field="m.score", regression_delta=0.03)
    t = stats.ttest_rel(cand, base)  # reference: scipy.stats.ttest_rel(candidate, baseline)
    assert result.t_pvalue == pytest.approx(t.pvalue, rel=1e-9)
    # 25 pairs: below MEAN_DIFFERENCE_MIN_N the t interval is not shown (as in the report).
    assert (result.ci_low, result.ci_high) == (None, None) and result.ci_note
    assert result.mean_difference == pytest.approx(float(np.mean(cand - base)))
    assert result.wilcoxon_pvalue == pytest.approx(stats.wilcoxon(cand, base).pvalue, rel=1e-9)
    d = cand - base
    assert result.regressions == [f"t{i}" for i in range(25) if d[i] < -0.03]
    assert result.improvements == [f"t{i}" for i in range(25) if d[i] > 0.03]
    gate = stats.ttest_rel(cand + 0.03, base, alternative="less")
    assert result.gate_pvalue == pytest.approx(gate.pvalue, rel=1e-9)


@pytest.mark.slow
def test_cli_numeric_field_is_detected_and_gated(tmp_path: Path) -> None:
    b, c, base, cand = _files(tmp_path)
    done = run(["compare", str(b), str(c), "--field", "m.score", "--format", "json"], cli_env())
    report = json.loads(done.stdout)
    assert report["t_pvalue"] == pytest.approx(stats.ttest_rel(cand, base).pvalue, rel=1e-9)
    assert done.returncode == (2 if report["verdict"] == "fail" else 0)
    loose = run_here(["compare", str(b), str(c), "--field", "m.score", "--regression-delta", "0.5"])
    assert loose.returncode == 0 and "regressions (drop > 0.5): none" in loose.stdout


def test_a_file_that_breaks_numeric_mode_is_told_which_file_chose_it(tmp_path: Path) -> None:
    # the baseline's verdict 2 makes the field numeric; the candidate's true then failed as "not a
    # number" with no word of the baseline file that decided it
    b, c = tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    b.write_text('{"id": "a", "passed": 2}\n{"id": "b", "passed": 3}\n')
    c.write_text('{"id": "a", "passed": true}\n{"id": "b", "passed": true}\n')
    done = run_here(["compare", str(b), str(c)])
    assert done.returncode == 1
    message = done.stderr.strip().splitlines()[-1]
    assert "c.jsonl:1: verdict 'passed' is not a number: True" in message
    assert "compared as a number because" in message and "b.jsonl:1:" in message
    # a baseline of both kinds: its own first line fails, and the number that decided is named
    b.write_text('{"id": "a", "passed": true}\n{"id": "b", "passed": 2}\n')
    message = run_here(["compare", str(b), str(c)]).stderr.strip().splitlines()[-1]
    assert "b.jsonl:1: verdict 'passed' is not a number: True" in message
    assert "because" in message and "b.jsonl:2: verdict 'passed' is a number" in message
