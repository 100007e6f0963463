"""The paired analysis: tables, McNemar, uplift, inventory and repeated runs.

Reference values come from exact rational arithmetic or scipy (the call is in a comment).
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from helpers.pairing_oracle import pair_arrays
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.analysis.build import build_report, report_from_results


def exact_mcnemar(b: int, c: int) -> float:
    """Two-sided exact McNemar with fractions: min(1, 2 * P(X <= min(b, c)))."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(Fraction(comb(n, k), 2**n) for k in range(min(b, c) + 1))
    return float(min(Fraction(1), 2 * tail))


def paired(
    cells: dict[tuple[bool, bool], int], **extra: object
) -> tuple[list[TaskResult], list[TaskResult]]:
    """Results with the given counts of (baseline passed, candidate passed) pairs."""
    base, cand = [], []
    i = 0
    for (bp, cp), k in cells.items():
        for _ in range(k):
            base.append(TaskResult(task_id=f"t{i:04d}", arm="baseline", passed=bp, **extra))
            cand.append(TaskResult(task_id=f"t{i:04d}", arm="candidate", passed=cp, **extra))
            i += 1
    return base, cand


def table(n11: int, b: int, c: int, n22: int) -> dict[tuple[bool, bool], int]:
    return {(True, True): n11, (True, False): b, (False, True): c, (False, False): n22}


FAST = CampaignConfig(n_resamples=2000)


def test_fixture_a_and_b_same_totals_different_evidence() -> None:
    report_a = compare_results(*paired(table(80, 0, 10, 10)), config=FAST)
    report_b = compare_results(*paired(table(70, 10, 20, 0)), config=FAST)
    assert report_a.baseline.passes == report_b.baseline.passes == 80
    assert report_a.candidate.passes == report_b.candidate.passes == 90
    # scipy.stats.binomtest(0, 10).pvalue == 0.001953125; binomtest(10, 30).pvalue == 0.0987371467
    assert report_a.mcnemar.pvalue == pytest.approx(0.001953125, rel=1e-9)
    assert report_b.mcnemar.pvalue == pytest.approx(0.0987371467, rel=1e-9)
    assert report_b.mcnemar.pvalue == pytest.approx(binomtest(10, 30).pvalue, rel=1e-9)
    assert report_a.regressions == []
    assert report_b.regressions == [f"t{i:04d}" for i in range(70, 80)]
    assert len(report_b.improvements) == 20
    assert report_b.table.model_dump() == {
        "both_pass": 70,
        "regressions": 10,
        "improvements": 20,
        "both_fail": 0,
    }


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [(4, 13, 0.0490417), (3, 3, 1.0), (0, 0, 1.0), (10, 0, 0.001953125)],
)
def test_mcnemar_reference_points(b: int, c: int, expected: float) -> None:
    report = compare_results(*paired(table(5, b, c, 5)), config=FAST)
    assert report.mcnemar.pvalue == pytest.approx(expected, rel=1e-6)
    assert report.mcnemar.pvalue == pytest.approx(exact_mcnemar(b, c), rel=1e-12)


def test_chi_square_would_differ_at_4_13() -> None:
    report = compare_results(*paired(table(5, 4, 13, 5)), config=FAST)
    # The uncorrected chi-square approximation gives 0.0523 (scipy.stats.chi2.sf(81/17, 1)):
    # the report's exact p is below 0.05 where the approximation is not.
    assert report.mcnemar.pvalue < 0.05 < 0.0523
    assert "exact" in report.mcnemar.method.lower()


def test_equal_flips_give_zero_uplift() -> None:
    report = compare_results(*paired(table(4, 3, 3, 4)), config=FAST)
    assert report.uplift.estimate == 0.0
    assert report.summary == "no significant difference"


def test_no_discordant_pairs_is_said() -> None:
    report = compare_results(*paired(table(6, 0, 0, 4)), config=FAST)
    assert report.mcnemar.pvalue == 1.0
    assert report.summary == "no discordant pairs"
    assert report.mcnemar.note and "no discordant" in report.mcnemar.note
    assert report.zero_regression_upper_bound == pytest.approx(1 - 0.05 ** (1 / 10))


