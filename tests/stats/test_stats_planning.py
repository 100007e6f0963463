"""Connor (1987) sample size, minimum detectable effect, and p-value adjustment."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower

from ablation.stats import adjust_pvalues, minimum_detectable_effect, sample_size_paired


def test_connor_reference_values() -> None:
    res = sample_size_paired(0.5, 0.4)
    assert res.n_exact == pytest.approx(22.01, abs=5e-3)
    assert res.n == 23
    assert sample_size_paired(0.10, 0.03).n == 870
    assert sample_size_paired(0.10, -0.03).n == 870
    one = sample_size_paired(0.10, 0.03, alternative="greater")
    assert one.n < 870


def test_connor_formula_by_hand() -> None:
    za, zb = stats.norm.isf(0.025), stats.norm.ppf(0.9)
    psi, delta = 0.2, 0.05
    expected = (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2
    res = sample_size_paired(psi, delta, power=0.9)
    assert res.n_exact == pytest.approx(expected, rel=1e-12)
    assert res.n == math.ceil(expected)


@pytest.mark.parametrize(("psi", "delta"), [(0.1, 0.2), (0.1, 0.0), (0.0, 0.0), (1.5, 0.1)])
def test_connor_rejects_impossible_inputs(psi: float, delta: float) -> None:
    with pytest.raises(ValueError):
        sample_size_paired(psi, delta)


def test_mde_binary_and_continuous() -> None:
    assert minimum_detectable_effect(500, psi=0.10) == pytest.approx(0.0395, abs=5e-5)
    # inverse of Connor: plugging the MDE back gives n back
    mde = minimum_detectable_effect(870, psi=0.10)
    assert sample_size_paired(0.10, mde).n_exact == pytest.approx(870, rel=1e-8)
    # continuous: (z_{1-a/2} + z_{1-b}) * sd / sqrt(n); statsmodels NormalIndPower(ratio=0)
    sd, n = 0.3, 200
    ours = minimum_detectable_effect(n, sd=sd)
    es = NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=0)
    # statsmodels also counts the (negligible) power of the wrong tail, hence rel 1e-5
    assert ours == pytest.approx(es * sd, rel=1e-5)
    assert minimum_detectable_effect(3, psi=0.01) == math.inf
    with pytest.raises(ValueError):
        minimum_detectable_effect(100)
    with pytest.raises(ValueError):
        minimum_detectable_effect(100, psi=0.1, sd=1.0)


@pytest.mark.parametrize(
    "pvalues",
    [
        [0.01, 0.04, 0.04, 0.03, 0.5],
        [0.2, 0.001, 0.04, 0.04, 0.9, 0.0, 1.0, 0.03],
        [0.05],
        [0.5, 0.5, 0.5],
    ],
)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("holm", "holm"), ("bh", "fdr_bh"), ("by", "fdr_by"), ("bonferroni", "bonferroni")],
)
def test_adjust_pvalues_vs_statsmodels(pvalues: list[float], ours: str, theirs: str) -> None:
    # statsmodels.stats.multitest.multipletests(p, method=...)[1], original order
    ref = multipletests(pvalues, method=theirs)[1]
    np.testing.assert_allclose(adjust_pvalues(pvalues, method=ours), ref, rtol=1e-12)


def test_adjust_pvalues_edges() -> None:
    assert adjust_pvalues([]).size == 0
    with pytest.raises(ValueError):
        adjust_pvalues([0.1, 1.2])
    with pytest.raises(ValueError):
        adjust_pvalues([0.1, float("nan")])
    with pytest.raises(ValueError):
        adjust_pvalues([0.1], method="sidak")
