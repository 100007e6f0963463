"""Binomial tails along chains of consecutive ``N`` (``stats/_binom_chain.py``, the exact power at 1e5+).

References: exact rational sums (the recurrence alone), exact integer sums at ``p = ½``, the
package's entrywise tails, and ``scipy.special.bdtr`` / ``bdtrc`` within scipy's own error at
large ``N`` (``1e-12 + 1e-14·N``, see tests/stats/test_stats_dist.py).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sp

import ablation
from ablation.stats import _binom_chain, _dist, power


def _exact_tail(k: int, n: int, p: Fraction, *, upper: bool) -> Fraction:
    """``P(X ≤ k)`` or ``P(X > k)`` for ``X ~ Bin(n, p)``, ``p = num/den``, in integers."""
    num, den = p.numerator, p.denominator
    js = range(k + 1, n + 1) if upper else range(k + 1)
    total = sum(math.comb(n, j) * num**j * (den - num) ** (n - j) for j in js)
    return Fraction(total, den**n)


def _exact_direct(p: Fraction):  # type: ignore[no-untyped-def]
    """Entrywise tails and pmf in exact rationals (rounded once), for chains at one ``p``."""

    def direct(k: np.ndarray, n: np.ndarray, _p: np.ndarray, *, upper: bool) -> np.ndarray:
        return np.array(
            [float(_exact_tail(int(a), int(b), p, upper=upper)) for a, b in zip(k, n, strict=True)]
        )

    def pmf(k: np.ndarray, n: np.ndarray, _p: np.ndarray) -> np.ndarray:
        return np.array(
            [
                float(math.comb(int(b), int(a)) * p ** int(a) * (1 - p) ** int(b - a))
                for a, b in zip(k, n, strict=True)
            ]
        )

    return direct, pmf


def _chain(n0: int, length: int, p: float, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive ``N`` from ``n0`` and ``k(N) = ⌊N·p + z·√(N·p·q)⌋`` (steps of 0 or 1)."""
    ns = np.arange(n0, n0 + length, dtype=np.float64)
    ks = np.clip(np.floor(ns * p + z * np.sqrt(ns * p * (1.0 - p))), 0.0, ns - 1.0)
    return ks, ns


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize(("num", "z"), [(512, 0.3), (300, -3.0), (900, 2.5), (40, -1.0)])
def test_recurrence_matches_exact_rational_tails(num: int, z: float, upper: bool) -> None:
    # exact anchors in, so the difference is the recurrence's own rounding (bounded by 2.3e-13)
    p = Fraction(num, 1024)
    ks, ns = _chain(300, 70, float(p), z)
    direct, pmf = _exact_direct(p)
    out = _binom_chain.chain_tails(
        ks, ns, np.full(ns.size, float(p)), upper=upper, direct=direct, pmf=pmf
    )
    exact = np.array(
        [float(_exact_tail(int(a), int(b), p, upper=upper)) for a, b in zip(ks, ns, strict=True)]
    )
    np.testing.assert_allclose(out, exact, rtol=3e-13, atol=0.0)


def test_breaks_and_edges_go_to_the_direct_tails() -> None:
    # a gap in N, a jump in k, a change of p and entries at the domain's edges
    ks, ns = _chain(150_000, 300, 0.4, -1.0)
    ks[100:] += 5.0
    ns[200:] += 7.0
    ps = np.full(ns.size, 0.4)
    ps[250:] = 0.45
    ks[40], ks[41], ps[42] = -1.0, ns[41], 0.0
    for upper in (False, True):
        out = _binom_chain.chain_tails(
            ks, ns, ps, upper=upper, direct=_dist._direct_tails, pmf=_dist.binom_pmf
        )
        ref = _dist._direct_tails(ks, ns, ps, upper=upper)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=0.0, equal_nan=True)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_chains_agree_with_the_entrywise_tails(seed: int) -> None:
    # N in [1e5, 1e7], p in (0, 1), k from the far lower to the far upper tail; dyadic p so
    # that q = 1 − p is exact and both forms answer the same question (the difference is the
    # continued fraction's error at the anchors, up to ~1e-12 at N = 5e6)
    rng = np.random.default_rng(seed)
    for _ in range(6):
        p = float(rng.integers(1, 1024)) / 1024.0
        ks, ns = _chain(
            int(10.0 ** rng.uniform(5.0, 7.0)),
            int(rng.integers(2000, 3000)),
            p,
            rng.uniform(-25, 25),
        )
        for upper in (False, True):
            chained = np.asarray(_dist._binomial_tails(ks, ns, p, upper=upper))
            direct = _dist._direct_tails(ks, ns, np.full(ns.size, p), upper=upper)
            keep = direct > 1e-300
            np.testing.assert_allclose(chained[keep], direct[keep], rtol=3e-12, atol=0.0)


