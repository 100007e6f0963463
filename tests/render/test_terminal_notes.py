r"""The terminal report's heading shows the report's notes as every report shows user text.

A report's notes name tools (from the agents' traces), scorers and currencies, all text an agent
or a result file chose. The heading panel appended them to a rich ``Text`` as they were, so a
tool named ``\x1b]8;;https://evil.example\x07...`` (an OSC 8 hyperlink) or holding ``\x1b[2J``
(clear screen) or a carriage return reached the terminal raw, while the Markdown and HTML reports
showed the same note escaped.
"""

from __future__ import annotations

from report_fixtures import SNAPSHOT_POLICY, make_report

from ablation.analysis.gates import evaluate_gates
from ablation.render import render

TOOL = "\x1b]8;;https://evil.example\x07search\x1b]8;;\x07\x1b[2J\rOK\u202e"


def test_notes_in_the_terminal_heading_are_escaped() -> None:
    report = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    note = f"Also changed: tool calls {TOOL} rose: 1 -> 3"
    text = render(report.model_copy(update={"notes": [note]}), "terminal")
    odd = {c for c in text if not (c == "\n" or c.isprintable())}
    assert odd == set(), odd
    assert "Also changed: tool calls \\x1b]8;;https://evil.example\\x07search" in text  # shown, escaped
