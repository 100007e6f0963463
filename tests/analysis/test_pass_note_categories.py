"""A PASS does not stand silently beside a category that got significantly worse.

200 tasks in two categories: the candidate loses 9 of category A's 40 tasks and gains 9 of B's
160 back, so the whole is level and every gate passes, while A, by the categories section's own
test (two-sided McNemar, Benjamini-Hochberg across the categories), is significantly worse. The
verdict line's note said nothing of it. Reference: scipy's exact binomial test of A's discordant
pairs and the Benjamini-Hochberg adjustment of statsmodels.
"""

from __future__ import annotations

import pytest
from scipy import stats as sps

from ablation import CampaignConfig, TaskResult, compare_results


def _rows(arm: str) -> list[TaskResult]:
    rows = []
    for i in range(200):
        category = "A" if i < 40 else "B"
        if arm == "baseline":
            passed = not (category == "B" and 40 <= i < 49)
        else:
            passed = not (category == "A" and i < 9)
        rows.append(TaskResult(task_id=f"t{i:03d}", arm=arm, passed=passed, category=category))
    return rows


def test_a_significantly_worse_category_is_named_beside_a_pass() -> None:
    report = compare_results(_rows("baseline"), _rows("candidate"), config=CampaignConfig(n_resamples=200))
    assert report.verdict == "pass"
    a = next(c for c in report.categories if c.category == "A")
    b = next(c for c in report.categories if c.category == "B")
    reference = [sps.binomtest(9, 9, 0.5).pvalue, sps.binomtest(0, 9, 0.5).pvalue]
    smt = pytest.importorskip("statsmodels.stats.multitest")
    adjusted = smt.multipletests(reference, method="fdr_bh")[1]
    assert a.adjusted_pvalue == pytest.approx(adjusted[0], rel=1e-9) and a.adjusted_pvalue < 0.05
    assert b.table.regressions == 0
    note = report.verdict_note or ""
    assert "category significantly worse" in note and "'A' (9 regressions, 0 improvements" in note
    assert "'B'" not in note


def test_no_category_clause_when_none_is_significantly_worse() -> None:
    base = _rows("baseline")
    report = compare_results(base, [r.model_copy(update={"arm": "candidate"}) for r in base],
                             config=CampaignConfig(n_resamples=200))  # fmt: skip
    assert report.verdict == "pass" and "categor" not in (report.verdict_note or "")
