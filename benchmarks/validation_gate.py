"""Which one-sided test should the regression gate run? Exact size and power of three candidates.

Used by ``benchmarks/validation.py`` (section "gate test"). The gate's H1 is "candidate worse"
(``Δ < 0``, more regressions ``b`` than improvements ``c``); H0 is ``Δ ≥ 0``, whose least
favourable point is ``Δ = 0`` for the three tests below (each rejects on larger ``b`` at fixed
``c`` and on smaller ``c`` at fixed ``b``). Under ``Δ = 0`` the discordant probability ψ is the
nuisance, anywhere in ``(0, 1]``; the size is the supremum over ψ, taken on a grid of 2 000
values of ψ refined around the largest value (golden-section search), and stated as such.

Tests (one-sided, α = 0.05):

* **exact conditional** (the current gate): ``P(X ≥ b) ≤ α`` for ``X ~ Bin(b + c, ½)``;
* **mid-p**: ``P(X > b) + ½·P(X = b) ≤ α``;
* **exact unconditional** (Suissa & Shuster 1991): order the tables by
  ``Z = (b − c)/√(b + c)`` (0 when ``b + c = 0``) and reject the largest set ``{Z ≥ z*}`` whose
  probability stays ≤ α for every ψ of a 2 000-point grid (ties kept together). Its size off the
  grid is measured, not assumed.

Everything is exact enumeration of the trinomial ``(b, c, concordant)``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import gammaln

ALPHA = 0.05
PSI_GRID = np.linspace(0.0005, 1.0, 2000)


def _tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(b, c)`` with ``b + c ≤ n``."""
    nd = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
    c = np.arange(nd.size) - nd * (nd + 1) // 2
    return nd - c, c


def _pmf(n: int, b: np.ndarray, c: np.ndarray, p12: float, p21: float) -> np.ndarray:
    """Trinomial probabilities of the tables (log space; zero cells handled exactly)."""
    lf = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(n - b - c + 1)
    p0 = 1.0 - p12 - p21
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = (
            lf
            + np.where(b > 0, b * np.log(p12), 0.0)
            + np.where(c > 0, c * np.log(p21), 0.0)
            + np.where(n - b - c > 0, (n - b - c) * np.log(p0) if p0 > 0 else -np.inf, 0.0)
        )
    return np.exp(lp)


def conditional_reject(b: np.ndarray, c: np.ndarray, midp: bool) -> np.ndarray:
    """Rejection indicator of the exact conditional (or mid-p) one-sided McNemar test."""
    nd = b + c
    p = stats.binom.sf(b - 1, nd, 0.5)  # P(X >= b)
    if midp:
        p = p - 0.5 * stats.binom.pmf(b, nd, 0.5)
    return (nd > 0) & (p <= ALPHA * (1 + 1e-12))


def unconditional_reject(n: int, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Suissa-Shuster rejection region ``{Z ≥ z*}`` with size ≤ α on :data:`PSI_GRID`."""
    nd = b + c
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(nd > 0, (b - c) / np.sqrt(nd), 0.0)
    order = np.argsort(-z, kind="stable")
    zs = z[order]
    ends = np.nonzero(np.append(np.diff(zs) < -1e-12, True))[0]  # last index of each tie group
    worst = np.zeros(ends.size)
    for psi in PSI_GRID:
        cum = np.cumsum(_pmf(n, b[order], c[order], psi / 2, psi / 2))
        np.maximum(worst, cum[ends], out=worst)
    ok = np.nonzero(worst <= ALPHA)[0]
    reject = np.zeros(z.size, dtype=bool)
    if ok.size:
        reject[order[: ends[ok[-1]] + 1]] = True
    return reject


def _size(n: int, b: np.ndarray, c: np.ndarray, reject: np.ndarray) -> tuple[float, float]:
    """Supremum over ψ of P(reject) at Δ = 0: the grid, then a golden-section refinement."""
    bb, cc = b[reject], c[reject]

    def f(psi: float) -> float:
        return float(_pmf(n, bb, cc, psi / 2, psi / 2).sum())

    vals = np.array([f(p) for p in PSI_GRID])
    i = int(np.argmax(vals))
    lo, hi = PSI_GRID[max(i - 1, 0)], PSI_GRID[min(i + 1, PSI_GRID.size - 1)]
    g = (np.sqrt(5) - 1) / 2
    for _ in range(40):
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(x1) > f(x2):
            hi = x2
        else:
            lo = x1
    best = max(float(vals[i]), f(0.5 * (lo + hi)))
    at = float(PSI_GRID[i]) if vals[i] >= best else 0.5 * (lo + hi)
    return best, at


def gate_row(args: tuple[int, tuple[tuple[float, float], ...]]) -> dict[str, object]:
    """Size (sup over ψ) and power at the given ``(ψ, δ)`` points of the three tests at ``n``."""
    n, power_points = args
    b, c = _tables(n)
    rejects = {
        "exact conditional": conditional_reject(b, c, midp=False),
        "mid-p": conditional_reject(b, c, midp=True),
        "exact unconditional": unconditional_reject(n, b, c),
    }
    out: dict[str, object] = {"n": n}
    for name, rej in rejects.items():
        size, at = _size(n, b, c, rej)
        powers = [
            float(_pmf(n, b[rej], c[rej], (psi - d) / 2, (psi + d) / 2).sum())
            for psi, d in power_points
        ]
        out[name] = (size, at, powers)
    return out
