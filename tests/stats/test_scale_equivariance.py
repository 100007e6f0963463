"""The bootstrap, TOST and metric non-inferiority on data near the ends of the float range.

A mean difference, its interval and these tests are scale-equivariant, and scaling by a power of
two is exact, so the reference is the same function on the data divided by a power of two that
keeps every sum and square finite, multiplied back. The paired t already scaled its differences
(tests/stats/test_t_extreme_scales.py); the bootstrap formed ``y - x`` and its means raw (an
estimate of ``inf`` and an interval of ``(nan, 0)`` when a difference or a sum overflowed, a
standard error of ``inf`` when a square did), TOST reported ``mean(x - y)`` as ``-inf`` beside a
finite t statistic, and the non-inferiority test took ``inf`` differences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ablation.stats import metric_noninferiority, paired_bootstrap, tost_paired

#: Multiplies values in [-3, 3] up to 6.7e307: sums of the differences pass the float range,
#: while every difference and mean difference (at most 6 · 2**1021) stays a float.
BIG = 2.0**1021
#: Multiplies them up to 1.35e308: a difference itself may pass the float range (and a mean or an
#: interval's end then too: ``inf`` on both sides).
HUGE = 2.0**1022
#: Multiplies them down to 1e-160: squares of the differences underflow.
SMALL = 2.0**-531

_VALUES = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
_PAIRS = st.integers(2, 25).flatmap(lambda n: st.tuples(st.lists(_VALUES, min_size=n, max_size=n),
                                                        st.lists(_VALUES, min_size=n, max_size=n)))


def _close(got: float, want: float) -> bool:
    """Equal up to round-off, or the same infinity (a value past the float range)."""
    return got == want or got == pytest.approx(want, rel=1e-9, abs=0.0)


@settings(max_examples=60, deadline=None)
@given(_PAIRS, st.sampled_from([BIG, SMALL]), st.sampled_from(["percentile", "basic", "bca"]))
@example(([0.0, 0.0, 0.0], [3.0, 2.5, 2.9]), BIG, "bca")  # sums of the differences overflow
def test_the_bootstrap_scales_with_the_data(pairs: tuple[list[float], list[float]], s: float,
                                            method: str) -> None:
    x, y = np.array(pairs[0]), np.array(pairs[1])
    ref = paired_bootstrap(x, y, method=method, n_resamples=300, rng=3)
    got = paired_bootstrap(x * s, y * s, method=method, n_resamples=300, rng=3)
    assert math.isfinite(got.estimate) and math.isfinite(got.standard_error)
    assert _close(got.estimate, ref.estimate * s)
    assert _close(got.standard_error, ref.standard_error * s)
    assert _close(got.confidence_interval.low, ref.confidence_interval.low * s)
    assert _close(got.confidence_interval.high, ref.confidence_interval.high * s)


@settings(max_examples=60, deadline=None)
@given(_PAIRS, st.sampled_from([BIG, HUGE, SMALL]))
@example(([-3.0, 3.0, 0.0], [3.0, -3.0, 0.5]), HUGE)
def test_tost_scales_with_the_data(pairs: tuple[list[float], list[float]], s: float) -> None:
    x, y = np.array(pairs[0]), np.array(pairs[1])
    ref = tost_paired(x, y, -0.5, 0.5)
    got = tost_paired(x * s, y * s, -0.5 * s, 0.5 * s)
    assert _close(got.estimate, ref.estimate * s)
    assert _close(got.pvalue, ref.pvalue)
    assert _close(got.lower.statistic, ref.lower.statistic)
    assert _close(got.upper.statistic, ref.upper.statistic)


@settings(max_examples=60, deadline=None)
@given(_PAIRS, st.sampled_from([BIG, HUGE, SMALL]), st.booleans())
@example(([-3.0, 3.0, 0.0], [3.0, -3.0, 0.5]), HUGE, True)  # differences past the float range
def test_metric_noninferiority_scales_with_the_data(pairs: tuple[list[float], list[float]], s: float,
                                                    higher: bool) -> None:
    x, y = np.array(pairs[0]), np.array(pairs[1])
    ref = metric_noninferiority(x, y, margin=0.5, higher_is_better=higher)
    got = metric_noninferiority(x * s, y * s, margin=0.5 * s, higher_is_better=higher)
    assert got.decision == ref.decision
    assert _close(got.pvalue, ref.pvalue)
    assert _close(got.confidence_interval.low, ref.confidence_interval.low * s)
    assert _close(got.confidence_interval.high, ref.confidence_interval.high * s)