def test_all_regressions_named_as_regression() -> None:
    report = compare_results(*paired(table(0, 10, 0, 0)), config=FAST)
    assert report.mcnemar.pvalue == pytest.approx(0.001953125, rel=1e-9)
    assert report.uplift.estimate == -1.0
    assert report.summary == "regression"
    assert len(report.regressions) == 10


def test_uplift_exact_fraction_and_relative() -> None:
    # baseline 1/3 -> candidate 2/3
    report = compare_results(*paired(table(1, 0, 1, 1)), config=FAST)
    assert report.uplift.estimate == 1 / 3
    assert report.uplift.relative == 1.0
    # baseline 0/2 -> 1/2: relative uplift undefined
    report = compare_results(*paired(table(0, 0, 1, 1)), config=FAST)
    assert report.uplift.estimate == 0.5
    assert report.uplift.relative is None


def test_intervals_contain_estimate_and_pairing_shown() -> None:
    report = compare_results(*paired(table(70, 10, 20, 0)), config=FAST)
    u = report.uplift
    assert u.ci.low <= u.estimate <= u.ci.high
    assert u.tango_ci is not None and u.tango_ci.low <= u.estimate <= u.tango_ci.high
    assert u.se_paired is not None and u.se_unpaired is not None
    # se_paired = sqrt((b + c) - (b - c)^2 / n) / n  (STATISTICS.md section 2, Wald variance)
    assert u.se_paired == pytest.approx(np.sqrt(30 - 100 / 100) / 100)
    assert "Tango" in u.tango_ci.method


def test_inventory_one_side_only_is_named() -> None:
    base, cand = paired(table(5, 1, 2, 2))
    base.append(TaskResult(task_id="only-base", arm="baseline", passed=True))
    cand.append(TaskResult(task_id="only-cand", arm="candidate", passed=False))
    report = compare_results(base, cand, config=FAST)
    reasons = {e.task_id: e.reason for e in report.excluded}
    assert set(reasons) == {"only-base", "only-cand"}
    assert "only in baseline" in reasons["only-base"]
    assert report.n_paired == 10
    assert report.n_tasks == 12


def test_expected_ids_reports_missing_and_unknown() -> None:
    base, cand = paired(table(2, 0, 1, 0))
    expected = ["t0000", "t0001", "t0002", "never-ran"]
    report = compare_results(base[:2], cand, expected_ids=expected[:2] + expected[3:], config=FAST)
    reasons = {e.task_id: e.reason for e in report.excluded}
    assert "missing" in reasons["never-ran"]
    assert "unknown task id" in reasons["t0002"]
    assert report.n_tasks == 3


def test_duplicate_results_rejected() -> None:
    base, cand = paired(table(2, 0, 0, 0))
    with pytest.raises(ValueError, match="t0000"):
        compare_results([*base, base[0]], cand, config=FAST)


def test_task_order_does_not_change_statistics() -> None:
    base, cand = paired(table(30, 7, 12, 11), latency_s=1.0)
    rng = np.random.default_rng(3)
    shuffled = [base[i] for i in rng.permutation(len(base))] + [
        cand[i] for i in rng.permutation(len(cand))
    ]
    one = report_from_results([*base, *cand], config=FAST)
    two = report_from_results(shuffled, config=FAST)
    strip = {"provenance"}
    assert one.model_dump(exclude=strip) == two.model_dump(exclude=strip)


def test_latency_uses_completed_pairs_only() -> None:
    base, cand = paired(table(6, 0, 0, 0), latency_s=2.0)
    cand[0] = TaskResult(
        task_id="t0000",
        arm="candidate",
        status="error",
        passed=False,
        latency_s=None,
        error_type="RuntimeError",
    )
    cand[1] = cand[1].model_copy(update={"latency_s": 1.0})
    report = compare_results(base, cand, config=FAST)
    assert report.latency is not None
    assert report.latency.n_pairs == 5
    assert report.latency.n_left_out == 1
    assert report.latency.mean_difference == pytest.approx(-1.0 / 5)
    assert report.candidate.errors == 1


