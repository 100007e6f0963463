"""One test per question: the summary sentence, the regression gate and the JSON agree.

References are independent: scipy's binomial test and paired t test, exact enumeration of the
one-sided exact McNemar test's power. The cases are the configurations where the sentence and
the gate used to disagree, and the sparse table whose PASS stood beside an interval below 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import cli
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ablation import CampaignConfig, compare_results
from ablation.render._format import headline, verdict_line

FAST = CampaignConfig(n_resamples=200)


def _one_run(n11: int, b: int, c: int, n22: int) -> tuple[list[dict], list[dict]]:
    base = [True] * n11 + [True] * b + [False] * c + [False] * n22
    cand = [True] * n11 + [False] * b + [True] * c + [False] * n22
    ids = [f"t{i}" for i in range(len(base))]
    return (
        [{"task_id": i, "passed": v} for i, v in zip(ids, base, strict=True)],
        [{"task_id": i, "passed": v} for i, v in zip(ids, cand, strict=True)],
    )


def _repeated(spec: list[tuple[int, int, int]], runs: int = 3) -> tuple[list[dict], list[dict]]:
    """``spec``: (tasks, baseline passes, candidate passes) groups; run r passes if r < passes."""
    base, cand, i = [], [], 0
    for count, bp, cp in spec:
        for _ in range(count):
            for r in range(runs):
                base.append({"task_id": f"t{i}", "run": r, "passed": r < bp})
                cand.append({"task_id": f"t{i}", "run": r, "passed": r < cp})
            i += 1
    return base, cand


def _sign_flip_less(k: list[int]) -> float:
    """P(sum of sign-flipped |k_i| <= sum k_i), by exact integer counting over all 2^n signs."""
    counts = {0: 1}
    for m in (abs(x) for x in k):
        nxt: dict[int, int] = {}
        for s, c in counts.items():
            for t in (s + m, s - m):
                nxt[t] = nxt.get(t, 0) + c
        counts = nxt
    hits = sum(c for s, c in counts.items() if s <= sum(k))
    return hits / 2 ** len(k)


def _gate(report, name="no significant regression"):
    return next(g for g in report.gates if g.name == name)


def _exact_power(n: int, psi: float, delta: float, alpha: float) -> float:
    """Power of the one-sided exact McNemar test (H1: worse) at uplift ``delta`` < 0, by sums."""
    m = np.arange(n + 1)
    weights = sps.binom.pmf(m, n, psi)
    pi_b = (psi - delta) / (2 * psi)  # P(regression | discordant)
    power = 0.0
    for mm, w in zip(m, weights, strict=True):
        if mm == 0:
            continue
        b = np.arange(mm + 1)
        reject = sps.binom.sf(b - 1, mm, 0.5) < alpha
        power += w * sps.binom.pmf(b[reject], mm, pi_b).sum()
    return float(power)


def test_sparse_pass_beside_a_harmful_interval_says_why_in_the_verdict_line() -> None:
    # n = 20, b = 4, c = 0: the one-sided exact test gives 1/16. At 95% the headline interval
    # (Tango at 96% below 30 discordant pairs) reaches 0, as the test does; at 90% it lies below 0
    # and the verdict line says why the gate still passes.
    p_ref = sps.binomtest(4, 4, 0.5, alternative="greater").pvalue
    report = compare_results(*_one_run(10, 4, 0, 6), config=FAST)
    assert report.uplift.ci.low < 0 < report.uplift.ci.high
    assert "lies below 0" not in verdict_line(report)
    report = compare_results(
        *_one_run(10, 4, 0, 6), config=CampaignConfig(n_resamples=200, confidence_level=0.9)
    )
    assert report.uplift.ci.high < 0
    assert report.verdict == "pass"
    assert _gate(report).pvalue == pytest.approx(p_ref, rel=1e-12)
    line = verdict_line(report)
    assert "lies below 0" in line and f"p = {p_ref:.4g}" in line
    # No regression up to psi = 0.2 reaches 80% power (even delta = -psi has power < 0.8).
    assert _exact_power(20, 0.2, -0.2 + 1e-12, 0.05) < 0.8
    assert report.minimum_detectable_effect is None
    assert "underpowered" in line
    assert report.summary == "no significant difference"
    assert "H1: candidate worse" in headline(report)


def test_passing_verdict_names_the_exact_one_sided_mde() -> None:
    report = compare_results(*_one_run(60, 5, 3, 32), config=FAST)
    assert report.verdict == "pass"
    mde = report.minimum_detectable_effect
    assert mde is not None
    assert _exact_power(100, 0.08, -mde, 0.05) == pytest.approx(0.8, abs=1e-6)
    assert f"{100 * mde:.1f} pp" in verdict_line(report)
    assert "one-sided exact McNemar" in (report.minimum_detectable_effect_method or "")


@pytest.mark.parametrize(
    ("spec", "old_disagreement"),
    [
        # 30 tasks: 20 go 3/3 -> 2/3, 8 go 0/3 -> 3/3 (the sign test said "regression").
        ([(20, 3, 2), (8, 0, 3), (2, 1, 1)], "sentence regression, gate pass"),
        # 40 tasks: 8 go 3/3 -> 0/3, 5 go 1/3 -> 2/3 (the sign test said nothing).
        ([(8, 3, 0), (5, 1, 2), (27, 2, 2)], "sentence no difference, gate fail"),
    ],
)
def test_repeated_runs_sentence_and_gate_share_one_test(spec, old_disagreement) -> None:
    base, cand = _repeated(spec)
    report = compare_results(base, cand, config=FAST)
    k = [cp - bp for count, bp, cp in spec for _ in range(count)]  # 3 x per-task difference
    p_worse = _sign_flip_less(k)
    gate = _gate(report)
    assert (report.summary == "regression") == (gate.status == "fail"), old_disagreement
    assert gate.pvalue == pytest.approx(p_worse, rel=1e-9)
    assert report.uplift_test is not None
    assert report.uplift_test.pvalue_worse == gate.pvalue


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 30), st.integers(0, 12), st.integers(0, 12), st.integers(0, 30),
)
def test_one_run_sentence_gate_and_json_agree(n11: int, b: int, c: int, n22: int) -> None:
    if n11 + b + c + n22 == 0:
        return
    report = compare_results(*_one_run(n11, b, c, n22), config=FAST)
    gate = _gate(report)
    p_worse = sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0
    p_better = sps.binomtest(b, b + c, 0.5, alternative="less").pvalue if b + c else 1.0
    assert gate.pvalue == pytest.approx(p_worse, rel=1e-10)
    data = json.loads(report.model_dump_json())
    assert data["uplift_test"]["pvalue_worse"] == gate.pvalue
    assert data["uplift_test"]["pvalue_better"] == pytest.approx(p_better, rel=1e-10)
    assert (report.summary == "regression") == (gate.status == "fail")
    assert (report.summary == "improvement") == (p_better < 0.05)
    if report.verdict == "pass" and report.uplift.ci.high < 0:
        assert "lies below 0" in verdict_line(report)


def test_cli_compare_prints_the_reason_beside_the_pass(tmp_path: Path) -> None:
    base, cand = _one_run(10, 4, 0, 6)
    for name, rows in (("before.jsonl", base), ("after.jsonl", cand)):
        (tmp_path / name).write_text(
            "".join(json.dumps({"id": r["task_id"], "passed": r["passed"]}) + "\n" for r in rows)
        )
    proc = cli.run_here(["compare", "before.jsonl", "after.jsonl", "--format", "markdown", "--confidence", "0.9"],
                        cwd=tmp_path)  # in this process: the verdict line is what main prints
    assert proc.returncode == 0, proc.stderr
    verdict = next(line for line in proc.stdout.splitlines() if "Verdict: PASS" in line)
    assert "lies below 0" in verdict and "underpowered" in verdict
