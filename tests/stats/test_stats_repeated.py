"""Variance components, design effect, cluster bootstrap, repeated-runs fast path, Fisher."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from ablation.stats import (
    cluster_bootstrap,
    design_effect,
    fisher_exact_test,
    repeated_binary_bootstrap,
    variance_components,
)

# 8 tasks x 4 epochs, pass counts per task for one arm
PASSES = np.array([4, 4, 3, 0, 1, 4, 2, 0])
K = 4


def _runs(passes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    values = np.concatenate([np.r_[np.ones(p), np.zeros(k - p)] for p in passes])
    groups = np.repeat(np.arange(passes.size), k)
    return values, groups


def test_variance_components_balanced_vs_mixedlm() -> None:
    import statsmodels.formula.api as smf

    values, groups = _runs(PASSES, K)
    vc = variance_components(values, groups)
    # statsmodels MixedLM REML random-intercept model: y ~ 1 + (1 | task)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ 1", {"y": values, "g": groups}, groups="g").fit(reml=True)
    between_ref = float(fit.cov_re.iloc[0, 0])
    within_ref = float(fit.scale)
    assert vc.between == pytest.approx(between_ref, abs=2e-3)
    assert vc.within == pytest.approx(within_ref, abs=2e-3)
    assert vc.icc == pytest.approx(between_ref / (between_ref + within_ref), abs=2e-3)
    assert vc.k_mean == K


def test_variance_components_unbalanced_formula() -> None:
    values = np.array([1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1.0])
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3])
    vc = variance_components(values, groups)
    # one-way ANOVA by hand with n0 = (N - sum n_i^2 / N) / (G - 1)
    sizes = np.array([3, 3, 4, 1])
    means = np.array([1, 1 / 3, 0.25, 1.0])
    n_total, g = 11, 4
    grand = values.mean()
    msb = np.sum(sizes * (means - grand) ** 2) / (g - 1)
    msw = sum(np.sum((values[groups == i] - means[i]) ** 2) for i in range(g)) / (n_total - g)
    n0 = (n_total - np.sum(sizes**2) / n_total) / (g - 1)
    assert vc.within == pytest.approx(msw, rel=1e-12)
    assert vc.between == pytest.approx(max(0.0, (msb - msw) / n0), rel=1e-12)
    # one-way ANOVA F equals scipy.stats.f_oneway
    f = stats.f_oneway(*[values[groups == i] for i in range(g)]).statistic
    assert msb / msw == pytest.approx(f, rel=1e-12)


def test_variance_components_edge_cases() -> None:
    same = variance_components(np.ones(8), np.repeat([0, 1], 4))
    assert (same.between, same.within, same.icc) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        variance_components([1.0, 0.0], [0, 0])  # one group
    with pytest.raises(ValueError):
        variance_components([1.0, 0.0], [0, 1])  # no within-group replication


def test_design_effect() -> None:
    assert design_effect(4, 0.40) == pytest.approx(2.2)
    assert design_effect(1, 0.9) == 1.0
    with pytest.raises(ValueError):
        design_effect(0, 0.1)


def test_repeated_fast_path_matches_cluster_bootstrap() -> None:
    rng = np.random.default_rng(3)
    t, k = 80, 5
    base = rng.binomial(k, rng.uniform(0.2, 0.9, size=t))
    cand = np.clip(base + rng.integers(-1, 3, size=t), 0, k)
    fast = repeated_binary_bootstrap(base, cand, k, rng=1)
    generic = cluster_bootstrap(base / k, cand / k, rng=2)
    d = (cand - base) / k
    ideal_se = float(np.std(d) / np.sqrt(t))  # plug-in SD / sqrt(T)
    assert fast.estimate == pytest.approx(generic.estimate, rel=1e-12)
    assert fast.standard_error == pytest.approx(ideal_se, rel=0.04)
    assert generic.standard_error == pytest.approx(ideal_se, rel=0.04)
    tol = 0.2 * ideal_se
    assert fast.confidence_interval.low == pytest.approx(generic.confidence_interval.low, abs=tol)
    assert fast.confidence_interval.high == pytest.approx(generic.confidence_interval.high, abs=tol)
    assert repeated_binary_bootstrap(base, cand, k, rng=9) == repeated_binary_bootstrap(
        base, cand, k, rng=9
    )


def test_cluster_bootstrap_without_clusters_matches_scipy() -> None:
    rng = np.random.default_rng(8)
    x = rng.uniform(size=50)
    y = x + rng.normal(0.05, 0.1, size=50)
    ours = cluster_bootstrap(x, y, rng=1)
    # scipy.stats.bootstrap((x, y), mean(y - x), paired=True, vectorized=True, method='percentile')
    ref = stats.bootstrap(
        (x, y),
        lambda a, b, axis: np.mean(b - a, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=10_000,
        method="percentile",
        rng=2,
    )
    tol = 0.2 * ref.standard_error
    assert ours.confidence_interval.low == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert ours.confidence_interval.high == pytest.approx(ref.confidence_interval.high, abs=tol)


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    rng = np.random.default_rng(4)
    families = np.repeat(np.arange(30), 4)
    shift = np.repeat(rng.normal(0.0, 0.2, size=30), 4)  # strong within-family correlation
    x = rng.uniform(size=120)
    y = x + 0.05 + shift + rng.normal(0, 0.02, size=120)
    w = rng.integers(1, 4, size=120).astype(float)
    res = cluster_bootstrap(x, y, clusters=families, weights=w, rng=0)
    assert res.estimate == pytest.approx(float(np.sum(w * (y - x)) / np.sum(w)), rel=1e-12)
    naive = cluster_bootstrap(x, y, weights=w, rng=0)
    assert res.standard_error > 1.5 * naive.standard_error
    # ideal cluster-bootstrap SE of a ratio ≈ linearised CR0 SE
    s = np.bincount(families, weights=w * (y - x))
    wt = np.bincount(families, weights=w)
    est = s.sum() / wt.sum()
    g = s.size
    cr0 = (
        np.sqrt(np.sum((s - est * wt) ** 2))
        / wt.sum()
        * np.sqrt((g - 1) / g)
        * np.sqrt(g / (g - 1))
    )
    assert res.standard_error == pytest.approx(cr0, rel=0.1)
    bca = cluster_bootstrap(x, y, clusters=families, weights=w, method="bca", n_resamples=2000)
    assert bca.confidence_interval.low < bca.estimate < bca.confidence_interval.high


def test_cluster_bootstrap_degenerate() -> None:
    res = cluster_bootstrap(np.zeros(5), np.ones(5), clusters=[1, 1, 2, 2, 3])
    assert res.confidence_interval.low == res.confidence_interval.high == 1.0
    with pytest.raises(ValueError, match="no pairs"):
        cluster_bootstrap([], [])


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"), [(0, 4, 4, 4), (2, 5, 3, 5), (5, 5, 5, 5), (1, 3, 0, 6)]
)
def test_fisher_exact_vs_scipy(k1: int, n1: int, k2: int, n2: int) -> None:
    res = fisher_exact_test(k1, n1, k2, n2)
    # scipy.stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative='two-sided')
    ref = stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]])
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.statistic == pytest.approx(k2 / n2 - k1 / n1)
    assert res.n == n1 + n2
    assert fisher_exact_test(0, 0, 1, 1).pvalue == 1.0


def test_a_report_runs_fisher_once_per_distinct_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # 3 000 tasks x 3 runs per arm: most tasks are flaky, but they share at most 16 tables
    from ablation.analysis.build import compare_results
    from ablation.schema import TaskResult

    rng = np.random.default_rng(7)
    passed = rng.random((2, 3000, 3)) < 0.5
    arms = [
        [
            TaskResult(task_id=f"t{i}", arm=arm, run=r, passed=bool(passed[a, i, r]))
            for i in range(3000)
            for r in range(3)
        ]
        for a, arm in enumerate(("baseline", "candidate"))
    ]
    calls: list[tuple[int, ...]] = []
    real = stats.fisher_exact

    def counted(table: list[list[int]], alternative: str = "two-sided") -> object:
        calls.append((table[0][0], table[0][1], table[1][0], table[1][1]))
        return real(table, alternative=alternative)

    monkeypatch.setattr(stats, "fisher_exact", counted)
    report = compare_results(*arms)
    assert len(report.flaky) > 2000
    assert len(calls) == len(set(calls)) <= 16
    scipy_p: dict[tuple[int, ...], float] = {}  # scipy's p-value, once per distinct table
    for f in report.flaky:  # every p-value is scipy's for that task's own table
        k1, n1, k2, n2 = f.baseline_passes, f.baseline_runs, f.candidate_passes, f.candidate_runs
        table = (k1, n1 - k1, k2, n2 - k2)
        if table not in scipy_p:
            # scipy.stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative='two-sided')
            scipy_p[table] = float(real([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)
        assert f.pvalue == min(1.0, scipy_p[table])


def test_cluster_bootstrap_over_distinct_totals_has_the_per_cluster_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ablation.stats import repeated

    rng = np.random.default_rng(5)
    t, k = 3000, 3  # per-task means of three runs: at most 7 distinct differences
    base = rng.binomial(k, 0.6, size=t) / k
    cand = rng.binomial(k, 0.62, size=t) / k
    counted = cluster_bootstrap(base, cand, n_resamples=10_000, rng=1)
    assert "multinomial over" in counted.method
    monkeypatch.setattr(repeated, "_DISTINCT_SHARE", 10**9)  # every resample draws 3000 tasks
    drawn = cluster_bootstrap(base, cand, n_resamples=10_000, rng=2)
    assert "multinomial" not in drawn.method
    assert counted.estimate == drawn.estimate == pytest.approx(float(np.mean(cand - base)))
    ideal_se = float(np.std(cand - base) / np.sqrt(t))  # the plug-in bootstrap SE of a mean
    for res in (counted, drawn):
        assert res.standard_error == pytest.approx(ideal_se, rel=0.03)
    tol = 0.15 * ideal_se  # ~4 Monte Carlo SDs of the difference of two 2.5 % quantiles
    assert counted.confidence_interval.low == pytest.approx(drawn.confidence_interval.low, abs=tol)
    assert counted.confidence_interval.high == pytest.approx(
        drawn.confidence_interval.high, abs=tol
    )
