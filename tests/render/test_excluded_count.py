"""The count of what was left out of the pairs adds up: pairs + tasks excluded = tasks.

``report.excluded`` lists tasks left out of the pairs and, with ``run`` set, single runs left out
of a task (a failed trial under ``on_error="exclude"``, a run the other arm lacks). Counting the
entries as one number ("20 excluded" beside "10 pairs of 20 tasks") mixed the two; the text now
counts them apart (:func:`ablation.render._format.fmt_excluded`), checked against the report's own
``n_tasks - n_paired`` on random campaigns.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.render._format import fmt_excluded, summary_sentence
from ablation.render._sections import paired_note

_STATUS = st.sampled_from(["completed", "completed", "error", "timeout"])


def _trials(arm: str, outcomes: list[list[tuple[str, bool]]]) -> list[TaskResult]:
    return [
        TaskResult(task_id=f"t{i}", arm=arm, run=run, status=status, passed=passed and status == "completed",
                   latency_s=0.1, error_type=None if status == "completed" else "Boom")
        for i, runs in enumerate(outcomes) for run, (status, passed) in enumerate(runs)
    ]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3).flatmap(
        lambda runs: st.tuples(
            *[st.lists(st.lists(st.tuples(_STATUS, st.booleans()), min_size=runs, max_size=runs), min_size=1,
                       max_size=8)] * 2
        )
    )
)
def test_pairs_and_tasks_excluded_add_up(arms: tuple[list[list[tuple[str, bool]]], ...]) -> None:
    base, cand = arms
    n = min(len(base), len(cand))
    report = compare_results(
        _trials("baseline", base[:n]), _trials("candidate", cand[:n]),
        config=CampaignConfig(on_error="exclude", n_resamples=200),
    )  # fmt: skip
    if not report.excluded:
        return
    words = fmt_excluded(report)
    tasks = re.search(r"(\d+) tasks? ", words)
    assert (int(tasks.group(1)) if tasks else 0) == report.n_tasks - report.n_paired
    runs = re.search(r"(\d+) runs? excluded", words)
    assert (int(runs.group(1)) if runs else 0) == sum(e.run is not None for e in report.excluded)
    text = paired_note(report) if report.n_paired else summary_sentence(report)
    assert words in text


def test_a_failed_run_of_a_paired_task_is_a_run_not_a_task() -> None:
    """Three tasks, two runs each; the candidate errors on one run of t0 and both runs of t1."""
    runs = [("completed", True)] * 2
    report = compare_results(
        _trials("baseline", [runs, runs, runs]),
        _trials("candidate", [[("error", False), ("completed", True)], [("error", False)] * 2, runs]),
        config=CampaignConfig(on_error="exclude", n_resamples=200),
    )  # fmt: skip
    assert (report.n_tasks, report.n_paired, len(report.excluded)) == (3, 2, 4)
    assert paired_note(report) == "2 pairs of 3 tasks, 2 runs per task; 1 task and 3 runs excluded (listed below)."
