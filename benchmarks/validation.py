"""Coverage, width, size and power of the default intervals and tests; writes docs/VALIDATION.md.

Run ``python benchmarks/validation.py`` (a few minutes on 2 cores; ``--quick`` for a smoke run
that does not write the document). Every figure is either exact (enumeration of the binomial or
trinomial distribution, tail mass < 1e-12 left out) or a seeded simulation whose replicate count
and seed are printed next to it. The simulations compute the intervals row-wise with numpy and
check, on the first rows, that the row-wise limits equal the public functions' limits.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import scipy
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ablation.stats import (  # noqa: E402
    MEAN_DIFFERENCE_MIN_N,
    exact_mcnemar_power,
    log_ratio_interval,
    mean_difference_interval,
    noninferiority_test,
    paired_t_test,
    wilson_interval,
)
from ablation.stats._tango import tango_z_array  # noqa: E402
from ablation.stats.headline_interval import (  # noqa: E402
    SPARSE_DISCORDANT,
    headline_interval_array,
)
from benchmarks.validation_gate import gate_row  # noqa: E402
from benchmarks.validation_joint import CAP, LIMIT, joint_cell  # noqa: E402
from benchmarks.validation_modes import ARM_MODELS, arm_rate_cell, repeated_cell, sequential_ni_cell  # noqa: E402
from benchmarks.validation_sparse import SPARSE_NS, sparse_row  # noqa: E402

NS = (20, 30, 100, 500, 2000)
PSIS = (0.02, 0.1, 0.3)
ALPHA = 0.05
TAIL = 1e-13
SEED = 20250101
NI_PSI_SCAN = np.round(np.arange(0.06, 0.5001, 0.005), 4)
NI_NS = (*range(30, 61), *range(65, 101, 5), *range(120, 301, 20), *range(350, 1001, 50))
NI_MARGINS = (0.02, 0.05)


# ----------------------------------------------------------------------------- exact: intervals
def trinomial_tables(n: int, psi: float, delta: float) -> tuple[np.ndarray, ...]:
    """(b, c, probability) over the central mass: N ~ Bin(n, ψ), c | N ~ Bin(N, (ψ + δ)/2ψ)."""
    q = (psi + delta) / (2 * psi)
    nds = np.arange(int(stats.binom.ppf(TAIL, n, psi)), int(stats.binom.isf(TAIL, n, psi)) + 1)
    bs, cs, ws = [], [], []
    for nd in nds:
        c = np.arange(int(stats.binom.ppf(TAIL, nd, q)), int(stats.binom.isf(TAIL, nd, q)) + 1)
        c = c[(c >= 0) & (c <= nd)]
        bs.append(nd - c)
        cs.append(c)
        ws.append(stats.binom.pmf(nd, n, psi) * stats.binom.pmf(c, nd, q))
    return np.concatenate(bs), np.concatenate(cs), np.concatenate(ws)


def tango_coverage(n: int, psi: float, delta: float) -> tuple[float, float]:
    """Exact coverage of the headline interval (left-out mass counts as a miss) and mean width."""
    b, c, w = trinomial_tables(n, psi, delta)
    low, high = headline_interval_array(b, c, n, 1 - ALPHA)
    cover = float(np.sum(w[(low <= delta) & (delta <= high)]))
    return cover, float(np.sum(w * (high - low)) / np.sum(w))


def wilson_coverage(n: int, p: float) -> tuple[float, float]:
    k = np.arange(n + 1)
    w = stats.binom.pmf(k, n, p)
    cis = [wilson_interval(int(i), n).confidence_interval for i in k]
    low = np.array([ci.low for ci in cis])
    high = np.array([ci.high for ci in cis])
    return float(np.sum(w[(low <= p) & (p <= high)])), float(np.sum(w * (high - low)))


def wilson_min_coverage(n: int) -> tuple[float, float]:
    k = np.arange(n + 1)
    cis = [wilson_interval(int(i), n).confidence_interval for i in k]
    low = np.array([ci.low for ci in cis])
    high = np.array([ci.high for ci in cis])
    grid = np.linspace(0.005, 0.995, 991)
    cov = [float(np.sum(stats.binom.pmf(k, n, p)[(low <= p) & (p <= high)])) for p in grid]
    i = int(np.argmin(cov))
    return cov[i], float(grid[i])


# ----------------------------------------------------------------------------- exact: NI size
def ni_critical(n: int, margin: float, nds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest c declared non-inferior per N: the public test, and the former asymptotic test.

    Both reject on a set ``c ≥ c*(N)``. The exact test's p-value is never below the asymptotic
    one, so its boundary is searched upwards from the asymptotic boundary.
    """
    z_crit = float(stats.norm.isf(ALPHA))
    exact = np.empty(nds.size, dtype=np.int64)
    asym = np.empty(nds.size, dtype=np.int64)
    for i, nd in enumerate(nds):
        c = np.arange(nd + 1)
        z = tango_z_array(nd - c, c, n, -margin)
        hit = np.nonzero(z > z_crit)[0]
        start = int(hit[0]) if hit.size else nd + 1
        asym[i] = start
        cc = start
        while cc <= nd:
            res = noninferiority_test(n - nd, nd - cc, cc, 0, margin=margin)
            if res.decision == "non-inferior":
                break
            cc += 1
        exact[i] = cc
    return exact, asym


