"""Each uplift interval is listed once in the "Tests and intervals" rows of every format.

With 30 or more discordant pairs the headline (Tango with the sparse-table rule) is Tango's own
interval, and the list held it twice: the table showed "uplift ... Tango score interval" on two
rows with the same bounds. The check is against the report's own list: every interval appears,
and no (method, interval) row repeats.
"""

from __future__ import annotations

import pytest

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.render import _sections, render
from ablation.render._format import fmt_interval


def _report(b: int, c: int, concordant: int):  # type: ignore[no-untyped-def]
    """``b`` regressions, ``c`` improvements and ``concordant`` tasks passing in both arms."""
    before: list[TaskResult] = []
    after: list[TaskResult] = []
    flips = [(True, False)] * b + [(False, True)] * c + [(True, True)] * concordant
    for i, (x, y) in enumerate(flips):
        before.append(TaskResult(task_id=f"t{i}", arm="baseline", passed=x))
        after.append(TaskResult(task_id=f"t{i}", arm="candidate", passed=y))
    return compare_results(before, after, config=CampaignConfig(n_resamples=200))


@pytest.mark.parametrize(("b", "c", "concordant"), [(25, 54, 421), (3, 9, 28), (0, 0, 10)])
def test_each_interval_is_listed_once(b: int, c: int, concordant: int) -> None:
    report = _report(b, c, concordant)
    u = report.uplift
    rows = [(r[2], r[3]) for r in _sections.test_rows(report) if r[0].startswith("uplift")]
    assert len(rows) == len(set(rows)), rows
    listed = {(fmt_interval(iv, "pp"), iv.method) for iv in u.intervals}
    assert listed == set(rows)
    if b + c >= 30:  # the sparse-table rule leaves Tango as it is: one figure, one row
        tango = u.interval("tango")
        assert tango is not None and (tango.low, tango.high) == (u.ci.low, u.ci.high)
        assert len(rows) == len(u.intervals) - 1


def test_markdown_shows_tango_once_when_it_is_the_headline() -> None:
    text = render(_report(25, 54, 421), "markdown")
    table = text.split("Tests and intervals", 1)[1]
    assert table.count("Tango score interval") == 1
