"""Validation of the defaults beside the one-run fixed-n path: repeated runs and sequential NI.

Used by ``benchmarks/validation.py``. Seeded simulations through the public ``ablation.stats``
functions the report calls (the same arguments as ``ablation.analysis.headline``):

* repeated runs with mostly deterministic tasks: coverage of the headline interval
  (``bounded_mean_interval``, 95%) and the false "non-inferior" rate of the repeated-runs NI
  decision (``bounded_mean_noninferiority``, one-sided α = 0.05) at a true uplift of exactly −M;
* sequential non-inferiority at the margin: the false "non-inferior" rate of the monitor's
  population claim (``sequential_decisions(..., margin=M, suite_size=N)``, i.i.d. pairs) at a
  true uplift of exactly −M.
"""

from __future__ import annotations

import numpy as np

from ablation.stats import bounded_mean_interval, bounded_mean_noninferiority, sequential_decisions

RUNS = 3
ALPHA = 0.05

# name -> (description, draw of (baseline p, candidate p) per task: (rng, n) -> arrays)
TaskModel = tuple[str, float]


def task_probabilities(
    model: str, rng: np.random.Generator, n: int, target: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-task pass probabilities of both arms with population mean change ``target`` (≤ 0).

    ``"point-mass"``: 90% of tasks deterministic and equal in both arms (half always pass, half
    always fail); 10% flaky, baseline 0.5, candidate ``0.5 + 10·target``.
    ``"beta"``: baseline ``p ~ Beta(0.2, 0.2)`` (most tasks near 0 or 1); the candidate keeps
    ``p`` with probability ``1 − |target|/E|p − q|`` and otherwise draws ``q`` from the same Beta
    mirrored toward failure, so that ``E[q − p] = target`` exactly (see :func:`_beta_pair`).
    """
    if model == "point-mass":
        u = rng.random(n)
        det = u < 0.9
        base = np.where(det, (u < 0.45).astype(float), 0.5)
        cand = np.where(det, base, 0.5 + 10.0 * target)
        return base, cand
    return _beta_pair(rng, n, target)


def _beta_pair(rng: np.random.Generator, n: int, target: float) -> tuple[np.ndarray, np.ndarray]:
    """Beta(0.2, 0.2) baseline; a random share of tasks moves to ``p·(1 − s)``, mean ``target``.

    A moved task's probability is multiplied by ``1 − s`` with ``s = 0.8``; ``E[p] = 1/2``, so the
    mean change is ``−share·s/2`` and ``share = −2·target/s``.
    """
    base = rng.beta(0.2, 0.2, n)
    s = 0.8
    share = -2.0 * target / s
    moved = rng.random(n) < share
    return base, np.where(moved, base * (1.0 - s), base)


def repeated_cell(args: tuple[str, int, float, float, int, int]) -> tuple[float, float]:
    """(coverage of the 95% headline interval, false "non-inferior" rate at Δ = −margin)."""
    model, n, target, margin, reps, seed = args
    rng = np.random.default_rng(seed)
    hits = false_ni = 0
    for r in range(reps):
        pb, pc = task_probabilities(model, rng, n, target)
        d = (rng.binomial(RUNS, pc) - rng.binomial(RUNS, pb)) / RUNS
        ci = bounded_mean_interval(d, confidence_level=0.95, rng=r)
        hits += ci.low <= target <= ci.high
        if margin > 0:
            test = bounded_mean_noninferiority(d, margin=margin, alpha=ALPHA, rng=r)
            false_ni += test.pvalue <= ALPHA
    return hits / reps, false_ni / reps


def sequential_ni_cell(args: tuple[int, float, float, int, int]) -> float:
    """False "non-inferior" rate of the sequential monitor at Δ = −margin (i.i.d. pairs)."""
    n, psi, margin, reps, seed = args
    rng = np.random.default_rng(seed)
    p_reg = (psi + margin) / 2
    hits = done = 0
    while done < reps:
        rows = min(2000, reps - done)
        u = rng.random((rows, n))
        d = np.where(u < p_reg, -1.0, np.where(u < psi, 1.0, 0.0))
        res = sequential_decisions(d, margin=margin, alpha=ALPHA, suite_size=n)
        hits += int(np.sum(res.gate == "non_inferior"))
        done += rows
    return hits / reps


ARM_MODELS = {"point-mass": 0.5, "beta": 0.5, "beta skewed": 0.2}


def arm_rate_cell(args: tuple[str, int, int, int]) -> float:
    """Coverage of an arm's pass-rate interval with repeated runs (the report's own function).

    Task pass probabilities: the baseline of :func:`task_probabilities` (``"point-mass"``,
    ``"beta"``), or ``Beta(0.08, 0.32)`` (``"beta skewed"``, mean 0.2, most tasks always fail).
    """
    from ablation.analysis.headline import repeated_pass_rate_interval

    model, n, reps, seed = args
    rng = np.random.default_rng(seed)
    truth = ARM_MODELS[model]
    hits = 0
    for _ in range(reps):
        if model == "beta skewed":
            p = rng.beta(0.08, 0.32, n)
        else:
            p, _c = task_probabilities(model, rng, n, 0.0)
        passes = rng.binomial(RUNS, p)
        f = passes / RUNS
        ci = repeated_pass_rate_interval(f, float(passes.sum() / (n * RUNS)), n * RUNS, 0.95)
        hits += ci.low <= truth <= ci.high
    return hits / reps
