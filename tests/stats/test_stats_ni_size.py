"""Exact size of the paired non-inferiority test, by enumerating the trinomial under Δ = −margin.

Under the null boundary Δ = −M with discordant probability ψ, ``N = b + c ~ Bin(n, ψ)`` and
``c | N ~ Bin(N, (ψ − M)/(2ψ))``. The size is the supremum over ψ of the probability of the
tables the public :func:`noninferiority_test` calls "non-inferior". The full scan
(n = 30..1000) is in ``benchmarks/validation.py``; here a representative subset: every table at
n = 30 with margin 0.02, and the tables the boundary search finds at n = 30 with margin 0.05 and
at n = 50 with margin 0.02.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pytest
from helpers.op_counts import count_binomial_tails
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ablation.stats import noninferiority_test, tango_score_statistic

ALPHA = 0.05
PSI_SCAN = np.linspace(0.06, 0.5, 45)


def _rejects(b: int, c: int, n: int, margin: float) -> bool:
    return noninferiority_test(n - b - c, b, c, 0, margin=margin).decision == "non-inferior"


def _asymptotic_rejects(b: int, c: int, n: int, margin: float) -> bool:
    # the former test: one-sided normal p-value of Tango's score statistic
    return bool(stats.norm.sf(tango_score_statistic(b, c, n, -margin)) < ALPHA)


def _critical_c(
    n: int, margin: float, rejects: Callable[[int, int, int, float], bool]
) -> np.ndarray:
    """Per discordant total N, the smallest c whose table is rejected (N + 1 if none).

    Rejection is monotone in c at fixed N (checked on every table at n = 30, margin 0.02, below;
    one step of it at random n and margins by the Hypothesis test at the end), so a bisection
    over c finds the boundary. Its first probes are the previous N's boundary and the
    next c (the boundary moves by 0 or 1 from one N to the next in the cases below), which ends
    most searches after two calls; any other boundary is found by the bisection that follows.
    Under that monotonicity every probe keeps the bisection's invariant (no rejection below
    ``lo``, rejection from ``hi`` up), so the result is the plain bisection's; the n = 30 test
    compares it with the boundary read off the exhaustive table.
    """
    out = np.empty(n + 1, dtype=np.int64)
    hint = 0
    for nd in range(n + 1):
        lo, hi = 0, nd + 1
        for probe in (hint, hint + 1, hint - 1):
            if lo <= probe < hi:
                lo, hi = (lo, probe) if rejects(nd - probe, probe, n, margin) else (probe + 1, hi)
        while lo < hi:
            mid = (lo + hi) // 2
            if rejects(nd - mid, mid, n, margin):
                hi = mid
            else:
                lo = mid + 1
        out[nd] = hint = lo
    return out


@functools.cache
def _exact_critical_c(n: int, margin: float) -> np.ndarray:
    """:func:`_critical_c` of the public test, computed once per design (read-only)."""
    crit = _critical_c(n, margin, _rejects)
    crit.flags.writeable = False
    return crit


def _size(n: int, margin: float, crit: np.ndarray, psis: np.ndarray) -> np.ndarray:
    """Per ψ in ``psis``, ``Σ_N P(N) · P(C ≥ crit(N) | N)`` (one row of the (ψ, N) grid per ψ)."""
    nd = np.arange(n + 1)[None, :]
    psi = np.asarray(psis, dtype=np.float64)[:, None]
    q = (psi - margin) / (2 * psi)  # P(improvement | discordant) at Δ = -margin
    # scipy.stats.binom: P(N) * P(C >= crit(N) | N)
    terms = stats.binom.pmf(nd, n, psi) * stats.binom.sf(crit[None, :] - 1, nd, q)
    return np.asarray(terms.sum(axis=1), dtype=np.float64)


@pytest.mark.first
def test_rejection_is_monotone_in_c_and_size_exact_at_n30() -> None:
    """Every table of 30 pairs at margin 0.02 (496 calls of the public test, ~4 s); the size at
    margin 0.05 and n = 30 is the boundary search's (test_exact_size_at_most_alpha)."""
    n, margin = 30, 0.02
    table = {(b, c): _rejects(b, c, n, margin) for b in range(n + 1) for c in range(n + 1 - b)}
    for nd in range(n + 1):
        row = [table[(nd - c, c)] for c in range(nd + 1)]
        assert row == sorted(row), (margin, nd)  # False ... False True ... True
    # the boundary search used for larger n finds the first rejected c of every row
    crit = _critical_c(n, margin, lambda b, c, _n, _m: table[(b, c)])
    first = [next((c for c in range(nd + 1) if table[(nd - c, c)]), nd + 1) for nd in range(n + 1)]
    assert crit.tolist() == first
    psis = np.linspace(margin + 1e-6, 1.0, 400)
    cells = np.column_stack([(psis + margin) / 2, (psis - margin) / 2, 1 - psis])
    total = np.zeros(psis.size)
    for (b, c), rejected in table.items():
        if rejected:  # trinomial P(b, c) with cells (psi+M)/2, (psi-M)/2, 1 - psi
            total += stats.multinomial.pmf([b, c, n - b - c], n, cells)
    # the same figure as the per-N formula used for larger n
    assert total == pytest.approx(_size(n, margin, crit, psis))
    assert total.max() <= ALPHA


