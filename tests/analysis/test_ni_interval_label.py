"""The non-inferiority interval is labelled by its own method, not by the test's.

With one run per task the report's ``noninferiority.ci`` is the two-sided ``1 - 2 alpha`` Tango
score interval that :func:`ablation.stats.noninferiority_test` computes beside its exact
unconditional p-value (docs/STATISTICS.md section 7): its label is the one
:func:`ablation.stats.paired_difference_interval` gives that interval, and the rendered
non-inferiority sentence names it beside the test the decision rests on (``p <= alpha``).
"""

from __future__ import annotations

import json

import pytest

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results, stats
from ablation.render import render
from ablation.report import AblationReport

MARGIN = 0.05
CONFIG = CampaignConfig(n_resamples=100, gates=GatePolicy(noninferiority_margin=MARGIN))


def _report(both_pass: int, b: int, c: int, both_fail: int, runs: int = 1) -> AblationReport:
    """Results with the given paired table (b regressions, c improvements), each run alike."""
    cells = [(True, True)] * both_pass + [(True, False)] * b + [(False, True)] * c
    cells += [(False, False)] * both_fail
    results = [
        TaskResult(task_id=f"t{i:03d}", arm=arm, passed=pair[k], run=run)
        for i, pair in enumerate(cells)
        for k, arm in enumerate(("baseline", "candidate"))
        for run in range(runs)
    ]
    base = [r for r in results if r.arm == "baseline"]
    cand = [r for r in results if r.arm == "candidate"]
    return compare_results(base, cand, config=CONFIG)


@pytest.mark.parametrize(
    "counts", [(40, 2, 8, 10), (26, 3, 5, 26), (10, 25, 2, 23)],
    ids=["non-inferior", "inconclusive", "regression"],
)  # fmt: skip
def test_the_interval_is_the_tango_interval_at_one_minus_two_alpha_and_says_so(
    counts: tuple[int, int, int, int],
) -> None:
    report = _report(*counts)
    ni = report.noninferiority
    assert ni is not None
    level = 1 - 2 * CONFIG.alpha
    tango = stats.paired_difference_interval(*counts, method="tango", confidence_level=level)
    test = stats.noninferiority_test(*counts, margin=MARGIN, alpha=CONFIG.alpha)
    assert (ni.ci.low, ni.ci.high) == (tango.confidence_interval.low, tango.confidence_interval.high)
    assert (ni.ci.low, ni.ci.high) == (test.confidence_interval.low, test.confidence_interval.high)
    assert ni.ci.confidence_level == pytest.approx(level)
    assert ni.ci.method == tango.method  # the interval's own name
    assert ni.method == test.method and ni.ci.method != ni.method
    stored = json.loads(report.model_dump_json())["noninferiority"]
    assert stored["ci"]["method"] == tango.method and stored["method"] == test.method


def test_a_pass_names_the_interval_beside_the_test_it_rests_on() -> None:
    counts = (40, 2, 8, 10)
    report = _report(*counts)
    ni = report.noninferiority
    assert ni is not None and ni.decision == "non-inferior"
    # STATISTICS.md section 7: non-inferior when the exact p <= alpha; the 1 - 2 alpha Tango
    # interval's lower limit is then above -margin.
    assert ni.pvalue <= ni.alpha and ni.ci.low > -MARGIN
    tango = stats.paired_difference_interval(*counts, method="tango", confidence_level=0.9)
    text = render(report, "markdown")
    section = text.split("### Non-inferiority", 1)[1].split("###", 1)[0]
    assert "NON-INFERIOR: 90% CI" in section
    assert f"({tango.method}); {ni.method}:" in section
    assert f"p = {ni.pvalue:.3g}, alpha 0.05" in section


def test_with_repeated_runs_the_betting_interval_keeps_its_own_name() -> None:
    report = _report(40, 2, 8, 10, runs=2)
    ni = report.noninferiority
    assert ni is not None
    assert ni.ci.method.startswith("fixed-n betting interval") and ni.method.startswith("betting e-value")
