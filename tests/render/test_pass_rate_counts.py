"""The pass rate's count is the fraction it is: under ``on_error="exclude"`` the Arms row printed
passes over every trial (before exclusions) beside a rate over the counted ones ("78.1%
(25/33)"; 25/33 is 75.8%). ``ArmSummary.counted_trials`` is the rate's denominator, and every
rendering (terminal, Markdown, HTML, the several-candidate summary, the viewer) prints it.

The reference: the rate recomputed from the printed count with exact fractions.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

import pytest

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.render import plots, render


@pytest.fixture(autouse=True)
def _no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML pages without their plots: no test here reads them (their labels are glyph paths, not
    text), and drawing them is most of a page's time."""
    monkeypatch.setattr(plots, "report_plots", lambda report: [])


def _candidate_factory() -> Callable[[int], int]:
    calls: Counter[int] = Counter()
    lock = threading.Lock()

    def candidate(x: int) -> int:
        with lock:
            calls[x] += 1
            first = calls[x] == 1
        if x % 5 == 0 and first:
            raise RuntimeError("boom")  # one run of these tasks errors: left out under exclude
        return x if x % 3 else -1

    return candidate


@pytest.mark.parametrize("on_error", ["fail", "exclude"])
def test_the_printed_count_is_the_rate(on_error: str) -> None:
    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(14)]
    report = run_ablation_campaign(
        lambda x: x, _candidate_factory(), tasks,
        config=CampaignConfig(n_resamples=100, runs=3, on_error=on_error),  # type: ignore[arg-type]
    )  # fmt: skip
    for arm in (report.baseline, report.candidate):
        assert arm.counted_trials is not None
        assert Fraction(arm.passes, arm.counted_trials) == Fraction(arm.pass_rate).limit_denominator(10_000)
    c = report.candidate
    if on_error == "exclude":
        assert c.counted_trials < c.n_trials  # the case the old row got wrong
    for fmt in ("terminal", "markdown", "html"):
        text = render(report, fmt, width=200)
        counts = re.findall(r"\((\d+)/(\d+)\)", text)
        assert (str(c.passes), str(c.counted_trials)) in counts, fmt
        assert (str(c.passes), str(c.n_trials)) not in counts or c.n_trials == c.counted_trials, fmt
