"""A numeric ``--field`` compare matches scipy on the same pairs, and gates on a regression delta."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.cli import run_here
from helpers.numeric_oracle import as_arm_runs
from scipy import stats

from ablation.analysis.numeric import ArmRuns, compare_numeric, task_means
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
    done = run_here(["compare", str(b), str(c), "--field", "m.score", "--format", "json"])
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
    assert "so the field is compared as a number" in message and "b.jsonl:1:" in message
    # a baseline of both kinds: its own first line fails, and the number that decided is named
    b.write_text('{"id": "a", "passed": true}\n{"id": "b", "passed": 2}\n')
    message = run_here(["compare", str(b), str(c)]).stderr.strip().splitlines()[-1]
    assert "b.jsonl:1: verdict 'passed' is not a number: True" in message
    assert "compared as a number" in message and "b.jsonl:2: verdict 'passed' is a number" in message


def test_gate_names_are_the_reports() -> None:
    from ablation.analysis.builtin_gates import GATE_COMPLETENESS, GATE_REGRESSION
    from ablation.analysis.numeric import GATE_NAMES

    assert GATE_NAMES == (GATE_COMPLETENESS, GATE_REGRESSION)


def _runs(done: dict[str, set[int]], seen: int = 3) -> ArmRuns:
    return as_arm_runs({t: (frozenset(range(seen)), frozenset(r)) for t, r in done.items()})


def test_min_completed_is_the_share_of_expected_trials_with_a_value() -> None:
    from ablation.config import GatePolicy

    ids = [f"t{i}" for i in range(6)]
    base = {t: 0.5 + 0.01 * i for i, t in enumerate(ids)}
    cand = {t: 0.52 + 0.01 * i for i, t in enumerate(ids)}
    runs = (_runs({t: {0, 1, 2} for t in ids}), _runs({t: ({0, 1} if t == "t0" else {0, 1, 2}) for t in ids}))
    strict = compare_numeric(base, cand, field="s", runs=runs)  # candidate: 17 of 18 trials
    gate = strict.gates[0]
    assert strict.trials == {"baseline": [18, 18], "candidate": [17, 18]} and gate.status == "fail"
    assert "candidate has a value for 17 of 18 expected trial(s)" in gate.evidence
    loose = compare_numeric(base, cand, field="s", runs=runs, policy=GatePolicy(min_completed=0.9))
    assert loose.gates[0].status == "pass" and loose.verdict == "pass"


def test_regression_gate_off_keeps_the_scipy_p() -> None:
    from ablation.config import GatePolicy

    rng = np.random.default_rng(7)
    x = rng.uniform(0.3, 0.9, 40)
    y = x - 0.05 + rng.normal(0, 0.02, 40)
    ids = [f"t{i}" for i in range(40)]
    policy = GatePolicy(no_significant_regression=False)
    c = compare_numeric(dict(zip(ids, x, strict=True)), dict(zip(ids, y, strict=True)), field="s", regression_delta=0.01, policy=policy)
    ref = stats.ttest_rel(y + 0.01, x, alternative="less").pvalue
    assert c.gates[1].status == "off" and c.gates[1].pvalue == pytest.approx(ref, rel=1e-9)
    assert "would have failed" in c.gates[1].evidence and c.verdict == "pass" and c.exit_code == 0
    assert c.t_pvalue == pytest.approx(stats.ttest_rel(y, x).pvalue, rel=1e-9)


def test_a_lower_is_better_field_regresses_when_it_rises() -> None:
    """``--field cost`` once failed 'no significant regression' because the cost fell."""
    base = {f"t{i}": 1.0 + 0.1 * i for i in range(8)}
    cheaper = {t: v / 2 + 0.01 * (i % 3) for i, (t, v) in enumerate(base.items())}
    down = compare_numeric(base, cheaper, field="metrics.cost")
    assert down.lower_is_better and down.verdict == "pass"
    assert down.improvements == list(base) and down.regressions == []
    up = compare_numeric(cheaper, base, field="cost", regression_delta=0.05)
    ids = list(base)
    ref = stats.ttest_rel([base[t] - 0.05 for t in ids], [cheaper[t] for t in ids], alternative="greater")
    assert abs(up.gate_pvalue - ref.pvalue) < 1e-12 and up.verdict == "fail"
    assert up.regressions == ids and up.mean_difference > 0
    score = compare_numeric(base, cheaper, field="score")  # higher is better, as before
    assert not score.lower_is_better and score.verdict == "fail"
