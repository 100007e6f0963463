"""A sequential stop's reason writes the bound and ``-margin`` so that two different numbers never
read as the same one ("-0.2000 is above -margin = -0.2000")."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from ablation.stats.sequential_monitor import apart


def test_a_bound_next_to_the_margin_is_written_apart_from_it() -> None:
    low, bound = apart(-0.19999999999999996, -0.2)
    assert low != bound and float(low) > float(bound), (low, bound)
    assert apart(0.1234, -0.2) == ("+0.1234", "-0.2000")  # the usual four places
    assert apart(-0.2, -0.2) == ("-0.2000", "-0.2000")
    assert apart(-0.0, 0.0) == ("+0.0000", "+0.0000")


def test_numbers_apart_only_past_eight_places_keep_their_shortest_form() -> None:
    """The margin the user gave (0.1) is written as given, not as 17 digits of its binary value."""
    low, bound = apart(-0.09999999999999998, -0.1)
    assert (low, bound) == (repr(-0.09999999999999998), "-0.1")
    assert float(low) == -0.09999999999999998 and float(bound) == -0.1
    assert apart(0.123456789, 0.1234567891) == ("+0.123456789", "+0.1234567891")


@given(st.floats(-1, 1), st.floats(-1, 1))
def test_the_texts_keep_the_order_of_the_numbers(x: float, y: float) -> None:
    a, b = apart(x, y)
    if x != y:
        assert a != b
        assert (float(a) > float(b)) == (x > y) or math.isclose(float(a), float(b))
    else:
        assert a == b
