"""The sign test's p-value is McNemar's exact fair-coin tail, as ``scipy.stats.binomtest`` gives it,
without importing ``scipy.stats``.

``sign_test`` called ``scipy.stats.binomtest``: a numeric ``compare --field`` paid the ~1 s import
of ``scipy.stats`` for that one p-value, which the package's own exact binomial tails
(``stats.binary``, exact counts up to 4096 trials, the incomplete beta above) already give.
Reference: ``scipy.stats.binomtest(k, n, 1/2, alternative)`` on the same counts.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss
from helpers.fresh_imports import modules_imported
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import stats


def _pairs(pos: int, neg: int, ties: int) -> tuple[np.ndarray, np.ndarray]:
    y = np.concatenate([np.ones(pos), -np.ones(neg), np.zeros(ties)])
    return np.zeros(y.size), y


@given(
    st.integers(0, 6000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.integers(0, 3),
    st.sampled_from(["two-sided", "less", "greater"]),
)
@settings(max_examples=200, deadline=None)
def test_equals_scipys_binomtest(counts: tuple[int, int], ties: int, alternative: str) -> None:
    n, pos = counts
    x, y = _pairs(pos, n - pos, ties)
    ours = stats.sign_test(x, y, alternative=alternative)
    assert (ours.statistic, ours.n) == (float(pos), n)
    ref = 1.0 if n == 0 else float(ss.binomtest(pos, n, 0.5, alternative=alternative).pvalue)
    assert ours.pvalue == pytest.approx(ref, rel=1e-11, abs=1e-300)


@pytest.mark.parametrize(("pos", "neg"), [(0, 5000), (5000, 0), (2500, 2500), (10**5 + 7, 10**5)])
def test_far_tails_and_large_counts(pos: int, neg: int) -> None:
    x, y = _pairs(pos, neg, 0)
    for alternative in ("two-sided", "less", "greater"):
        ref = float(ss.binomtest(pos, pos + neg, 0.5, alternative=alternative).pvalue)
        assert stats.sign_test(x, y, alternative=alternative).pvalue == pytest.approx(ref, rel=1e-10)


def test_the_sign_test_does_not_import_scipy_stats() -> None:
    code = (
        "import numpy as np\n"
        "from ablation.stats import continuous as c\n"
        "rng = np.random.default_rng(0)\n"
        "x = rng.normal(size=500); y = x + rng.normal(0.1, 1.0, size=500)\n"
        "for a in ('two-sided', 'less', 'greater'): c.sign_test(x, y, alternative=a)\n"
    )
    assert modules_imported(code, ("scipy.stats",)) == []