def test_quality_scorer_errors_left_out_and_counted() -> None:
    base, cand = paired(table(4, 0, 0, 0))
    base = [r.model_copy(update={"quality": {"q": 50.0}}) for r in base]
    cand = [r.model_copy(update={"quality": {"q": 60.0}}) for r in cand]
    cand[0] = cand[0].model_copy(update={"quality": {}, "quality_errors": {"q": "ValueError: nan"}})
    report = compare_results(base, cand, config=FAST)
    q = report.quality["q"]
    assert q.n_pairs == 3 and q.n_left_out == 1
    assert q.scorer_errors_candidate == 1 and q.scorer_errors_baseline == 0
    assert q.mean_difference == pytest.approx(10.0)


def test_on_error_exclude_lists_pair() -> None:
    base, cand = paired(table(3, 0, 1, 0))
    cand[0] = TaskResult(
        task_id="t0000", arm="candidate", status="timeout", passed=False, error_type="Timeout"
    )
    report = compare_results(base, cand, config=CampaignConfig(on_error="exclude", n_resamples=500))
    assert report.n_paired == 3
    assert any(e.task_id == "t0000" and "timeout" in e.reason for e in report.excluded)
    fail_report = compare_results(base, cand, config=FAST)
    assert fail_report.n_paired == 4 and "t0000" in fail_report.regressions


def repeated(stable: dict[str, tuple[int, int]], runs: int = 3) -> list[TaskResult]:
    """Results with runs per task: id -> (baseline passes, candidate passes)."""
    out = []
    for tid, (pb, pc) in stable.items():
        for run in range(runs):
            out.append(TaskResult(task_id=tid, arm="baseline", run=run, passed=run < pb))
            out.append(TaskResult(task_id=tid, arm="candidate", run=run, passed=run < pc))
    return out


def test_repeated_runs_use_task_as_unit() -> None:
    spec = {f"reg{i}": (3, 0) for i in range(4)}
    spec.update({f"imp{i}": (0, 3) for i in range(8)})
    spec.update({f"same{i}": (3, 3) for i in range(10)})
    spec["flaky"] = (1, 2)
    results = repeated(spec)
    report = report_from_results(results, config=FAST)
    assert report.runs == 3
    assert report.n_paired == len(spec)
    # Task-level: 4 tasks worse, 9 better (flaky is 1/3 -> 2/3): exact sign test on tasks.
    assert report.mcnemar.pvalue == pytest.approx(exact_mcnemar(4, 9), rel=1e-12)
    # Feeding the 3n runs as independent pairs (epoch j with epoch j) would claim far more
    # evidence: b = 12 + 1 and c = 24 + 2 gives a much smaller, wrong p-value.
    naive = report_from_results(
        [r.model_copy(update={"task_id": f"{r.task_id}#{r.run}", "run": 0}) for r in results],
        config=FAST,
    )
    assert naive.table.regressions == 12 and naive.table.improvements == 25
    assert naive.mcnemar.pvalue < 0.05 < report.mcnemar.pvalue
    assert report.repeated is not None
    assert report.repeated.t_ci.low <= report.uplift.estimate <= report.repeated.t_ci.high
    # paired t on the per-task differences (scipy.stats.ttest_rel(cand_means, base_means))
    from scipy.stats import ttest_rel

    ids = sorted(spec)
    fb = np.array([spec[t][0] / 3 for t in ids])
    fc = np.array([spec[t][1] / 3 for t in ids])
    assert report.repeated.t_pvalue == pytest.approx(ttest_rel(fc, fb).pvalue, rel=1e-9)
    assert [f.task_id for f in report.flaky] == ["flaky"]
    assert report.flaky[0].flaky_in == ["baseline", "candidate"]
    assert sorted(report.repeated.stable_regressions) == [f"reg{i}" for i in range(4)]
    assert report.uplift.tango_ci is None and report.uplift.t_ci is not None


