"""The numeric ``compare --field`` regression gate where its paired t test is undefined.

When every per-task difference is the same, the variance is 0: ``scipy.stats.ttest_rel`` gives
t = ±inf with p = 0 (a "significant" regression from 2 tasks), or NaN when all are 0, and with
differences equal in decimal but not in binary (0.4 − 0.3 and 0.8 − 0.7) a t of 3.6e15 made of
round-off. None of these is evidence of a test: the t p-values are ``None`` and the text says
why. The gate then reads the one difference there is: when every task is worse by the same amount
(beyond ``regression_delta``) it is inconclusive, so the verdict cannot pass; when no task is worse
(a candidate equal to its baseline, or better by the same amount everywhere) nothing regressed and
it passes. Elsewhere the gate's p is scipy's, at any scale and with an outlier.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from ablation.analysis.numeric import compare_numeric, numeric_holm
from ablation.config import GatePolicy
from ablation.render.numeric_doc import numeric_json_document, numeric_output, render_numeric

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy's 0/0 and overflow


def _compare(x: list[float] | np.ndarray, y: list[float] | np.ndarray, field: str = "score", **kw: object):  # type: ignore[no-untyped-def]
    ids = [f"t{i}" for i in range(len(x))]
    return compare_numeric(dict(zip(ids, map(float, x), strict=True)), dict(zip(ids, map(float, y), strict=True)),
                           field=field, **kw)  # type: ignore[arg-type]  # fmt: skip


FLAT = {  # (baseline, candidate, delta, lower is better, the gate)
    "two tasks, one drop": ([0.5, 0.75], [0.25, 0.5], 0.0, False, "inconclusive"),  # d = -0.25
    "decimal drop": ([0.3, 0.7], [0.2, 0.6], 0.0, False, "inconclusive"),  # equal up to round-off
    "many tasks": (np.linspace(0.2, 0.8, 150), np.linspace(0.2, 0.8, 150) - 0.125, 0.0, False, "inconclusive"),
    "a cost that rose": ([0.5, 0.75], [0.75, 1.0], 0.0, True, "inconclusive"),
    "decimal rise": ([0.3, 0.7, 0.1], [0.4, 0.8, 0.2], 0.0, False, "pass"),
    "all zero": ([0.5, 0.9, 0.1], [0.5, 0.9, 0.1], 0.0, False, "pass"),
    "a drop within the delta": ([0.5, 0.75], [0.25, 0.5], 0.3, False, "pass"),
    "a cost that fell": ([0.75, 1.0], [0.5, 0.75], 0.0, True, "pass"),
}


@pytest.mark.parametrize("case", list(FLAT))
def test_equal_differences_judge_their_one_difference(case: str) -> None:
    bx, by, delta, lower, status = FLAT[case]
    x, y = np.asarray(bx, dtype=float), np.asarray(by, dtype=float)
    ref = stats.ttest_rel(y, x, alternative="less")
    # scipy's answer is no evidence: not finite, or a t of round-off (|t| > 1e12)
    assert not math.isfinite(ref.statistic) or abs(ref.statistic) > 1e12
    # the premise, in exact decimal arithmetic on the values as written: one common difference
    common = {round(b - a, 9) for a, b in zip(bx, by, strict=True)}
    assert len(common) == 1
    worse = (common.pop() - delta > 0) if lower else (common.pop() + delta < 0)
    assert (status == "inconclusive") == worse
    c = _compare(x, y, field="cost" if lower else "score", regression_delta=delta)
    assert c.lower_is_better == lower
    gate = c.gates[1]
    assert gate.status == status and gate.pvalue is None
    assert (c.verdict, c.exit_code) == (("fail", 2) if worse else ("pass", 0))
    assert c.t_pvalue is None and c.gate_pvalue is None and c.ci_low is None and c.ci_high is None
    assert "variance is 0" in gate.evidence and "t statistic is undefined" in gate.evidence
    assert c.t_note is not None and f"all {x.size} per-task differences are equal" in c.t_note
    text = render_numeric(c)
    assert "paired t undefined (zero variance)" in text and "paired t p =" not in text


def test_gate_turned_off_says_it_could_not_have_run() -> None:
    c = _compare([0.5, 0.75], [0.25, 0.5], policy=GatePolicy(no_significant_regression=False))
    assert c.gates[1].status == "off" and "could not have run" in c.gates[1].evidence and c.verdict == "pass"


def test_json_holds_none_and_renders_again() -> None:
    c = _compare([0.5, 0.75], [0.25, 0.5])
    doc = json.loads(numeric_output([c], ["after.jsonl"], as_json=True))
    assert doc["t_pvalue"] is None and doc["gate_pvalue"] is None and doc["t_note"] == c.t_note
    assert "INCONCLUSIVE" in numeric_json_document("markdown", doc, ["after.jsonl"])


def test_holm_counts_an_undefined_t_as_no_claim() -> None:
    flat = _compare([0.5, 0.75], [0.75, 1.0])  # every task +0.25: t = +inf, p = 0 in scipy
    rng = np.random.default_rng(3)
    x = rng.uniform(0.2, 0.6, 30)
    y = x + rng.normal(0.05, 0.05, 30)
    summary = numeric_holm([flat, _compare(x, y)], ["flat", "varied"])
    rows = {r["name"]: r for r in summary["rows"]}
    assert rows["flat"]["pvalue"] == 1.0 and "1 with an undefined t" in summary["note"]
    ref = stats.ttest_rel(y, x, alternative="greater").pvalue  # the claim of improvement
    assert rows["varied"]["pvalue"] == pytest.approx(float(ref), rel=1e-9)


CASES = {
    "two tasks that differ": ([0.5, 0.75], [0.25, 0.625]),
    "an outlier": (np.zeros(10), np.array([-0.1] * 9 + [1e6])),
    "a shift of -1e300": (np.zeros(5), -np.array([1.0, 1.1, 1.2, 0.9, 1.05]) * 1e300),
    "tiny differences": (np.zeros(4), -np.array([1e-170, 3e-170, 2e-170, 7e-170])),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_otherwise_the_gate_is_scipys_one_sided_t(case: str, delta: float) -> None:
    x, y = (np.asarray(v, dtype=float) for v in CASES[case])
    s = math.ldexp(1.0, math.frexp(float(max(np.abs(x).max(), np.abs(y).max())))[1])  # exact rescaling
    ref = stats.ttest_rel(y / s + delta / s, x / s, alternative="less").pvalue
    c = _compare(x, y, regression_delta=delta)
    assert getattr(c, "t_note", None) is None and c.gate_pvalue == pytest.approx(float(ref), rel=1e-9)
    assert c.gates[1].status == ("fail" if ref < 0.05 else "pass")
