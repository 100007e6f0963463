"""Validity of sequential monitoring, at more replicates and settings than the unit tests.

Run ``python benchmarks/sequential_validity.py`` (a few minutes) or with ``--quick`` (under a
minute). Every table is seeded (``--seed``, default 20250101) and prints its replicate count and
Monte Carlo standard error. Tables:

1. false "significant regression" rate under H0 (P(regression | discordant) = 1/2), monitoring
   after every pair, next to the rate of peeking at the one-sided exact McNemar p-value after every
   pair and of the exact McNemar test run once at the fixed n;
2. false "non-inferior" rate at the margin (Δ = −M), for i.i.d. pairs and for random orders of a
   fixed suite whose uplift is exactly −M;
3. coverage of the confidence sequence at every n at once, i.i.d. and without replacement,
   for one run per task and for differences of pass fractions (3 runs per arm);
4. planning: expected pairs (mean, 90th percentile) and decision rates of a sequential campaign,
   next to Connor's one-sided fixed-n sample size (80% power) for the same regression;
5. sensitivity of the regression e-process to its Beta prior.

The installed ``ablation`` must be this checkout (``pip install -e .`` or ``PYTHONPATH=.``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import scipy
from scipy import stats

from ablation.stats import (
    sample_size_paired,
    sequential_decisions,
    simulate_sequential,
    uplift_confidence_sequence,
)

ALPHA = 0.05
CHUNK = 2000


def _se(rate: float, n: int) -> float:
    return math.sqrt(max(rate * (1.0 - rate), 1e-12) / n)


def _null(rng: np.random.Generator, psi: float, rows: int, n: int) -> np.ndarray:
    u = rng.random((rows, n))
    return np.where(u < psi / 2, -1.0, np.where(u < psi, 1.0, 0.0))


def _mcnemar_table(n: int) -> np.ndarray:
    """One-sided exact McNemar p-values P(X ≥ b), X ~ Bin(b + c, 1/2), for all b + c ≤ n."""
    b = np.arange(n + 1)[:, None]
    total = b + np.arange(n + 1)[None, :]
    return np.where(total > 0, stats.binom.sf(b - 1, np.maximum(total, 1), 0.5), 1.0)


def table_regression(reps: int, seed: int, sizes: list[int], psis: list[float]) -> None:
    print(f"\n1. False 'significant regression' under H0, alpha = {ALPHA}, {reps} campaigns each")
    print(f"   {'N':>5} {'psi':>5} | {'e-process':>10} {'peek McNemar':>13} {'McNemar at N':>13}")
    for n in sizes:
        table = _mcnemar_table(n)
        for psi in psis:
            rng = np.random.default_rng([seed, n, int(psi * 1000)])
            seq = peek = fixed = 0
            for start in range(0, reps, CHUNK):
                d = _null(rng, psi, min(CHUNK, reps - start), n)
                seq += int(np.sum(sequential_decisions(d).gate == "regression"))
                cb, cc = np.cumsum(d < 0, axis=1), np.cumsum(d > 0, axis=1)
                peek += int(np.sum((table[cb, cc] <= ALPHA).any(axis=1)))
                fixed += int(np.sum(table[cb[:, -1], cc[:, -1]] <= ALPHA))
            rates = [x / reps for x in (seq, peek, fixed)]
            cells = " ".join(f"{r:>7.4f}±{_se(r, reps):.4f}" for r in rates)
            print(f"   {n:>5} {psi:>5} | {cells}")


def table_noninferiority(reps: int, seed: int) -> None:
    n = 1000
    print(f"\n2. False 'non-inferior' at the margin (Δ = −M), N = {n}, {reps} campaigns each")
    print(f"   {'M':>5} {'psi':>5} | {'i.i.d.':>13} {'fixed suite, random order':>26}")
    for margin in (0.02, 0.05):
        for psi in (0.1, 0.2, 0.4):
            rng = np.random.default_rng([seed, int(margin * 100), int(psi * 100)])
            p_reg = (psi + margin) / 2
            # a suite with uplift exactly -M: (psi + M)/2 * N regressions, (psi - M)/2 * N gains
            n_reg, n_imp = round(p_reg * n), round((psi - margin) / 2 * n)
            assert n_imp - n_reg == -round(margin * n)
            suite = np.array([-1.0] * n_reg + [1.0] * n_imp + [0.0] * (n - n_reg - n_imp))
            iid = wor = 0
            for start in range(0, reps, CHUNK):
                rows = min(CHUNK, reps - start)
                u = rng.random((rows, n))
                d = np.where(u < p_reg, -1.0, np.where(u < psi, 1.0, 0.0))
                iid += int(np.sum(sequential_decisions(d, margin=margin).gate == "non_inferior"))
                orders = rng.permuted(np.tile(suite, (rows, 1)), axis=1)
                res = sequential_decisions(orders, margin=margin, population_size=n)
                wor += int(np.sum(res.gate == "non_inferior"))
            r1, r2 = iid / reps, wor / reps
            print(
                f"   {margin:>5} {psi:>5} | {r1:>7.4f}±{_se(r1, reps):.4f} "
                f"{r2:>19.4f}±{_se(r2, reps):.4f}"
            )


def table_coverage(reps: int, seed: int) -> None:
    n, grid = 400, 401
    print(f"\n3. Miscoverage of the 95% confidence sequence over n = 1..{n}, {reps} campaigns")
    print(f"   {'outcome':>22} | {'i.i.d.':>13} {'without replacement':>20}")
    rng = np.random.default_rng([seed, 3])

    def one_run(k: int) -> np.ndarray:
        return rng.choice([-1.0, 0.0, 1.0], (k, n), p=[0.175, 0.7, 0.125])

    def fractions(k: int) -> np.ndarray:
        return (rng.binomial(3, 0.55, (k, n)) - rng.binomial(3, 0.6, (k, n))) / 3.0

    # (name, draw, population uplift): -0.05 in both cases (0.125 - 0.175; 0.55 - 0.6)
    cases = [("one run, Δ = −0.05", one_run, -0.05), ("3 runs, Δ = −0.05", fractions, -0.05)]
    for name, draw, truth_iid in cases:
        suite = draw(1)[0]
        truth_wor = math.fsum(suite) / n
        miss_iid = miss_wor = 0
        for start in range(0, reps, CHUNK // 4):
            rows = min(CHUNK // 4, reps - start)
            res = uplift_confidence_sequence(draw(rows), grid_size=grid)
            miss_iid += int(np.sum(((res.lower > truth_iid) | (res.upper < truth_iid)).any(1)))
            orders = rng.permuted(np.tile(suite, (rows, 1)), axis=1)
            res = uplift_confidence_sequence(orders, population_size=n, grid_size=grid)
            miss_wor += int(np.sum(((res.lower > truth_wor) | (res.upper < truth_wor)).any(1)))
        r1, r2 = miss_iid / reps, miss_wor / reps
        print(f"   {name:>22} | {r1:>7.4f}±{_se(r1, reps):.4f} {r2:>14.4f}±{_se(r2, reps):.4f}")


def table_planning(reps: int, seed: int) -> None:
    n_max, margin = 1000, 0.05
    print(
        f"\n4. Planning: suite of {n_max} tasks, margin {margin}, alpha {ALPHA}, {reps} campaigns"
    )
    print(
        f"   {'psi':>5} {'delta':>6} | {'pairs mean':>10} {'p90':>5} {'calls mean':>10} "
        f"{'regr':>6} {'infer':>6} {'NI':>6} {'end':>6} | {'fixed n':>8}"
    )
    for psi, delta in [(0.2, -0.1), (0.2, -0.05), (0.2, 0.0), (0.2, 0.05), (0.1, -0.05)]:
        sim = simulate_sequential(
            psi, delta, n_max=n_max, margin=margin, n_sim=reps, rng=np.random.default_rng([seed, 4])
        )
        # Connor (1987) one-sided fixed n with 80% power for the same regression
        fixed = str(sample_size_paired(psi, delta, alternative="less").n) if delta < 0 else "-"
        rates = " ".join(
            f"{sim.rate(g):>6.3f}"
            for g in ("regression", "inferior", "non_inferior", "end_of_suite")
        )
        print(
            f"   {psi:>5} {delta:>+6.2f} | {sim.expected_pairs:>10.1f} {sim.pairs_p90:>5} "
            f"{sim.expected_agent_calls:>10.1f} {rates} | {fixed:>8}"
        )


def table_prior(reps: int, seed: int) -> None:
    n, psi = 500, 0.2
    print(
        f"\n5. Prior of the e-process: 'regression' rate (mean pairs), N = {n}, psi = {psi}, {reps}"
    )
    deltas = (0.0, -0.05, -0.1)
    print(f"   {'prior':>12} | " + " ".join(f"{'delta ' + format(d, '+.2f'):>17}" for d in deltas))
    for prior in [(1.0, 1.0), (2.0, 2.0), (5.0, 5.0), (10.0, 10.0), (50.0, 50.0)]:
        cells = []
        for delta in deltas:
            rng = np.random.default_rng([seed, 5, int(-delta * 100)])  # same draws for each prior
            u = rng.random((reps, n))
            p_reg = (psi - delta) / 2
            d = np.where(u < p_reg, -1.0, np.where(u < psi, 1.0, 0.0))
            res = sequential_decisions(d, prior=prior)
            cells.append(f"{np.mean(res.gate == 'regression'):>8.4f} ({np.mean(res.stop):5.1f})")
        print(f"   {prior!s:>12} | " + " ".join(f"{c:>17}" for c in cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer replicates and settings")
    parser.add_argument("--seed", type=int, default=20250101)
    args = parser.parse_args()
    q = args.quick
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}")
    print(f"seed {args.seed}{' (quick)' if q else ''}")
    start = time.perf_counter()
    table_regression(
        4000 if q else 20_000,
        args.seed,
        [500] if q else [200, 500, 2000],
        [0.05, 0.2] if q else [0.02, 0.05, 0.1, 0.2, 0.5],
    )
    table_noninferiority(2000 if q else 10_000, args.seed)
    table_coverage(400 if q else 2000, args.seed)
    table_planning(1000 if q else 4000, args.seed)
    table_prior(1000 if q else 4000, args.seed)
    print(f"\n{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
