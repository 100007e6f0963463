"""Speed and memory of the uplift bootstrap, side by side with scipy's bootstrap.

Run ``python benchmarks/bench_stats.py`` (about a minute: scipy resamples 10^9 indices) or
``python benchmarks/bench_stats.py --quick`` for a smoke test.

Part 1 compares :func:`ablation.stats.binary_uplift_bootstrap` (one multinomial draw over the 2x2
cells per resample) with ``scipy.stats.bootstrap(..., paired=True, vectorized=True)`` on the same
paired 0/1 data, and prints both intervals, the times, their ratio and peak traced memory. scipy
is given ``batch=`` so that its memory stays bounded (without it, 100,000 tasks x 10,000 resamples
would need tens of GB). Its peak memory is traced on a short run with the same batch size, since the
peak depends on the batch, not on the number of resamples.

Part 2 (:func:`bench_full_report`) times the whole analysis path when it is available.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from ablation.stats import binary_uplift_bootstrap, paired_binary_summary


def _make_data(n: int, seed: int = 20240601) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.62).astype(np.float64)
    cand = base.copy()
    flip_down = (base == 1) & (rng.random(n) < 0.06)  # regressions
    flip_up = (base == 0) & (rng.random(n) < 0.12)  # improvements
    cand[flip_down] = 0.0
    cand[flip_up] = 1.0
    return base, cand


def _cells(base: np.ndarray, cand: np.ndarray) -> tuple[int, int, int, int]:
    n11 = int(np.sum((base == 1) & (cand == 1)))
    b = int(np.sum((base == 1) & (cand == 0)))
    c = int(np.sum((base == 0) & (cand == 1)))
    n22 = int(np.sum((base == 0) & (cand == 0)))
    return n11, b, c, n22


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def bench_uplift(n_tasks: int, n_resamples: int, batch: int) -> None:
    """Part 1: multinomial fast path vs scipy.stats.bootstrap on the same paired binary data."""
    base, cand = _make_data(n_tasks)
    cells = _cells(base, cand)
    n11, b, c, n22 = cells
    print(f"== uplift bootstrap: {n_tasks:,} paired binary tasks, {n_resamples:,} resamples ==")
    print(f"table n11={n11} b={b} c={c} n22={n22}; uplift (c - b)/n = {(c - b) / n_tasks:+.5f}")

    def ours() -> Any:
        return binary_uplift_bootstrap(*cells, n_resamples=n_resamples, rng=1)

    def reference(resamples: int = n_resamples) -> Any:
        return stats.bootstrap(
            (base, cand),
            statistic=lambda x, y, axis: np.mean(y - x, axis=axis),
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            method="percentile",
            batch=batch,
            rng=np.random.default_rng(2),
        )

    ours()  # warm-up (imports, first-call overhead)
    res_ours, t_ours = _timed(ours)
    res_ref, t_ref = _timed(reference)
    mem_ours = _peak_mib(ours)
    mem_ref = _peak_mib(lambda: reference(min(n_resamples, 2 * batch)))
    ci_o, ci_r = res_ours.confidence_interval, res_ref.confidence_interval
    se_o, se_r = res_ours.standard_error, float(res_ref.standard_error)
    pairing = paired_binary_summary(*cells)
    mc_tol = 0.2 * pairing.se_paired + 1.0 / n_tasks

    def row(name: str, t: float, lo: float, hi: float, se: float, mem: float) -> str:
        return f"{name:<34}{t * 1e3:>12.1f}{lo:>+12.5f}{hi:>+12.5f}{se:>11.6f}{mem:>12.1f}"

    print(f"{'method':<34}{'time (ms)':>12}{'low':>12}{'high':>12}{'SE':>11}{'peak MiB':>12}")
    print(row("ablation binary_uplift_bootstrap", t_ours, ci_o.low, ci_o.high, se_o, mem_ours))
    print(
        row(
            f"scipy.stats.bootstrap (batch={batch})",
            t_ref,
            float(ci_r.low),
            float(ci_r.high),
            se_r,
            mem_ref,
        )
    )
    print(f"speed ratio scipy / ablation: {t_ref / t_ours:,.0f}x")
    agree = abs(ci_o.low - ci_r.low) <= mc_tol and abs(ci_o.high - ci_r.high) <= mc_tol
    print(
        f"analytic paired SE {pairing.se_paired:.6f}; endpoints agree within Monte Carlo error "
        f"(tol {mc_tol:.6f}): {'yes' if agree else 'NO'}"
    )
    print(
        f"(scipy peak memory traced on {min(n_resamples, 2 * batch):,} resamples with the same batch)"
    )


_FULL_REPORT_CHILD = r"""
import dataclasses, json, resource, sys, time
import numpy as np
from ablation.analysis.build import build_report
from ablation.analysis.pair_arms import pair_columns
from ablation.columns import TrialColumns

n = int(sys.argv[1])
rng = np.random.default_rng(20240601)
base = rng.random(n) < 0.62
cand = base.copy()
cand[base & (rng.random(n) < 0.06)] = False
cand[~base & (rng.random(n) < 0.12)] = True
ids = [f"task-{i:07d}" for i in range(n)]
categories = [("parsing", "search", "math", "tools")[i % 4] for i in range(n)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
id_col, labels = np.asarray(ids, dtype=object), np.asarray(categories, dtype=object)
data = pair_columns(*(
    dataclasses.replace(TrialColumns.verdicts(arm, id_col, v), category=labels)
    for arm, v in (("baseline", base), ("candidate", cand))
))
paired = time.perf_counter()
report = build_report(data)
built = time.perf_counter()
text = report.model_dump_json()
done = time.perf_counter()
print(json.dumps({
    "pair_s": paired - start, "report_s": built - paired, "json_s": done - built,
    "total_s": done - start, "json_mb": len(text) / 1e6,
    "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "inputs_mib": before / 1024,
    "table": report.table.model_dump(), "p": report.mcnemar.pvalue,
    "uplift": [report.uplift.ci.low, report.uplift.ci.high],
}))
"""


def bench_full_report(n_tasks: int) -> dict[str, Any]:
    """Part 2: the whole report (pairing, every statistic, gates, JSON) for n paired binary tasks.

    Runs in a fresh interpreter so that its peak resident memory is the report's alone (the
    figure includes Python, numpy and scipy themselves and the million task ids).
    """
    import json
    import subprocess

    print(f"\n== full report: {n_tasks:,} paired binary tasks (one run per arm) ==")
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_REPORT_CHILD, str(n_tasks)],
        capture_output=True, text=True, check=True,
    )
    out = json.loads(proc.stdout)
    print(
        f"pairing {out['pair_s']:.2f} s + statistics and gates {out['report_s']:.2f} s + JSON "
        f"{out['json_s']:.2f} s = {out['total_s']:.2f} s (target < 2 s); "
        f"peak RSS {out['maxrss_mib']:,.0f} MiB (target < 1024 MiB; {out['inputs_mib']:,.0f} MiB "
        f"before the report: interpreter, libraries and inputs); JSON {out['json_mb']:.1f} MB"
    )
    print(f"table {out['table']}, exact McNemar p = {out['p']:.3g}, uplift CI {out['uplift']}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        bench_uplift(n_tasks=10_000, n_resamples=2_000, batch=200)
        bench_full_report(n_tasks=10_000)
    else:
        bench_uplift(n_tasks=100_000, n_resamples=10_000, batch=100)
        bench_full_report(n_tasks=1_000_000)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    print(f"\nprocess max RSS: {maxrss * scale / 2**20:,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
