"""A user-defined quality scorer, plugged into a campaign beside the pass/fail verdict.

Run from the repository root::

    python examples/custom_quality.py

A quality scorer is any object with a ``name`` and ``__call__(output, task) -> float`` (sync or
async): it matches the :class:`ablation.quality.QualityScorer` protocol. Here ``BrevityScorer``
rates summaries by how much shorter than their source they are. Both agents pass the same tasks
(every summary keeps the required facts), so the pass rate cannot tell them apart; the paired
quality comparison (mean difference, with a t interval from 100 pairs, and a Wilcoxon test) can.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from ablation import AblationTask, CampaignConfig, run_ablation_campaign
from ablation.quality import QualityScorer, ScorerError


class BrevityScorer:
    """Scores 0-100: 100 x (1 - summary words / source words), floored at 0.

    Args:
        name: Key of the score in the report.
    """

    def __init__(self, name: str = "brevity") -> None:
        self.name = name

    def __call__(self, output: Any, task: AblationTask) -> float:
        """Score one summary; a non-text output is a recorded scorer error, not a zero."""
        if not isinstance(output, str):
            raise ScorerError(f"brevity: task {task.task_id!r}: the output is not text")
        source = len(task.input_data["text"].split())
        summary = len(output.split())
        return max(0.0, 100.0 * (1.0 - summary / source))


def keeps_facts(output: Any, task: AblationTask) -> bool:
    """The verifier: every required fact (a word) occurs in the summary."""
    text = output.lower() if isinstance(output, str) else ""
    return all(re.search(rf"\b{re.escape(word)}\b", text) for word in task.expected_output)


_DOCUMENTS = [
    ("outage", "At 09:12 the primary database lost its disk. Traffic failed over to the "
     "replica within two minutes. No data was lost, and the incident was closed at 10:05 "
     "after the disk was replaced.", ["database", "replica", "no data was lost"]),
    ("release", "Version 2.4 ships a new importer for CSV files, fixes the crash when a "
     "report had no rows, and drops support for Python 3.8, which reached its end of life.",
     ["csv", "crash", "python 3.8"]),
    ("meeting", "The team agreed to move the launch from May to June because the payment "
     "provider needs two more weeks of testing. Marketing will update the landing page.",
     ["june", "payment"]),
    ("survey", "Of 1,200 respondents, 64 percent prefer the dark theme, 21 percent the light "
     "theme and the rest have no preference; younger users lean darker.",
     ["64 percent", "dark"]),
    ("hiring", "We are hiring two backend engineers for the billing team. Experience with "
     "PostgreSQL is required and Go is a plus. The roles are remote within Europe.",
     ["backend", "postgresql", "remote"]),
    ("budget", "The cloud budget for the quarter is 40,000 euros. Storage costs rose by 12 "
     "percent, so the team will archive logs older than ninety days.",
     ["40,000", "archive"]),
]

tasks = [
    AblationTask(
        task_id=f"summary-{key}",
        category="summaries",
        input_data={"text": text},
        expected_output=facts,
        verifier=keeps_facts,
    )
    for key, text, facts in _DOCUMENTS
]

_BASELINE = {
    "outage": "At 09:12 the primary database lost its disk; traffic failed over to the replica "
    "within two minutes, no data was lost, and the incident was closed at 10:05.",
    "release": "Version 2.4 adds a CSV importer, fixes the crash on empty reports, and drops "
    "Python 3.8, which reached its end of life.",
    "meeting": "The launch moves from May to June because the payment provider needs two more "
    "weeks of testing; marketing updates the page.",
    "survey": "Of 1,200 respondents, 64 percent prefer the dark theme and 21 percent the light "
    "theme.",
    "hiring": "Two backend engineers are wanted for billing; PostgreSQL required, Go a plus, "
    "remote within Europe.",
    "budget": "The quarterly cloud budget is 40,000 euros; storage rose 12 percent, so the "
    "team will archive logs older than ninety days.",
}
_CANDIDATE = {
    "outage": "Database disk lost; replica took over; no data was lost.",
    "release": "2.4: CSV importer, crash fix, Python 3.8 dropped.",
    "meeting": "Launch moves to June for payment testing.",
    "survey": "64 percent prefer the dark theme.",
    "hiring": "Hiring two remote backend engineers (PostgreSQL).",
    "budget": "Budget 40,000 euros; archive old logs.",
}


def baseline(task: dict) -> str:
    """Faithful but long summaries."""
    return next(_BASELINE[key] for key, text, _ in _DOCUMENTS if text == task["text"])


def candidate(task: dict) -> str:
    """Terse summaries that keep the required facts."""
    return next(_CANDIDATE[key] for key, text, _ in _DOCUMENTS if text == task["text"])


def main() -> int:
    """Run the campaign with the custom scorer and print the quality comparison."""
    scorer = BrevityScorer()
    assert isinstance(scorer, QualityScorer)  # the protocol is runtime-checkable
    report = run_ablation_campaign(
        baseline,
        candidate,
        tasks,
        config=CampaignConfig(seed=1, n_resamples=2000),
        quality_scorers=[scorer],
    )
    q = report.quality["brevity"]
    print(f"pass rate: baseline {report.baseline.pass_rate:.0%}, "
          f"candidate {report.candidate.pass_rate:.0%} ({report.table.regressions} regressions, "
          f"{report.table.improvements} improvements)")
    print(f"brevity: baseline mean {q.baseline_mean:.1f}, candidate mean {q.candidate_mean:.1f}")
    # The t interval of a mean difference is shown from MEAN_DIFFERENCE_MIN_N pairs; below
    # that the report says why (ci_note) and the Wilcoxon test carries the evidence.
    interval = (
        f"{q.ci.confidence_level:.0%} CI [{q.ci.low:+.1f}, {q.ci.high:+.1f}] ({q.ci.method})"
        if q.ci is not None
        else f"no CI ({q.ci_note})"
    )
    print(f"brevity difference: {q.mean_difference:+.1f} points, {interval}; "
          f"Wilcoxon p = {q.wilcoxon_pvalue:.3g} over {q.n_pairs} pairs")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