def test_chain_tails_exact_at_half() -> None:
    # bdtr(k, n, ½) along N = 100 000 .. 102 047 against exact integer sums C(n, j)/2^n
    ks, ns = _chain(100_000, 2048, 0.5, -2.0)
    chained = np.asarray(_dist.bdtr(ks, ns, 0.5))
    for i in (17, 2047):  # inside the first block, and the last entry
        n, k = int(ns[i]), int(ks[i])
        term, total, j = math.comb(n, k), 0, k
        while j >= 0 and (j > k - 10 or term > total >> 60):
            total += term
            term = term * j // (n - j + 1)
            j -= 1
        assert abs(chained[i] / float(Fraction(total, 1 << n)) - 1.0) < 1e-12


@pytest.mark.parametrize("seed", [0, 1])
def test_chain_tails_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(8):
        p = float(rng.uniform(1e-4, 1.0 - 1e-4))
        ks, ns = _chain(int(10.0 ** rng.uniform(5.0, 7.0)), 2500, p, rng.uniform(-20, 20))
        whole = ns.astype(np.int64)
        ref_cdf, ref_sf = (
            sp.bdtr(ks, whole, p),
            sp.bdtrc(ks, whole, p),
        )  # scipy.special.bdtr / bdtrc
        rtol = 1e-12 + 1e-14 * float(ns[-1])  # scipy's own error at large N
        for ours, ref in ((_dist.bdtr(ks, ns, p), ref_cdf), (_dist.bdtrc(ks, ns, p), ref_sf)):
            keep = ref > 1e-300
            np.testing.assert_allclose(np.asarray(ours)[keep], ref[keep], rtol=rtol, atol=0.0)


def _scipy_chain(k, n, p, *, upper, direct, pmf):  # type: ignore[no-untyped-def]
    whole = n.astype(np.int64)
    return np.asarray(sp.bdtrc(k, whole, p) if upper else sp.bdtr(k, whole, p), dtype=np.float64)


@pytest.mark.parametrize(("n", "psi"), [(1_000_000, 0.3), (200_000, 0.6)])
def test_power_equals_the_scipy_and_entrywise_paths(
    n: int, psi: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    delta = 0.004 if n == 200_000 else 0.0015
    ours = power._power(n, psi, delta, 0.05, "two-sided")
    with monkeypatch.context() as m:  # the former bulk path: scipy.special.bdtr on the same grid
        m.setattr(_dist, "chain_tails", _scipy_chain)
        via_scipy = power._power(n, psi, delta, 0.05, "two-sided")
    with monkeypatch.context() as m:  # every tail by the continued fraction
        m.setattr(_dist, "_BULK_N", 10**12)
        entrywise = power._power(n, psi, delta, 0.05, "two-sided")
    assert ours == pytest.approx(entrywise, rel=1e-12, abs=0.0)
    assert ours == pytest.approx(via_scipy, rel=1e-12 + 1e-14 * n * psi, abs=0.0)


def test_mde_at_1e6_equals_the_scipy_path(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = power.exact_minimum_detectable_effect(1_000_000, 0.3)
    with monkeypatch.context() as m:
        m.setattr(_dist, "chain_tails", _scipy_chain)
        power._design.cache_clear()
        via_scipy = power.exact_minimum_detectable_effect(1_000_000, 0.3)
    power._design.cache_clear()
    # both are brentq roots with xtol = rtol = 1e-12 of powers that differ by scipy's ~1e-11
    assert abs(ours - via_scipy) < 3e-12


def test_exact_mde_on_chains_imports_no_scipy() -> None:
    # n·ψ = 1.2e5 discordant pairs: the tails go along chains
    code = (
        "import sys; from ablation.stats import exact_minimum_detectable_effect as f; "
        "f(200_000, 0.6); print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    root = str(Path(ablation.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tail_does_not_depend_on_the_other_entries(seed: int) -> None:
    # each entry's anchor and path are fixed by (k, N, p), so the same tail comes out bit for bit
    # whether it sits in a chain, a shuffled copy, or a chain through other k (knife-edge
    # comparisons such as P(X ≤ (N−1)/2) = ½ at odd N then decide the same way everywhere)
    rng = np.random.default_rng(seed)
    p = float(rng.uniform(0.2, 0.8))
    ks, ns = _chain(int(10.0 ** rng.uniform(5.0, 6.5)), 3000, p, rng.uniform(-4, 4))
    for upper in (False, True):
        whole = np.asarray(_dist._binomial_tails(ks, ns, p, upper=upper))
        order = rng.permutation(ns.size)
        shuffled = np.asarray(_dist._binomial_tails(ks[order], ns[order], p, upper=upper))
        np.testing.assert_array_equal(shuffled, whole[order])
        other = ks + (np.arange(ns.size) % 2)  # another path through every other entry
        mixed = np.asarray(_dist._binomial_tails(other, ns, p, upper=upper))
        np.testing.assert_array_equal(mixed[::2], whole[::2])