def test_categories_and_critical() -> None:
    base, cand = paired(table(4, 2, 2, 2))
    cats = ["a", "b"] * 5
    base = [r.model_copy(update={"category": c}) for r, c in zip(base, cats, strict=True)]
    cand = [
        r.model_copy(update={"category": c, "critical": r.task_id == "t0004"})
        for r, c in zip(cand, cats, strict=True)
    ]
    report = compare_results(base, cand, config=FAST)
    assert [c.category for c in report.categories] == ["a", "b"]
    assert sum(c.n for c in report.categories) == 10
    assert report.critical_regressions == ["t0004"]
    assert report.verdict == "fail"
    assert all(c.adjusted_pvalue is not None for c in report.categories)


def test_report_json_round_trip() -> None:
    report = compare_results(*paired(table(7, 2, 3, 1)), config=FAST)
    data = json.loads(report.model_dump_json())
    assert data["table"]["regressions"] == 2
    assert type(report).model_validate_json(report.model_dump_json()) == report


def test_array_fast_path_matches_results_path() -> None:
    rng = np.random.default_rng(0)
    b = rng.random(300) < 0.6
    c = rng.random(300) < 0.7
    ids = [f"t{i:04d}" for i in range(300)]
    results = [
        TaskResult(task_id=t, arm="baseline", passed=bool(x)) for t, x in zip(ids, b, strict=True)
    ]
    results += [
        TaskResult(task_id=t, arm="candidate", passed=bool(x)) for t, x in zip(ids, c, strict=True)
    ]
    one = report_from_results(results, config=FAST)
    two = build_report(pair_arrays(ids, b, c), config=FAST)
    exclude = {"provenance", "details"}
    assert one.model_dump(exclude=exclude) == two.model_dump(exclude=exclude)


def test_latency_gate_uses_an_exact_shifted_t_test() -> None:
    from scipy.stats import ttest_1samp

    from ablation import GatePolicy

    rng = np.random.default_rng(11)
    base_lat = rng.uniform(1.0, 3.0, 40)
    cand_lat = base_lat * rng.uniform(1.05, 1.35, 40)
    base, cand = paired(table(40, 0, 0, 0))
    base = [
        r.model_copy(update={"latency_s": float(v)}) for r, v in zip(base, base_lat, strict=True)
    ]
    cand = [
        r.model_copy(update={"latency_s": float(v)}) for r, v in zip(cand, cand_lat, strict=True)
    ]
    config = CampaignConfig(
        n_resamples=500,
        gates=GatePolicy(no_significant_regression=True, max_latency_ratio=1.1),
    )
    report = compare_results(base, cand, config=config)
    assert report.latency is not None and report.latency.ratio_limit == 1.1
    # scipy.stats.ttest_1samp(log(cand / base), log(1.1), alternative="greater")
    expected = ttest_1samp(np.log(cand_lat / base_lat), np.log(1.1), alternative="greater").pvalue
    assert report.latency.ratio_limit_pvalue == pytest.approx(expected, rel=1e-9)
    gate = next(g for g in report.gates if "latency" in g.name)
    assert gate.pvalue == pytest.approx(expected, rel=1e-9)
    assert gate.adjusted_pvalue is None  # judged at alpha on its own, beside the regression gate
    assert report.n_critical == 0


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    outcomes=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40),
    seed=st.integers(0, 2**16),
)
def test_report_statistics_do_not_depend_on_result_order(
    outcomes: list[tuple[bool, bool]], seed: int
) -> None:
    results = []
    for i, (b, c) in enumerate(outcomes):
        results.append(TaskResult(task_id=f"t{i}", arm="baseline", passed=b))
        results.append(TaskResult(task_id=f"t{i}", arm="candidate", passed=c))
    shuffled = [results[i] for i in np.random.default_rng(seed).permutation(len(results))]
    config = CampaignConfig(n_resamples=200, seed=seed % 97)
    one = report_from_results(results, config=config)
    two = report_from_results(shuffled, config=config)
    exclude = {"provenance"}
    assert one.model_dump(exclude=exclude) == two.model_dump(exclude=exclude)
    assert 0.0 <= one.mcnemar.pvalue <= 1.0 and 0.0 <= one.mcnemar.midp_pvalue <= 1.0
    u = one.uplift
    assert u.tango_ci is not None and -1.0 <= u.tango_ci.low <= u.estimate <= u.tango_ci.high <= 1.0
    assert u.ci.low <= u.estimate <= u.ci.high


