"""The exact non-inferiority p-value against brute force, and why it is not monotone in the margin.

Each margin M orders the tables by its own statistic Z(−M) and takes the supremum over ψ in the
Clopper–Pearson interval for the discordant probability cut to [M, 1] (docs/STATISTICS.md §7), so
the p-values at two margins come from two different tests: a looser margin can give a larger p.
The reference enumerates every trinomial table of n pairs and scans ψ on a dense grid (a lower
bound of the supremum, so the library's p may only exceed it by the grid's slack).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as ss
from scipy.special import gammaln

from ablation import stats
from ablation.stats.paired_interval import tango_score_statistic

GAMMA = 0.001


def _brute(n11: int, b: int, c: int, n22: int, margin: float, grid: int = 2000) -> float:
    n = n11 + b + c + n22
    tables = np.array([(x, y) for x in range(n + 1) for y in range(n + 1 - x)])
    z = np.array([tango_score_statistic(int(x), int(y), n, -margin) for x, y in tables])
    extreme = tables[z >= tango_score_statistic(b, c, n, -margin) - 1e-12]
    k = b + c
    low = max(ss.beta.ppf(GAMMA / 2, k, n - k + 1) if k else 0.0, margin)
    high = ss.beta.ppf(1 - GAMMA / 2, k + 1, n - k) if k < n else 1.0
    if high < margin:
        return GAMMA
    x, y = extreme[:, 0], extreme[:, 1]
    log_coef = gammaln(n + 1) - gammaln(x + 1) - gammaln(y + 1) - gammaln(n - x - y + 1)
    psi = np.linspace(low, high, grid)[:, None]
    pb, pc = (psi + margin) / 2, np.clip((psi - margin) / 2, 1e-300, None)
    logp = log_coef + x * np.log(pb) + y * np.log(pc) + (n - x - y) * np.log1p(-psi)
    return float(np.exp(logp).sum(axis=1).max()) + GAMMA


@pytest.mark.parametrize("table", [(10, 2, 3, 5), (29, 2, 1, 18), (40, 6, 2, 12)])
@pytest.mark.parametrize("margin", [0.01, 0.015, 0.02, 0.03, 0.05, 0.1])
def test_exact_pvalue_is_the_brute_force_supremum(table: tuple[int, int, int, int], margin: float) -> None:
    result = stats.noninferiority_test(*table, margin=margin)
    n = sum(table)
    asymptotic = 1 - ss.norm.cdf(tango_score_statistic(table[1], table[2], n, -margin))
    exact = _brute(*table, margin)
    assert result.pvalue == pytest.approx(max(exact, asymptotic), abs=2e-4)
    assert result.pvalue >= max(exact, asymptotic) - 1e-7  # the zoomed grid: within 1e-7 of the scan


def test_a_looser_margin_can_give_a_larger_pvalue() -> None:
    """n = 20, b = 2, c = 3: p = 0.328 at M = 0.015 and 0.579 at M = 0.02, both the exact test's."""
    tight, loose = (stats.noninferiority_test(10, 2, 3, 5, margin=m).pvalue for m in (0.015, 0.02))
    assert tight == pytest.approx(_brute(10, 2, 3, 5, 0.015), abs=2e-4)
    assert loose == pytest.approx(_brute(10, 2, 3, 5, 0.02), abs=2e-4)
    assert loose > tight + 0.2
