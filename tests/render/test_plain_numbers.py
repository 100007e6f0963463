"""Numbers between 1e-4 and 1e15 are written without an exponent, at the digits asked for.

A mean of 2,093,451 tokens was shown as ``2.09e+06`` beside a difference of ``-51058``, and a
value that rounds up to the next power of ten at three digits (999.7) as ``1e+03``. The property
is checked against :class:`decimal.Decimal`: the text has no exponent and differs from the value
by at most half a unit in its last significant digit.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from ablation.render import _format as f

VALUES = st.floats(min_value=1e-4, max_value=1e15, exclude_max=True, allow_nan=False)


@given(VALUES, st.sampled_from([1, 2, 3, 4]), st.booleans())
def test_no_exponent_and_close(x: float, digits: int, negative: bool) -> None:
    value = -x if negative else x
    text = f.fmt_float(value, digits)
    assert "e" not in text and "E" not in text, text
    error = abs(Decimal(text) - Decimal(value))
    # digits significant digits: at most half a unit in the last of them; a whole number written
    # out (``.0f``): at most half a unit
    assert error <= max(Decimal("0.5"), Decimal(5) * Decimal(10) ** -digits * Decimal(abs(value)))


def test_named_cases() -> None:
    assert f.fmt_float(2089913.0) == "2089913"
    assert f.fmt_float(999.7) == "1000"
    assert f.fmt_float(0.0009999) == "0.001"
    assert f.fmt_seconds(3e7) == "30000000 s"
    assert f.fmt_float(2e15) == "2.00e+15"
