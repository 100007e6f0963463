"""The task page's diff cuts each piece as the HTML report does.

A candidate output of 700,000 short lines once made an 8 MB task page (15 s to load in Chromium)
while the HTML report of the same campaign cut each diff segment at its output limit. Here the
viewer's diff of a tenth of that (70,000 lines, ~700 KB: 35 output limits, and 35 times the words
a diff compares) stays within a few limits' worth of text and says what it cut.
"""

from __future__ import annotations

from ablation.render.html import OUTPUT_LIMIT
from ablation.view.diff import word_diff


def test_a_huge_output_is_cut_and_says_so() -> None:
    before = "\n".join(f"line {i}" for i in range(1000))
    after = "\n".join(f"row {i}" for i in range(70_000))
    assert len(after) > 30 * OUTPUT_LIMIT
    markup = word_diff(before, after)
    assert len(markup) < 12 * OUTPUT_LIMIT, len(markup)
    assert "[truncated" in markup
    assert "row 69999" not in markup


def test_small_outputs_are_whole() -> None:
    markup = word_diff("alpha beta", "alpha gamma")
    assert "<del>beta</del>" in markup and "<ins>gamma</ins>" in markup
    assert "truncated" not in markup