def test_cost_totals_count_every_trial_that_reports_a_cost() -> None:
    results = []
    for run, cost in enumerate((1.0, 2.0, 6.0)):
        results.append(TaskResult(task_id="a", arm="baseline", run=run, passed=True, cost=cost))
        results.append(TaskResult(task_id="a", arm="candidate", run=run, passed=True, cost=0.5))
    results.append(TaskResult(task_id="b", arm="baseline", run=0, passed=True, cost=3.0))
    results.append(TaskResult(task_id="b", arm="candidate", run=0, passed=True))  # no cost
    report = report_from_results(results, config=FAST)
    assert report.baseline.cost_total == 12.0 and report.baseline.cost_mean == 3.0
    assert report.candidate.cost_total == 1.5 and report.candidate.cost_mean == 0.5
    assert report.cost is not None and report.cost.n_pairs == 1 and report.cost.n_left_out == 1


def test_pass_fractions_are_computed_once_and_shared_read_only() -> None:
    """Every report section reads one array of per-task fractions; none can change it for the rest."""
    rng = np.random.default_rng(7)
    data = pair_arrays([f"t{i:02d}" for i in range(50)], rng.random(50) < 0.5, rng.random(50) < 0.6)
    fraction = data.baseline.fraction
    assert fraction is data.baseline.fraction
    np.testing.assert_array_equal(fraction, data.baseline.passes / data.baseline.runs)
    with pytest.raises(ValueError, match="read-only"):
        fraction[0] = 0.5


def test_regression_ids_are_the_masked_ids_in_task_order() -> None:
    from ablation.analysis.breakdowns import ids

    rng = np.random.default_rng(11)
    # 20 000 tasks: selections above and below the 4 096 ids where the bytes of the mask are read
    n = 20_000
    data = pair_arrays([f"t{i:05d}" for i in range(n)], rng.random(n) < 0.5, rng.random(n) < 0.5)
    strided = (rng.random(2 * n) < 0.5)[::2]  # a view that is not contiguous
    for mask in (rng.random(n) < 0.3, rng.random(n) < 0.01, np.zeros(n, dtype=bool),
                 np.ones(n, dtype=bool), strided):  # fmt: skip
        assert ids(data, mask) == [
            t for t, m in zip(data.task_ids, mask.tolist(), strict=True) if m
        ]


@settings(max_examples=100, deadline=None)
@given(cells=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=40))
def test_run_outcomes_equal_the_per_task_concatenation(cells: list[tuple[int, int]]) -> None:
    from ablation.analysis.breakdowns import _run_outcomes

    passes = np.array([min(p, r) for p, r in cells], dtype=np.int64)
    runs = np.array([r for _, r in cells], dtype=np.int64)
    values, groups = _run_outcomes(passes, runs)
    # the former construction, one np.repeat per task
    expected = [np.repeat([1.0, 0.0], [p, r - p]) for p, r in zip(passes, runs, strict=True)]
    assert values.tolist() == (np.concatenate(expected).tolist() if expected else [])
    assert groups.tolist() == np.repeat(np.arange(runs.size), runs).tolist()
    assert values.dtype == np.float64


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(st.tuples(*[st.integers(0, 5)] * 4), min_size=1, max_size=60),
    huge=st.booleans(),
)
def test_distinct_rows_equal_numpy_unique_by_rows(rows: list[tuple[int, ...]], huge: bool) -> None:
    from ablation.analysis.breakdowns import _distinct_rows

    table = np.array(rows, dtype=np.int64)
    if huge:  # runs past int64 codes: the rows are compared as rows
        table[0, 1] = 60_000
    first, which = _distinct_rows(table)
    # numpy.unique(table, axis=0, return_index=True, return_inverse=True)
    _, ref_first, ref_which = np.unique(table, axis=0, return_index=True, return_inverse=True)
    assert first.tolist() == ref_first.tolist()
    assert which.tolist() == ref_which.reshape(-1).tolist()
