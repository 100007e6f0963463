"""Durations and amounts of money read back as the number they print, and stay short.

A duration of 1e99 s printed as a 100-digit integer (a table cell of 25 lines), and a cost
below 1e-12 as ``-0.``: fixed-point formats past their range. Checked for every finite float.
"""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from ablation.render._format import fmt_money, fmt_seconds

_FINITE = st.floats(-1e300, 1e300)  # past it, rounding to 3 digits can leave the float range


def _value(text: str) -> float:
    number, unit = re.fullmatch(r"(\S+)(?: (ms|s))?", text).groups()  # type: ignore[union-attr]
    return float(number) / (1000 if unit == "ms" else 1)


@given(_FINITE)
def test_a_duration_is_short_and_reads_back(s: float) -> None:
    text = fmt_seconds(s)
    assert len(text) <= 12, text
    value = _value(text)
    if abs(s) >= 1:  # below 1 s: whole milliseconds, by design (one digit below half of one)
        assert math.isclose(value, s, rel_tol=0.01), (s, text)
    else:
        assert abs(value - s) <= 0.0005 + 1e-12, (s, text)
    # a duration that is not zero never reads as zero (a latency difference of -0.3 ms read
    # "-0 ms"), and its sign is the value's
    assert (value == 0) == (s == 0), (s, text)
    assert (value < 0) == (s < 0), (s, text)


@given(_FINITE)
def test_an_amount_of_money_keeps_three_significant_digits(x: float) -> None:
    text = fmt_money(x)
    assert len(text) <= 16 and not text.endswith("."), text
    value = float(text)
    assert math.isclose(value, x, rel_tol=0.006) or (x == 0 and value == 0), (x, text)
    assert (value < 0) == (x < 0) or value == 0, (x, text)
