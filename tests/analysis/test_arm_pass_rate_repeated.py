"""An arm's pass-rate interval with repeated runs: the task is the unit, never zero width.

The t interval over per-task fractions was [1, 1] when every task passed every run and
under-covered when most tasks are deterministic; the betting interval (up to
``BETTING_MAX_TASKS``) and the design-effect Wilson interval (above) replace it.
"""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from ablation import TaskResult, compare_results
from ablation.analysis.headline import BETTING_MAX_TASKS, clustered_wilson


def _results(passed: np.ndarray) -> list[TaskResult]:
    return [
        TaskResult(task_id=f"t{i}", run=r, passed=bool(passed[i, r]))
        for i in range(passed.shape[0]) for r in range(passed.shape[1])
    ]  # fmt: skip


def test_deterministic_tasks_give_an_interval_of_positive_width() -> None:
    ok = np.ones((30, 3), dtype=bool)
    report = compare_results(_results(ok), _results(ok))
    ci = report.baseline.pass_rate_ci
    assert ci.high == 1.0 and ci.low < 0.95  # was [1, 1]
    assert "task = unit" in ci.method


def test_the_large_n_interval_is_wilson_at_the_design_effect_sample_size() -> None:
    rng = np.random.default_rng(3)
    n, k = BETTING_MAX_TASKS + 500, 3
    q = np.where(rng.random(n) < 0.9, (rng.random(n) < 0.3).astype(float), 0.5)
    passes = rng.binomial(k, q)
    f = passes / k
    rate = passes.sum() / (n * k)
    n_eff = min(max(rate * (1 - rate) / (np.var(f, ddof=1) / n), n), n * k)
    low, high = proportion_confint(rate * n_eff, n_eff, alpha=0.05, method="wilson")
    ci = clustered_wilson(f, rate, n * k, 0.95)
    assert abs(ci.low - low) < 1e-12 and abs(ci.high - high) < 1e-12
    # deterministic tasks: the effective sample size is the number of tasks
    det = (rng.random(n) < 0.3).astype(float)
    ci_det = clustered_wilson(det, float(det.mean()), n * k, 0.95)
    low_t, high_t = proportion_confint(det.sum(), n, alpha=0.05, method="wilson")
    assert abs(ci_det.low - low_t) < 1e-9 and abs(ci_det.high - high_t) < 1e-9
