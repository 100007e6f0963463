"""The exact enumerations behind ``docs/VALIDATION.md`` agree with independent references.

Tiny sizes only: the generator itself (``benchmarks/validation.py``) is too long for the suite.
References: ``ablation.stats.exact_mcnemar_power`` (the gate's exact power), and a direct
enumeration with ``scipy.stats.multinomial`` of the interval's coverage.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ablation.stats import exact_mcnemar_power, paired_difference_interval  # noqa: E402
from benchmarks import validation_gate, validation_sparse  # noqa: E402


def test_gate_enumeration_matches_the_exact_power_of_the_gate() -> None:
    n = 20
    b, c = validation_gate._tables(n)
    reject = validation_gate.conditional_reject(b, c, midp=False)
    for psi, delta in ((0.3, 0.0), (0.3, -0.15), (0.9, -0.2)):
        ours = validation_gate._pmf(n, b[reject], c[reject], (psi - delta) / 2, (psi + delta) / 2)
        ref = exact_mcnemar_power(n, psi, delta, alternative="less")
        assert float(ours.sum()) == pytest.approx(ref, abs=1e-12)


def test_unconditional_region_keeps_its_size_off_the_grid() -> None:
    n = 12
    b, c = validation_gate._tables(n)
    reject = validation_gate.unconditional_reject(n, b, c)
    tables = np.column_stack([b[reject], c[reject], n - b[reject] - c[reject]])
    for psi in np.linspace(0.01, 0.99, 97):  # not the grid the region was built on
        size = stats.multinomial.pmf(tables, n, [psi / 2, psi / 2, 1 - psi]).sum()
        assert size <= 0.05 + 1e-9


def test_sparse_scan_minimum_is_the_direct_enumeration() -> None:
    n = 12
    _, worst = validation_sparse.sparse_row(n)
    cov, psi, ratio = worst["tango"]
    delta = ratio * psi
    tables = np.array([(bb, nd - bb, n - nd) for nd in range(n + 1) for bb in range(nd + 1)])
    w = stats.multinomial.pmf(tables, n, [(psi - delta) / 2, (psi + delta) / 2, 1 - psi])
    hit = 0.0
    for (bb, cc, rest), weight in zip(tables, w, strict=True):
        ci = paired_difference_interval(int(rest), int(bb), int(cc), 0).confidence_interval
        hit += weight if ci.low <= delta <= ci.high else 0.0
    assert cov == pytest.approx(hit, abs=1e-9)
    assert worst["headline"][0] >= 0.935