NiRow = tuple[int, float, float, float, float, float, float, float]


def ni_size_row(args: tuple[int, float]) -> NiRow:
    n, margin = args
    lo = int(stats.binom.ppf(1e-12, n, NI_PSI_SCAN.min()))
    hi = int(stats.binom.isf(1e-12, n, NI_PSI_SCAN.max()))
    nds = np.arange(max(lo, 0), min(hi, n) + 1)
    exact, asym = ni_critical(n, margin, nds)
    out: list[float] = []
    for crit in (exact, asym):
        sizes = []
        for psi in NI_PSI_SCAN:
            w = stats.binom.pmf(nds, n, psi)
            q0 = (psi - margin) / (2 * psi)  # P(improvement | discordant) at Δ = −margin
            sizes.append(float(np.dot(w, stats.binom.sf(crit - 1, nds, q0))) + 2e-12)
        # power at Δ = 0 (candidate as good as the baseline), ψ = 0.1
        w = stats.binom.pmf(nds, n, 0.1)
        power = float(np.dot(w, stats.binom.sf(crit - 1, nds, 0.5)))
        i = int(np.argmax(sizes))
        out.extend([sizes[i], float(NI_PSI_SCAN[i]), power])
    return (n, margin, out[0], out[1], out[2], out[3], out[4], out[5])


