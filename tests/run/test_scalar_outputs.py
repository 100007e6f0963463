"""A scalar output is bounded and converted as any output: its plain form, 8 bytes counted, a
NaN as ``"nan"``, an int too long for a JSON reader as its ``hex``, counted as that text."""

from __future__ import annotations

import math

import pytest

from ablation.run.output_caps import OutputTooLarge, jsonable_output


@pytest.mark.parametrize("value", [0, -7, 2**60, 1.5, -0.0, True, False, None])
def test_a_scalar_is_itself(value: object) -> None:
    got = jsonable_output(value, 8)
    assert got == value and type(got) is type(value)
    with pytest.raises(OutputTooLarge, match="max_output_bytes=7"):
        jsonable_output(value, 7)  # one scalar counts 8


def test_a_nan_is_its_text_and_a_huge_int_its_hex_counted_as_text() -> None:
    assert jsonable_output(math.nan, 8) == "nan" and jsonable_output(-math.inf, 8) == "-inf"
    huge = 1 << 20_000
    assert jsonable_output(huge, 10_000) == hex(huge)
    with pytest.raises(OutputTooLarge, match="more than"):
        jsonable_output(huge, 1_000)  # 5,003 characters of hex
