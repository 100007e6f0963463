"""A gate that passes beside an interval on the harmful side says why, whatever another gate did.

20 tasks, 4 regressions and no improvement, at 90%: the headline interval lies below 0 while the
one-sided exact McNemar p = 1/16 lets the regression gate pass. With every pair present the verdict
line said why; with one pair missing, the completeness gate failed the verdict and the same pass
beside the same interval stood silently ("Verdict: FAIL (...; failed: complete comparison). No
significant difference: ... 90% CI -39.1 pp to -4.1 pp"). The latency gate likewise. References:
scipy's binomial test and its paired t interval of the log latency ratios.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
from scipy import stats

from ablation import CampaignConfig, compare_results
from ablation.config import GatePolicy
from ablation.render import render
from ablation.render._format import verdict_line
from ablation.render.markdown import md_cell

IDS = [f"t{i}" for i in range(21)]


def _sparse(missing: bool):  # type: ignore[no-untyped-def]
    base = [{"task_id": t, "passed": i < 14} for i, t in enumerate(IDS)]
    cand = [{"task_id": t, "passed": i < 10} for i, t in enumerate(IDS)]  # t10..t13 regress
    if missing:
        cand.pop()  # t20, both fail: no candidate result
    else:
        base.pop(), cand.pop()
    expected = IDS if missing else IDS[:-1]
    config = CampaignConfig(n_resamples=200, confidence_level=0.9)
    return compare_results(base, cand, expected_ids=expected, config=config)


def test_a_failing_verdict_says_why_the_regression_gate_passed_beside_an_interval_below_0() -> None:
    assert stats.binomtest(4, 4, 0.5, alternative="greater").pvalue == 1 / 16  # >= alpha 0.05
    passed, failed = _sparse(missing=False), _sparse(missing=True)
    assert passed.verdict == "pass" and failed.verdict == "fail"
    for report in (passed, failed):
        gate = next(g for g in report.gates if g.name == "no significant regression")
        assert gate.status == "pass" and gate.pvalue == 1 / 16
        assert report.uplift.ci.high < 0 and report.summary == "no significant difference"
    clause = failed.verdict_note
    assert clause is not None and "lies below 0, but the regression gate's one-sided test gives p = 0.0625" in clause
    assert clause in (passed.verdict_note or "")  # the same words: the missing pair changes nothing
    assert clause in verdict_line(failed) and "failed: complete comparison" in verdict_line(failed)
    assert md_cell(verdict_line(failed)) in render(failed, "markdown")
    case = next(c for c in ET.fromstring(render(failed, "junit")).iter("testcase")
                if c.get("name") == "gate: no significant regression")  # fmt: skip
    out = case.find("system-out")
    assert out is not None and clause in (out.text or "")


def test_a_failing_verdict_without_such_a_pass_has_no_note() -> None:
    base = [{"task_id": t, "passed": True} for t in IDS]
    cand = [{"task_id": t, "passed": i >= 12} for i, t in enumerate(IDS)]  # 12 regressions: fails
    report = compare_results(base, cand, config=CampaignConfig(n_resamples=200))
    assert report.verdict == "fail" and report.verdict_note is None


def test_a_failing_verdict_says_why_the_latency_gate_passed_beside_a_ratio_above_its_limit() -> None:
    n = 20
    z = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * np.linspace(0.5, 1.5, n)
    sd = float(np.std(0.1 * z, ddof=1))
    logs = 1.5 * sd / math.sqrt(n) + 0.1 * z  # log ratios: t = 1.5 against limit 1, df 19
    ref = stats.ttest_1samp(logs, 0.0, alternative="greater")
    assert 0.05 < ref.pvalue < 0.1 and stats.ttest_1samp(logs, 0.0).confidence_interval(0.8).low > 0
    base = [{"task_id": f"t{i}", "passed": True, "latency_s": 1.0} for i in range(n)]
    cand = [{"task_id": f"t{i}", "passed": True, "latency_s": math.exp(v)} for i, v in enumerate(logs)]
    config = CampaignConfig(n_resamples=200, confidence_level=0.8, gates=GatePolicy(max_latency_ratio=1.0))
    report = compare_results(base, cand, expected_ids=[f"t{i}" for i in range(n + 1)], config=config)
    gate = next(g for g in report.gates if g.name == "no significant latency regression")
    assert report.verdict == "fail" and gate.status == "pass"
    assert report.latency is not None and report.latency.ratio_ci is not None
    assert report.latency.ratio_ci.low > 1.0
    assert report.verdict_note is not None and "interval of the latency ratio" in report.verdict_note
    assert report.verdict_note in verdict_line(report)
