"""Exact coverage of the headline uplift interval (Tango score), by enumerating the trinomial.

With ``n`` pairs, discordant probability ψ and difference δ, ``N = b + c ~ Bin(n, ψ)`` and
``c | N ~ Bin(N, (ψ + δ)/(2ψ))``. Coverage is the probability of the tables whose interval contains
δ; tables are enumerated in the central part of both binomials (mass left out < 1e-12, counted as
not covered, so the figure is a lower bound).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ablation.stats import paired_difference_interval
from ablation.stats._tango import tango_interval_array

TAIL = 1e-13


def _tables(n: int, psi: float, delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (b, c) in the central mass with their trinomial probabilities (scipy.stats.binom)."""
    q = (psi + delta) / (2 * psi)  # P(improvement | discordant)
    nd_all = np.arange(int(stats.binom.ppf(TAIL, n, psi)), int(stats.binom.isf(TAIL, n, psi)) + 1)
    bs, cs, ws = [], [], []
    for nd in nd_all:
        c = np.arange(int(stats.binom.ppf(TAIL, nd, q)), int(stats.binom.isf(TAIL, nd, q)) + 1)
        c = c[(c >= 0) & (c <= nd)]
        bs.append(nd - c)
        cs.append(c)
        ws.append(stats.binom.pmf(nd, n, psi) * stats.binom.pmf(c, nd, q))
    return np.concatenate(bs), np.concatenate(cs), np.concatenate(ws)


def tango_coverage(n: int, psi: float, delta: float, level: float = 0.95) -> float:
    b, c, w = _tables(n, psi, delta)
    low, high = tango_interval_array(b, c, n, float(stats.norm.isf((1 - level) / 2)))
    return float(np.sum(w[(low <= delta) & (delta <= high)]))


def test_vectorised_interval_is_the_public_one() -> None:
    rng = np.random.default_rng(5)
    n = 200
    b = rng.integers(0, 100, 300)
    c = rng.integers(0, 100, 300)
    for level in (0.9, 0.95):
        low, high = tango_interval_array(b, c, n, float(stats.norm.isf((1 - level) / 2)))
        for i in range(b.size):
            ci = paired_difference_interval(
                n - b[i] - c[i], b[i], c[i], 0, confidence_level=level
            ).confidence_interval
            assert low[i] == pytest.approx(ci.low, abs=1e-11)
            assert high[i] == pytest.approx(ci.high, abs=1e-11)
    for b0, c0 in ((0, 0), (0, n), (n, 0), (0, 1)):
        lo, hi = tango_interval_array(np.array([b0]), np.array([c0]), n, 1.959963984540054)
        ci = paired_difference_interval(n - b0 - c0, b0, c0, 0).confidence_interval
        assert (lo[0], hi[0]) == pytest.approx((ci.low, ci.high), abs=1e-11)


def test_enumeration_is_complete() -> None:
    _, _, w = _tables(100, 0.3, 0.15)
    assert w.sum() == pytest.approx(1.0, abs=1e-11)


@pytest.mark.parametrize("n", [30, 100, 500])
@pytest.mark.parametrize("psi", [0.02, 0.1, 0.3])
@pytest.mark.parametrize("half", [False, True])
def test_tango_coverage_at_least_93_5(n: int, psi: float, half: bool) -> None:
    delta = psi / 2 if half else 0.0
    assert tango_coverage(n, psi, delta) >= 0.935