# the n = 50 boundaries are cached in the module: its two users run on one worker
N50 = pytest.mark.xdist_group("ni-size-n50")


@pytest.mark.parametrize(("n", "margin"), [(30, 0.05), pytest.param(50, 0.02, marks=N50)])
def test_exact_size_at_most_alpha(n: int, margin: float) -> None:
    crit = _exact_critical_c(n, margin)
    scan = _size(n, margin, crit, PSI_SCAN)
    assert scan.max() <= ALPHA
    # the whole null boundary, not only the scan: psi from the margin up to 1
    full = _size(n, margin, crit, np.linspace(margin + 1e-6, 1.0 - 1e-6, 300))
    assert full.max() <= ALPHA
    # not absurdly conservative either
    assert scan.max() > 0.03


def test_former_asymptotic_test_exceeds_alpha() -> None:
    # the reason for the change: 5.49% at n = 50, psi = 0.1, margin 0.02
    crit = _critical_c(50, 0.02, _asymptotic_rejects)
    assert _size(50, 0.02, crit, np.array([0.1]))[0] == pytest.approx(0.0549, abs=1e-4)


@N50
def test_inside_the_null_rejection_is_rarer_than_on_its_boundary() -> None:
    # Δ = -M - 0.03 < -M: the boundary Δ = -M is the least favourable configuration
    n, margin, shift = 50, 0.02, 0.03
    crit = _exact_critical_c(n, margin)
    nd = np.arange(n + 1)
    for psi in np.linspace(0.06, 0.5, 12):
        q_inside = (psi - margin - shift) / (2 * psi)
        inside = np.dot(stats.binom.pmf(nd, n, psi), stats.binom.sf(crit - 1, nd, q_inside))
        assert inside <= _size(n, margin, crit, np.array([psi]))[0] + 1e-15


# one step of the monotonicity in c at random n and margins (every step at n = 30, margin 0.02,
# in the exhaustive test above)
@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=400),
    frac_b=st.floats(min_value=0.0, max_value=1.0),
    frac_c=st.floats(min_value=0.0, max_value=1.0),
    margin=st.sampled_from([0.0, 0.01, 0.02, 0.05, 0.2]),
)
def test_pvalue_in_unit_interval_and_monotone_in_improvements(
    n: int, frac_b: float, frac_c: float, margin: float
) -> None:
    b = int(frac_b * n)
    c = int(frac_c * (n - b))
    res = noninferiority_test(n - b - c, b, c, 0, margin=margin)
    assert 0.0 < res.pvalue <= 1.0
    if b > 0:  # turning a regression into an improvement cannot weaken the evidence
        better = noninferiority_test(n - b - c, b - 1, c + 1, 0, margin=margin)
        assert better.pvalue <= res.pvalue + 1e-12


def test_cost_is_bounded_at_a_million_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # only O(sqrt(n)) discordant totals enter the Berger-Boos supremum: 100 times the pairs (same
    # proportions) cost ~10 times the binomial tails, not 100 times
    tails = count_binomial_tails(monkeypatch)
    noninferiority_test(9_400, 300, 290, 10, margin=0.002)
    small = sum(tails)
    tails.clear()
    res = noninferiority_test(940_000, 30_000, 29_000, 1_000, margin=0.002)
    assert 0 < sum(tails) <= 12 * small
    assert res.decision == "non-inferior"
