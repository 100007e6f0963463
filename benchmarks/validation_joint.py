"""The release gates: latency with timeouts, and the joint size of the fail-if-significant gates.

Used by ``benchmarks/validation.py``. The gates' tests are computed row-wise with numpy (the
regression gate's one-sided exact McNemar; the latency gate's one-sided paired t on log ratios
against the limit, timeouts counted at the cap, and its exact test of more candidate-only
timeouts); :func:`check_against_report` checks on the first replicates that these statuses are the
ones ``ablation.compare_results`` gives with every opt-in gate on. Model (one run per task, ``n`` tasks, i.i.d.): pass/fail pairs with discordant
probability ψ = 0.2 and Δ = 0 (the arms exchangeable); per-task log latency
``μ_i ~ N(2.3, 0.8²)`` plus ``N(0, 0.3²)`` per arm, the candidate's latency times ``ratio``; a
trial longer than the time limit ``CAP`` is a timeout (at ``ratio`` 1, about 4% of trials in each
arm); a quality score ``N(task effect, 1)`` in each arm with the same mean. Gates:
``no_significant_regression`` (default), ``max_latency_ratio = LIMIT``,
``noninferiority_margin = 0.05``, ``metric_margins = {"score": 0.3}``, ``require_complete``
(every trial present, so it passes), no critical tasks.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ablation import CampaignConfig, GatePolicy, compare_results

CAP = 60.0
LIMIT = 1.1
PSI = 0.2
GATES = (
    "no significant regression",
    "no significant latency regression",
    "non-inferiority",
    "non-inferiority of score",
)


def _draw(rng: np.random.Generator, n: int, ratio: float) -> dict[str, np.ndarray]:
    """One campaign's per-task outcomes (the model of the module docstring).

    ``ratio == 0`` is the looping candidate: as fast as the baseline, except that it times out on
    the tasks whose ``μ_i`` is in the top 4% of the campaign.
    """
    flip = rng.random(n) < PSI
    base_pass = rng.random(n) < 0.6
    regress = rng.random(n) < 0.5
    mu = rng.normal(2.3, 0.8, n)
    effect = rng.normal(0.0, 1.0, n)
    out: dict[str, np.ndarray] = {}
    for arm, passed, scale in (
        ("b", np.where(flip, regress, base_pass), 1.0),
        ("c", np.where(flip, ~regress, base_pass), ratio or 1.0),
    ):
        lat = np.exp(mu + rng.normal(0.0, 0.3, n)) * scale
        if arm == "c" and ratio == 0:
            lat = np.where(mu >= np.quantile(mu, 0.96), 2 * CAP, lat)
        out[arm + "_timeout"] = lat > CAP
        out[arm + "_pass"] = passed & ~out[arm + "_timeout"]
        out[arm + "_lat"] = np.minimum(lat, CAP)
        out[arm + "_score"] = effect + rng.normal(0.0, 1.0, n)
    return out


def _gate_fails(d: dict[str, np.ndarray], alpha: float = 0.05) -> tuple[bool, bool, bool]:
    """(regression gate fails, latency gate fails, its ratio test alone rejects), one campaign."""
    b = int(np.sum(d["b_pass"] & ~d["c_pass"]))
    c = int(np.sum(~d["b_pass"] & d["c_pass"]))
    p_reg = float(stats.binom.sf(b - 1, b + c, 0.5)) if b + c else 1.0
    logr = np.log(d["c_lat"]) - np.log(d["b_lat"])
    n = logr.size
    t = (logr.mean() - np.log(LIMIT)) / (logr.std(ddof=1) / np.sqrt(n))
    p_lat = p_ratio = float(stats.t.sf(t, n - 1))
    only_c = int(np.sum(d["c_timeout"] & ~d["b_timeout"]))
    only_b = int(np.sum(d["b_timeout"] & ~d["c_timeout"]))
    if d["b_timeout"].any() or d["c_timeout"].any():
        p_to = float(stats.binom.sf(only_c - 1, only_c + only_b, 0.5)) if only_c + only_b else 1.0
        p_lat = min(1.0, 2.0 * min(p_lat, p_to))
    return p_reg < alpha, p_lat < alpha, p_ratio < alpha


def _rows_of(d: dict[str, np.ndarray]) -> tuple[list[dict], list[dict]]:
    rows: list[list[dict]] = [[], []]
    for k, arm in enumerate("bc"):
        for i in range(d["b_pass"].size):
            row: dict = {"task_id": f"t{i}", "quality": {"score": float(d[arm + "_score"][i])}}
            if d[arm + "_timeout"][i]:
                row.update(status="timeout", passed=False)
            else:
                row.update(passed=bool(d[arm + "_pass"][i]), latency_s=float(d[arm + "_lat"][i]))
            rows[k].append(row)
    return rows[0], rows[1]


def check_against_report(n: int, ratio: float, seed: int, count: int = 3) -> None:
    """The row-wise gate statuses equal those of ``compare_results`` on ``count`` campaigns."""
    rng = np.random.default_rng(seed)
    config = CampaignConfig(
        n_resamples=200, timeout_s=CAP,
        gates=GatePolicy(
            max_latency_ratio=LIMIT, noninferiority_margin=0.05, metric_margins={"score": 0.3},
        ),
    )  # fmt: skip
    for _ in range(count):
        d = _draw(rng, n, ratio)
        report = compare_results(*_rows_of(d), config=config)
        status = {g.name: g.status for g in report.gates}
        ours = _gate_fails(d)[:2]
        theirs = (status[GATES[0]] == "fail", status[GATES[1]] == "fail")
        assert ours == theirs, (ours, status)


def joint_cell(args: tuple[int, float, int, int]) -> tuple[float, float, float, float]:
    """Rates over ``reps`` campaigns: regression gate, latency gate, its ratio test, either gate."""
    n, ratio, reps, seed = args
    check_against_report(n, ratio, seed + 1)
    rng = np.random.default_rng(seed)
    fails = np.array([_gate_fails(_draw(rng, n, ratio)) for _ in range(reps)])
    rates = fails.mean(axis=0)
    either = float(fails[:, :2].any(axis=1).mean())
    return float(rates[0]), float(rates[1]), float(rates[2]), either
