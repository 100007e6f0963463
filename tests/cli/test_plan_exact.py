"""``ablation plan`` beside Connor's n: the exact McNemar test's power and the n it needs.

The reference is a brute-force sum over every table, written here independently of
:mod:`ablation.stats.power`: with ``n`` pairs, the discordant count ``d ~ Bin(n, psi)``; given
``d``, the regressions ``b ~ Bin(d, p10 / psi)`` with ``p10 = (psi - delta) / 2``; the two-sided
exact McNemar test rejects when ``min(1, 2 * P(X <= min(b, d - b))) <= alpha`` for
``X ~ Bin(d, 1/2)`` (``scipy.stats.binomtest(b, d, 0.5).pvalue``).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats as sps

from ablation.cli import main

PSI, DELTA, ALPHA = 0.10, 0.03, 0.05


def _rejection_by_d(max_n: int) -> np.ndarray:
    """``R[d] = P(reject | d discordant pairs)`` for d = 0..max_n, by summing over every b (one
    row of a ``(d, b)`` table per d; the cells with ``b > d`` are not tables and count 0)."""
    pi_b = (PSI - DELTA) / 2 / PSI
    d = np.arange(max_n + 1)[:, None]
    b = np.arange(max_n + 1)[None, :]
    p_two = np.minimum(1.0, 2.0 * sps.binom.cdf(np.minimum(b, d - b), d, 0.5))
    return np.where((b <= d) & (p_two <= ALPHA), sps.binom.pmf(b, d, pi_b), 0.0).sum(axis=1)


def _brute_power(n: int, r: np.ndarray) -> float:
    d = np.arange(n + 1)
    return float(np.sum(sps.binom.pmf(d, n, PSI) * r[: n + 1]))


def _brute_powers(max_n: int, r: np.ndarray) -> np.ndarray:
    """:func:`_brute_power` of n = 0..max_n, one row of an ``(n, d)`` table each (``pmf`` is 0
    where ``d > n``)."""
    n = np.arange(max_n + 1)[:, None]
    d = np.arange(max_n + 1)[None, :]
    return (sps.binom.pmf(d, n, PSI) * r[: max_n + 1]).sum(axis=1)


def test_brute_force_matches_binomtest_on_small_tables() -> None:
    r = _rejection_by_d(12)
    pi_b = (PSI - DELTA) / 2 / PSI
    for d in (1, 5, 12):
        ref = sum(
            sps.binom.pmf(b, d, pi_b) for b in range(d + 1) if sps.binomtest(b, d, 0.5).pvalue <= ALPHA
        )
        assert r[d] == pytest.approx(ref, abs=1e-12)


@pytest.mark.slow
def test_plan_prints_connor_n_exact_power_and_exact_n(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--discordance", "0.10", "--uplift", "0.03", "--two-sided"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"tasks needed: 870 \(Connor 1987", out), out
    power = re.search(r"at 870 tasks: power ([\d.]+)%", out)
    needed = re.search(r"80% power with the exact McNemar test: (\d+)", out)
    assert power and needed, out
    n_exact = int(needed.group(1))
    r = _rejection_by_d(n_exact + 50)
    assert float(power.group(1)) == pytest.approx(100 * _brute_power(870, r), abs=0.05)
    assert _brute_power(870, r) < 0.8  # Connor's n over-promises for the exact test
    powers = _brute_powers(n_exact + 50, r)
    assert powers[870] == pytest.approx(_brute_power(870, r), abs=1e-12)
    first = next(n for n in range(1, n_exact + 51) if powers[n] >= 0.8)
    assert n_exact == first
