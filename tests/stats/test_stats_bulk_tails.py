"""Bulk binomial tails (calls of >= 2000 entries with some N >= 1e5, the exact power at 1e5+
pairs) go through ``scipy.special.bdtr`` / ``bdtrc``; checked against exact integer sums, the
package's own entrywise tails (through the power they feed), and the exact median of an odd
``Bin(n, ½)``. Tolerances are scipy's own error at large ``N``: ``1e-12 + 1e-14·N`` relative.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from ablation.stats import _dist, power


def _chain(n0: int, length: int, p: float, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive ``N`` from ``n0`` and ``k(N) = ⌊N·p + z·√(N·p·q)⌋`` (steps of 0 or 1)."""
    ns = np.arange(n0, n0 + length, dtype=np.float64)
    ks = np.clip(np.floor(ns * p + z * np.sqrt(ns * p * (1.0 - p))), 0.0, ns - 1.0)
    return ks, ns


def _exact_lower_at_half(k: int, n: int, term: int) -> float:
    """``P(X ≤ k)`` for ``X ~ Bin(n, ½)`` from ``term = C(n, k)``: the sum of ``C(n, j)`` in
    integers, until its terms no longer reach the 60th bit of the total, over ``2^n``."""
    total, j = 0, k
    while j >= 0 and (j > k - 10 or term > total >> 60):
        total += term
        term = term * j // (n - j + 1)
        j -= 1
    return float(Fraction(total, 1 << n))


def _exact_tails_at_half(k: int, n: int) -> tuple[float, float]:
    """``(P(X ≤ k), P(X > k))`` for ``X ~ Bin(n, ½)``, the second as ``P(X ≤ n − k − 1)``; one
    ``math.comb`` (a tenth of a second at n = 1e5): ``C(n, n − k − 1) = C(n, k)·(n − k)/(k + 1)``."""
    top = math.comb(n, k)
    upper_top = top * (n - k) // (k + 1)
    return _exact_lower_at_half(k, n, top), _exact_lower_at_half(n - k - 1, n, upper_top)


@pytest.mark.parametrize("z", [-2.0, 0.7])
def test_bulk_tails_match_exact_sums_at_half(z: float) -> None:
    ks, ns = _chain(100_000, 2048, 0.5, z)
    lower = np.asarray(_dist.bdtr(ks, ns, 0.5))
    upper = np.asarray(_dist.bdtrc(ks, ns, 0.5))
    rtol = 1e-12 + 1e-14 * float(ns[-1])
    for i in (17, 1024, 2047):
        n, k = int(ns[i]), int(ks[i])
        exact_lower, exact_upper = _exact_tails_at_half(k, n)
        assert lower[i] == pytest.approx(exact_lower, rel=rtol, abs=0.0)
        # P(X > k) = P(X ≤ n − k − 1) at p = ½
        assert upper[i] == pytest.approx(exact_upper, rel=rtol, abs=0.0)


def test_bulk_tails_are_half_at_the_median_of_an_odd_bin_half() -> None:
    ns = 100_001.0 + 2.0 * np.arange(2500)  # odd n
    ks = (ns - 1.0) / 2.0
    assert np.all(np.asarray(_dist.bdtr(ks, ns, 0.5)) == 0.5)
    assert np.all(np.asarray(_dist.bdtrc(ks, ns, 0.5)) == 0.5)


@pytest.mark.parametrize(("n", "psi"), [(1_000_000, 0.3), (200_000, 0.6)])
def test_power_on_bulk_tails_equals_the_entrywise_power(
    n: int, psi: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    delta = 0.004 if n == 200_000 else 0.0015
    bulk = power._power(n, psi, delta, 0.05, "two-sided")
    with monkeypatch.context() as m:  # every tail by the package's own continued fraction
        m.setattr(_dist, "_BULK_N", 10**12)
        entrywise = power._power(n, psi, delta, 0.05, "two-sided")
    assert 0.0 < bulk < 1.0
    assert bulk == pytest.approx(entrywise, rel=1e-12 + 1e-14 * n * psi, abs=0.0)