# ----------------------------------------------------------------------------- simulations
def _t_limits(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise two-sided 95% t interval of the row means."""
    n = d.shape[1]
    half = stats.t.isf(ALPHA / 2, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
    return d.mean(axis=1) - half, d.mean(axis=1) + half


def _same_as_public(
    low: np.ndarray,
    high: np.ndarray,
    public: Callable[[np.ndarray, np.ndarray], Any],
    x: np.ndarray,
    y: np.ndarray,
    rows: int = 50,
) -> None:
    """The row-wise limits equal the public function's on the first rows."""
    cis = [public(x[i], y[i]).confidence_interval for i in range(min(rows, low.size))]
    np.testing.assert_allclose([c.low for c in cis], low[: len(cis)], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose([c.high for c in cis], high[: len(cis)], rtol=1e-9, atol=1e-12)


def latency_sim(n: int, ratio: float, reps: int, seed: int) -> dict[str, float]:
    """log latency = task effect N(0, 1) + log(ratio) for the candidate + noise N(0, 0.5²)."""
    rng = np.random.default_rng(seed)
    true_diff = math.exp(0.5 + 0.125) * (ratio - 1.0)
    hits_r = hits_d = 0
    width_r = width_d = 0.0
    done = 0
    chunk = max(1, 2_000_000 // n)
    while done < reps:
        m = min(chunk, reps - done)
        mu = rng.normal(0.0, 1.0, (m, n))
        base = np.exp(mu + rng.normal(0.0, 0.5, (m, n)))
        cand = np.exp(mu + math.log(ratio) + rng.normal(0.0, 0.5, (m, n)))
        rl, rh = _t_limits(np.log(cand) - np.log(base))
        rl, rh = np.exp(rl), np.exp(rh)
        dl, dh = _t_limits(cand - base)
        if done == 0:
            _same_as_public(rl, rh, log_ratio_interval, base, cand)
            _same_as_public(dl, dh, mean_difference_interval, base, cand)
        hits_r += int(np.sum((rl <= ratio) & (ratio <= rh)))
        hits_d += int(np.sum((dl <= true_diff) & (true_diff <= dh)))
        width_r += float(np.sum(rh / rl))
        width_d += float(np.sum(dh - dl))
        done += m
    return {
        "ratio_cover": hits_r / reps,
        "ratio_width": width_r / reps,
        "diff_cover": hits_d / reps,
        "diff_width": width_d / reps,
    }


_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(80)


def _expit(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def repeated_truth(shift: float, sd: float = 1.5) -> float:
    """E[expit(L + shift) − expit(L)] for L ~ N(0, sd²), by 80-point Gauss–Hermite quadrature."""
    x = _GH_X * sd
    return float(np.sum(_GH_W * (_expit(x + shift) - _expit(x))) / np.sqrt(2 * np.pi))


def repeated_sim(n: int, shift: float, reps: int, seed: int, runs: int = 4) -> tuple[float, float]:
    """Task-level paired t on per-task pass fractions; heterogeneous tasks (logit ~ N(0, 1.5²))."""
    rng = np.random.default_rng(seed)
    truth = repeated_truth(shift)
    hits, width, done = 0, 0.0, 0
    chunk = max(1, 2_000_000 // n)
    while done < reps:
        m = min(chunk, reps - done)
        logit = rng.normal(0.0, 1.5, (m, n))
        fb = rng.binomial(runs, _expit(logit)) / runs
        fc = rng.binomial(runs, _expit(logit + shift)) / runs
        low, high = _t_limits(fc - fb)
        if done == 0:
            _same_as_public(low, high, paired_t_test, fb, fc)
        hits += int(np.sum((low <= truth) & (truth <= high)))
        width += float(np.sum(high - low))
        done += m
    return hits / reps, width / reps


# ----------------------------------------------------------------------------- report
def _pct(v: float, digits: int = 2) -> str:
    return f"{100 * v:.{digits}f}%"


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def section_tango() -> list[str]:
    cols = [(psi, d) for psi in PSIS for d in (0.0, psi / 2)]
    rows: list[list[str]] = []
    worst: tuple[float, tuple[int, float, float] | None] = (1.0, None)
    for n in NS:
        row = [str(n)]
        for psi, d in cols:
            cov, width = tango_coverage(n, psi, d)
            worst = min(worst, (cov, (n, psi, d)), key=lambda t: t[0])
            row.append(f"{_pct(cov)} ({width:.3f})")
        rows.append(row)
    head = ["n"] + [f"ψ={psi:g}, δ={d:g}" for psi, d in cols]
    return [
        "## 1. Headline uplift interval (one run per task), 95% (exact enumeration)",
        "",
        "Coverage of `headline_difference_interval` (the Tango score interval, computed at 96%",
        f"below {SPARSE_DISCORDANT} discordant pairs; the vectorised copy",
        "`ablation.stats.headline_interval.headline_interval_array` is tested equal to it) over every",
        "table `(b, c)` of the trinomial with `N = b + c ~ Bin(n, ψ)` and `c | N ~ Bin(N, (ψ + δ)/2ψ)`;",
        "tail mass below 1e-13 per binomial is left out and counted as a miss. Cell: coverage (mean",
        "width).",
        "",
        *_table(head, rows),
        f"Lowest coverage on this grid: {_pct(worst[0])} at n, ψ, δ = {worst[1]}. At ψ = 0.02 and",
        "small n it is conservative (almost no discordant pairs, and the interval is never narrower",
        "than ±z²/(n + z²)). This grid misses the sparse one-directional regime: section 1b.",
        "",
    ]


def section_wilson() -> list[str]:
    ps = (0.02, 0.1, 0.3, 0.5, 0.9)
    rows = []
    for n in NS:
        row = [str(n)]
        for p in ps:
            cov, width = wilson_coverage(n, p)
            row.append(f"{_pct(cov)} ({width:.3f})")
        low, at = wilson_min_coverage(n)
        row.append(f"{_pct(low)} at p={at:.3f}")
        rows.append(row)
    head = ["n", *[f"p={p:g}" for p in ps], "min over p ∈ [0.005, 0.995]"]
    return [
        "## 2. Per-arm pass rate: Wilson, 95% (exact enumeration)",
        "",
        "`wilson_interval(k, n)` for every k, weighted by `Bin(k; n, p)`. Cell: coverage (mean",
        "width). The last column is the minimum over a grid of 991 values of p: Wilson's",
        "known dips below 95% near the ends (Brown, Cai & DasGupta 2001).",
        "",
        *_table(head, rows),
    ]


def section_mcnemar() -> list[str]:
    rows = []
    for n in NS:
        row = [str(n)]
        for psi in PSIS:
            two = (exact_mcnemar_power(n, psi, 0.0), exact_mcnemar_power(n, psi, psi / 2))
            one = (
                exact_mcnemar_power(n, psi, 0.0, alternative="greater"),
                exact_mcnemar_power(n, psi, psi / 2, alternative="greater"),
            )
            row.append(f"{_pct(two[0])} / {_pct(two[1], 1)} · {_pct(one[0])} / {_pct(one[1], 1)}")
        rows.append(row)
    return [
        "## 3. Exact McNemar test at α = 0.05: size and power (exact enumeration)",
        "",
        "`exact_mcnemar_power(n, ψ, δ)` sums the rejection probability of",
        '`mcnemar(b, c, method="exact")` over the trinomial (tested against a brute-force double',
        "loop with `math.comb` and exact-fraction critical values). Size is the power at δ = 0;",
        "power is at δ = ψ/2 (candidate better). Cell: two-sided size / power · one-sided",
        '(`alternative="greater"`) size / power.',
        "",
        *_table(["n", *[f"ψ={psi:g}" for psi in PSIS]], rows),
        "The exact conditional test never exceeds α, and is conservative when few pairs are",
        "discordant (n·ψ small). Connor's normal n for ψ = 0.10, δ = 0.03 is 870, where the",
        f"exact test has {_pct(exact_mcnemar_power(870, 0.1, 0.03), 1)} power instead of 80%;",
        "`exact_sample_size_paired(0.10, 0.03)` gives 920.",
        "",
    ]


def section_ni(rows: list[NiRow]) -> list[str]:
    lines = [
        "## 4. Non-inferiority test (paired binary): exact size over the scan",
        "",
        'Size = sup over ψ of P(verdict "non-inferior") at the null boundary Δ = −M, with',
        "`N ~ Bin(n, ψ)` and `c | N ~ Bin(N, (ψ − M)/2ψ)`; ψ on the grid 0.06, 0.065, …, 0.5 (89",
        "values). For each N the public `noninferiority_test` is called to find the smallest c it",
        "declares non-inferior (its rejection set is `c ≥ c*(N)`, verified exhaustively at n = 30 in",
        "`tests/stats/test_stats_ni_size.py`). Discordant totals with probability < 1e-12 under every",
        "ψ of the grid are left out and 2e-12 is added to the size. n = 30..60 every n, then",
        "65..100 by 5, 120..300 by 20, 350..1000 by 50, for M = 0.02 and 0.05 at one-sided α = 0.05.",
        '"former" is the asymptotic Tango/Nam score test (p = 1 − Φ(Z)) used before.',
        "",
    ]
    for margin in NI_MARGINS:
        sub = [r for r in rows if r[1] == margin]
        new = max(sub, key=lambda r: r[2])
        old = max(sub, key=lambda r: r[5])
        over = [r[0] for r in sub if r[5] > ALPHA]
        lines += [
            f"- M = {margin:g}: exact test max size {_pct(new[2], 3)} (n = {new[0]}, ψ = "
            f"{new[3]:g}); former test max size {_pct(old[5], 3)} (n = {old[0]}, ψ = {old[6]:g}), "
            f"above 5% at {len(over)} of {len(sub)} n values (largest such n: "
            f"{max(over) if over else '-'}).",
        ]
    shown = (30, 40, 45, 50, 60, 100, 200, 300, 500, 700, 1000)
    table_rows = [
        [
            str(r[0]),
            f"{r[1]:g}",
            f"{_pct(r[2], 2)} (ψ={r[3]:g})",
            f"{_pct(r[5], 2)} (ψ={r[6]:g})",
            _pct(r[4], 1),
            _pct(r[7], 1),
        ]
        for r in rows
        if r[0] in shown
    ]
    head = ["n", "M", "size, exact", "size, former", "power Δ=0, exact", "power Δ=0, former"]
    return [
        *lines,
        "",
        *_table(head, table_rows),
        "Power is P(non-inferior) when the candidate is exactly as good as the baseline (Δ = 0) at",
        "ψ = 0.1: the price of the guaranteed size.",
        "",
    ]


def section_latency(reps: int) -> list[str]:
    ratios = (1.0, 1.5, 1 / 1.5, 2.0)
    ns = (20, 30, 50, 100, 200, 500, 2000)
    rows = []
    for n in ns:
        row = [str(n)]
        for j, ratio in enumerate(ratios):
            r = latency_sim(n, ratio, reps, SEED + 1000 * j + n)
            row.append(
                f"{_pct(r['ratio_cover'], 1)} ({r['ratio_width']:.2f}x) · "
                f"{_pct(r['diff_cover'], 1)} ({r['diff_width']:.2f} s)"
            )
        rows.append(row)
    head = ["n", *[f"ratio {r:.3g}" for r in ratios]]
    return [
        "## 5. Latency: geometric-mean ratio and mean difference, 95% (simulation)",
        "",
        f"{reps} replicates per cell, seed `{SEED} + 1000·column + n` (numpy `default_rng`). Model:",
        "log latency of task i = μ_i + log(ratio)·[candidate] + ε, μ_i ~ N(0, 1), ε ~ N(0, 0.5²)",
        "independently per arm. Truth: the ratio for `log_ratio_interval`; `exp(1/2 + 1/8)·(ratio −",
        "1)` seconds for `mean_difference_interval`. Cell: ratio-interval coverage (mean",
        "high/low) · mean-difference coverage (mean width in seconds). Monte Carlo SE of a",
        f"coverage near 95% is about {_pct(math.sqrt(0.95 * 0.05 / reps), 2)}.",
        "",
        *_table(head, rows),
        "The log-ratio t interval is exact in this model (normal log ratios) at every n. The",
        "raw-seconds interval under-covers while per-task differences are skewed: the report shows",
        f"it from `MEAN_DIFFERENCE_MIN_N` = {MEAN_DIFFERENCE_MIN_N} tasks, the smallest n of",
        "{20, 30, 50, 100, 200} where it covers at least 92% for ratios 1.5 and 1/1.5 (a 2x change",
        "needs about 200).",
        "",
    ]


def section_repeated(reps: int) -> list[str]:
    shifts = (0.0, 0.5)
    rows = []
    for n in NS:
        row = [str(n)]
        for j, shift in enumerate(shifts):
            cov, width = repeated_sim(n, shift, reps, SEED + 7 + 1000 * j + n)
            row.append(f"{_pct(cov, 1)} ({width:.3f})")
        rows.append(row)
    return [
        "## 6. Repeated runs: task-level paired t on per-task pass fractions, 95% (simulation)",
        "",
        f"{reps} replicates per cell, seed `{SEED} + 7 + 1000·column + n`. Heterogeneous tasks:",
        "logit of a task's baseline pass probability ~ N(0, 1.5²); the candidate adds a logit shift;",
        "4 runs per arm and task; `paired_t_test(fraction_base, fraction_cand)` over tasks. Truth:",
        "E[expit(L + shift) − expit(L)] by 80-point Gauss–Hermite quadrature. Cell: coverage (mean",
        "width).",
        "",
        *_table(["n tasks", *[f"logit shift {s:g}" for s in shifts]], rows),
    ]


def section_sparse(rows: list[tuple[int, dict[str, tuple[float, float, float]]]]) -> list[str]:
    shown = (10, 20, 30, 40, 50, 60, 80, 100, 150, 200, 300, 400, 500)
    table = []
    for n, worst in rows:
        if n in shown:
            t, h = worst["tango"], worst["headline"]
            table.append([
                str(n),
                f"{_pct(t[0])} (nψ={n * t[1]:.4g}, δ/ψ={t[2]:g})",
                f"{_pct(h[0])} (nψ={n * h[1]:.4g}, δ/ψ={h[2]:g})",
            ])
    low_t = min(rows, key=lambda r: r[1]["tango"][0])
    low_h = min(rows, key=lambda r: r[1]["headline"][0])
    under = [n for n, w in rows if w["tango"][0] < 0.935]
    return [
        "## 1b. Headline interval in the sparse one-directional regime (exact enumeration)",
        "",
        f"Scan of n = 10..100 (every n), 105..200 by 5, 220..500 by 20 ({len(rows)} values); ψ over",
        "nψ = 0.25, 0.5, …, 40 and 0.01, 0.02, …, 0.5 (ψ ≤ 0.5); δ/ψ = 0, 0.05, …, 1 (Tango is",
        "symmetric in b ↔ c and does not depend on the concordant split, so this is the whole",
        "trinomial of (b, c, concordant)). `benchmarks/validation_sparse.py`. Cell: the lowest exact",
        "coverage over ψ and δ at that n, and where.",
        "",
        *_table(["n", "Tango score, 95%", "headline (Tango, 96% below "
                 f"{SPARSE_DISCORDANT} discordant)"], table),
        f"- Tango alone: lowest {_pct(low_t[1]['tango'][0])} at n = {low_t[0]}; below 93.5% at",
        f"  {len(under)} of {len(rows)} n values (from n = {min(under) if under else '-'}), where",
        "  a handful of discordant pairs mostly go one way (nψ ≈ 4-15, δ/ψ ≥ 0.55).",
        f"- Headline rule (the default): lowest {_pct(low_h[1]['headline'][0])} at n = {low_h[0]}",
        f"  (nψ = {low_h[0] * low_h[1]['headline'][1]:.4g}, δ/ψ = {low_h[1]['headline'][2]:g}):",
        f"  {'at least' if low_h[1]['headline'][0] >= 0.935 else 'BELOW'} 93.5% on the whole scan.",
        "",
    ]


GATE_NS = (10, 20, 30, 50, 100, 200)
GATE_POWER = ((0.1, -0.05), (0.2, -0.05), (0.3, -0.15))


def section_gate(rows: list[dict[str, object]]) -> list[str]:
    names = ("exact conditional", "mid-p", "exact unconditional")
    table = []
    for row in rows:
        cells = [str(row["n"])]
        for name in names:
            size, at, powers = row[name]  # type: ignore[misc]
            cells.append(f"{_pct(size)} (ψ={at:.3g}) · " + " / ".join(_pct(p, 1) for p in powers))
        table.append(cells)
    worst = {name: max(float(r[name][0]) for r in rows) for name in names}  # type: ignore[index]
    return [
        "## 1c. The regression gate's test: exact size and power of three one-sided tests",
        "",
        "H1 \"candidate worse\" at α = 0.05. Size: supremum over the discordant probability",
        "ψ ∈ (0, 1] at Δ = 0 (a 2 000-point grid refined by golden-section search); power at",
        "(ψ, δ) = " + ", ".join(f"({p:g}, {d:g})" for p, d in GATE_POWER) + ". Exact enumeration of",
        "every table (`benchmarks/validation_gate.py`). Exact conditional: `P(X ≥ b) ≤ α`,",
        "`X ~ Bin(b + c, ½)` (the gate); mid-p: `P(X > b) + ½P(X = b) ≤ α`; exact unconditional:",
        "Suissa-Shuster, tables ordered by `(b − c)/√(b + c)`, largest region with size ≤ α on the",
        "grid. Cell: size (where) · powers.",
        "",
        *_table(["n", *names], table),
        "Largest size: " + "; ".join(f"{k} {_pct(v)}" for k, v in worst.items()) + ".",
        "Mid-p exceeds α (mostly at ψ near 1), so it cannot be the gate. The exact unconditional test",
        "keeps its size and has several times the power of the exact conditional test with few",
        "discordant pairs (first power column, n = 20..50), the two converging as n grows; the",
        "choice is in `docs/STATISTICS.md` (section 1).",
        "",
    ]


REPEATED_NS = (30, 100, 300)
REPEATED_MODELS = ("point-mass", "beta")
NI_REP_MARGIN = 0.05


def section_repeated_modes(rows: dict[tuple[str, int, float], tuple[float, float]], reps: int) -> list[str]:
    table = []
    for model in REPEATED_MODELS:
        for n in REPEATED_NS:
            cov0, _ = rows[(model, n, 0.0)]
            cov1, ni = rows[(model, n, -NI_REP_MARGIN)]
            table.append([model, str(n), _pct(cov0, 1), _pct(cov1, 1), _pct(ni, 1)])
    low = min(v[0] for v in rows.values())
    high_ni = max(v[1] for k, v in rows.items() if k[2] < 0)
    return [
        "## 6b. Repeated runs with mostly deterministic tasks (simulation)",
        "",
        f"{reps} replicates per cell, seed `{SEED} + 11 + 1000·n + index`; {3} runs per arm and",
        "task (`benchmarks/validation_modes.py`). Point-mass model: 90% of tasks deterministic and",
        "equal in both arms, 10% flaky (baseline 0.5, candidate 0.5 + 10Δ). Beta model: baseline",
        "p ~ Beta(0.2, 0.2) (most tasks near 0 or 1), a random share of tasks moves to 0.2p so that",
        "the mean change is Δ. Headline: `bounded_mean_interval` (95%, the report's repeated-runs",
        f"interval); NI: `bounded_mean_noninferiority` at M = {NI_REP_MARGIN:g}, one-sided α = 0.05,",
        "at the boundary Δ = −M (a \"non-inferior\" is a false pass).",
        "",
        *_table(["model", "n tasks", "coverage Δ=0", f"coverage Δ=−{NI_REP_MARGIN:g}",
                 "false non-inferior at Δ=−M"], table),
        f"Lowest coverage {_pct(low, 1)}; largest false non-inferior rate {_pct(high_ni, 1)}. The",
        "betting interval is valid at every n by construction (a nonnegative supermartingale), and",
        "conservative here; it is never zero width (the paired t interval was [0, 0] when no task",
        "changed and covered 73% with 5% of tasks changing).",
        "",
    ]


ARM_NS = (10, 30, 100, 300, 2500)


def section_arm_rate(rows: dict[tuple[str, int], float], reps: int) -> list[str]:
    table = [[model, str(n), _pct(rows[(model, n)], 1)] for model in ARM_MODELS for n in ARM_NS]
    low = min(rows.values())
    return [
        "## 6c. An arm's pass rate with repeated runs (simulation)",
        "",
        f"{reps} replicates per cell, seed `{SEED} + 19 + 1000·n + index`; 3 runs per task; the",
        "report's `repeated_pass_rate_interval` (95%): the fixed-n betting interval for the mean",
        "per-task pass fraction up to 2,000 tasks, above that Wilson at the design-effect sample",
        "size. Models: the baseline arms of 6b (point-mass and Beta(0.2, 0.2), mean 0.5) and",
        "Beta(0.08, 0.32) (mean 0.2, most tasks always fail).",
        "",
        *_table(["model", "n tasks", "coverage"], table),
        f"Lowest coverage {_pct(low, 1)} (Monte Carlo SE about 1.1% near 95%).",
        "",
    ]


SEQ_NI_CASES = ((200, 0.2, 0.05), (1000, 0.2, 0.05), (500, 0.1, 0.02), (200, 0.4, 0.05))


def section_sequential_ni(rates: list[float], reps: int) -> list[str]:
    table = [
        [str(n), f"{psi:g}", f"{m:g}", f"{_pct(r, 2)} ± {_pct(math.sqrt(r * (1 - r) / reps), 2)}"]
        for (n, psi, m), r in zip(SEQ_NI_CASES, rates, strict=True)
    ]
    return [
        "## 7. Sequential non-inferiority at the margin (simulation)",
        "",
        f"{reps} campaigns per row, seed `{SEED} + 13 + row`. Pairs i.i.d. with Δ = −M exactly",
        "(regression probability (ψ + M)/2, improvement (ψ − M)/2), monitored after every pair by",
        "`sequential_decisions(d, margin=M, suite_size=N)`: the population claim the report makes.",
        "Cell: rate of a \"non-inferior\" stop (a false pass; nominal ≤ 5%) ± its Monte Carlo SE.",
        "",
        *_table(["N", "ψ", "M", "false non-inferior"], table),
    ]


JOINT_CASES = ((50, 1.0), (200, 1.0), (50, LIMIT), (200, LIMIT), (200, 0.0))


def section_joint(rows: list[tuple[float, float, float, float]], reps: int) -> list[str]:
    labels = {1.0: "1 (identical arms)", LIMIT: f"{LIMIT:g} (at the limit)", 0.0: "looping"}
    table = [
        [str(n), labels[r], *(_pct(v, 1) for v in vals)]
        for (n, r), vals in zip(JOINT_CASES, rows, strict=True)
    ]
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    null = [v for (n, r), v in zip(JOINT_CASES, rows, strict=True) if r == 1.0]
    at_limit = [v for (n, r), v in zip(JOINT_CASES, rows, strict=True) if r == LIMIT]
    alone_ok = all(max(v[0], v[1]) <= ALPHA + 2 * se for v in null)
    ratio_ok = all(v[2] <= ALPHA + 2 * se for v in at_limit)
    gate_over = max(v[1] for v in at_limit)
    return [
        "## 8. Latency with timeouts and the gates' joint size (simulation)",
        "",
        f"{reps} campaigns per row, seed `{SEED} + 17 + row`; `benchmarks/validation_joint.py`,",
        "whose row-wise gate decisions are checked equal to `compare_results` with every opt-in gate",
        f"on (`max_latency_ratio = {LIMIT:g}`, `noninferiority_margin = 0.05`, a metric margin) on",
        "the first campaigns of each row. One run per task, ψ = 0.2, Δ = 0 (pass/fail exchangeable",
        "between arms); log latency = task effect N(2.3, 0.8²) + N(0, 0.3²) per arm, the candidate",
        f"multiplied by the ratio; a trial over {CAP:g} s is a timeout (about 4% per arm at ratio 1),",
        "counted at the cap. \"looping\": the candidate is as fast but times out on the 4% slowest",
        "tasks (the gate should fail: that is power, not size). Cell: rate of a FAIL (the ratio",
        "test column: of a rejection by the latency gate's ratio test alone). The non-inferiority",
        "gates are not fail-if-significant tests (they fail until non-inferiority is shown), so",
        "their failures at Δ = 0 are a matter of power and are left out. Monte Carlo SE of a rate",
        f"near 5%: {_pct(se, 2)}.",
        "",
        *_table(["n", "latency ratio", "regression gate", "latency gate", "ratio test alone",
                 "either gate (joint)"], table),
        f"- With identical arms each gate {'keeps' if alone_ok else 'does NOT keep'} α (within two",
        "  Monte Carlo SE).",
        f"- At the latency limit the ratio test alone {'keeps' if ratio_ok else 'does NOT keep'} α",
        "  (timeouts counted at the cap can only lower the ratio). The candidate, slower, also",
        "  times out more, so the gate's exact test of unbalanced timeouts alone would fail it more",
        "  often than α; the gate combines the two tests by Bonferroni (each at α/2), and fails at",
        f"  its limit {_pct(gate_over, 1)} of the time"
        f"{' (more than α)' if gate_over > ALPHA + 2 * se else ' (within α)'}.",
        "- The joint rate of the two fail-if-significant gates is up to the sum of their sizes (no",
        "  Holm between them, by design: `docs/STATISTICS.md`, multiplicity).",
        "",
    ]

REUSABLE = ("4", "5", "6")


def _existing_sections() -> dict[str, list[str]]:
    """Sections :data:`REUSABLE` of the current ``docs/VALIDATION.md``, by number, as lines."""
    lines = (ROOT / "docs" / "VALIDATION.md").read_text(encoding="utf-8").splitlines()
    found: dict[str, list[str]] = {}
    key = None
    for line in lines:
        if line.startswith("## "):
            key = line[3:].split(".", 1)[0]
            key = key if key in REUSABLE else None
            if key:
                found[key] = []
        if key:
            found[key].append(line)
    missing = [k for k in REUSABLE if k not in found]
    if missing:
        raise SystemExit(f"docs/VALIDATION.md has no section(s) {', '.join(missing)} to reuse")
    for k in found:
        while found[k] and not found[k][-1].strip():
            found[k].pop()
        found[k].append("")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small run, no document written")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument(
        "--reuse", action="store_true",
        help=f"copy sections {', '.join(REUSABLE)} (the slowest) from the current document",
    )  # fmt: skip
    args = parser.parse_args()
    reused = _existing_sections() if args.reuse else {}
    start = time.perf_counter()
    reps = 1000 if args.quick else 10_000
    ni_ns = (30, 50, 100) if args.quick else NI_NS
    jobs = [] if reused else [(n, m) for m in NI_MARGINS for n in ni_ns]
    jobs.sort(key=lambda j: -j[0])  # longest first
    sparse_ns = (10, 20, 40, 100, 200) if args.quick else SPARSE_NS
    gate_ns = (10, 20, 30) if args.quick else GATE_NS
    rep_reps = 40 if args.quick else 300
    seq_reps = 400 if args.quick else 4000
    joint_reps = 100 if args.quick else 1000
    rep_jobs = [
        (model, n, target, NI_REP_MARGIN if target < 0 else 0.0, rep_reps,
         SEED + 11 + 1000 * n + i)
        for i, (model, target) in enumerate(
            (m, t) for m in REPEATED_MODELS for t in (0.0, -NI_REP_MARGIN)
        )
        for n in REPEATED_NS
    ]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        ni_future = pool.map(ni_size_row, jobs)
        sparse_future = pool.map(sparse_row, sorted(sparse_ns, reverse=True))
        gate_future = pool.map(gate_row, [(n, GATE_POWER) for n in gate_ns])
        rep_future = pool.map(repeated_cell, rep_jobs)
        joint_future = pool.map(
            joint_cell,
            [(n, r, joint_reps, SEED + 17 + i) for i, (n, r) in enumerate(JOINT_CASES)],
        )
        arm_jobs = [(m, n, joint_reps // 2, SEED + 19 + 1000 * n + i)
                    for i, m in enumerate(ARM_MODELS) for n in ARM_NS]
        arm_future = pool.map(arm_rate_cell, arm_jobs)
        seq_future = pool.map(
            sequential_ni_cell,
            [(n, p, m, seq_reps, SEED + 13 + i) for i, (n, p, m) in enumerate(SEQ_NI_CASES)],
        )
        ni_rows = sorted(ni_future, key=lambda r: (r[1], r[0]))
        sparse_rows = sorted(sparse_future)
        gate_rows = list(gate_future)
        rep_rows = {(j[0], j[1], j[2]): r for j, r in zip(rep_jobs, rep_future, strict=True)}
        seq_rows = list(seq_future)
        joint_rows = list(joint_future)
        arm_rows = {(j[0], j[1]): r for j, r in zip(arm_jobs, arm_future, strict=True)}
    body = [
        *section_tango(),
        *section_sparse(sparse_rows),
        *section_gate(gate_rows),
        *section_wilson(),
        *section_mcnemar(),
        *(reused["4"] if reused else section_ni(ni_rows)),
        *(reused["5"] if reused else section_latency(reps)),
        *(reused["6"] if reused else section_repeated(reps)),
        *section_repeated_modes(rep_rows, rep_reps),
        *section_arm_rate(arm_rows, joint_reps // 2),
        *section_sequential_ni(seq_rows, seq_reps),
        *section_joint(joint_rows, joint_reps),
    ]
    elapsed = time.perf_counter() - start
    head = [
        "# Validation of the default intervals and tests",
        "",
        "Generated by `python benchmarks/validation.py`; do not edit by hand. Exact figures come",
        "from enumerating the binomial or trinomial distribution of the counts; simulated figures",
        "state their replicate count and seed. Nominal level 95% for intervals, α = 0.05 for tests",
        "(one-sided α = 0.05 for non-inferiority, whose interval is the two-sided 90% one).",
        "",
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__};",
        f"runtime {elapsed / 60:.1f} min on {platform.machine()} with {args.workers} worker "
        "process(es).",
        "",
    ]
    if reused:
        head[-1:] = [
            f"Sections {', '.join(REUSABLE)} were copied from the previous run of this script",
            "(`--reuse`; their code is unchanged since): `python benchmarks/validation.py`",
            "recomputes every section.",
            "",
        ]
    text = "\n".join(head + body)
    if args.quick:
        print(text)
        return
    out = ROOT / "docs" / "VALIDATION.md"
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
