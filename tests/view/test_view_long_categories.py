"""The viewer's task table names a long category as the report does, for every task.

The report names a category longer than ``NAME_SHOWN`` characters by a bounded, marked label
(``analysis.pairing.shown_categories``), and so did the table's paired tasks, which come from the
same pairing; a task the pairing left out took its category whole from its stored trials: a second
name for the same category (the report's category link did not list it) holding the whole text.
"""

from __future__ import annotations

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.columns import results_to_columns
from ablation.schema import NAME_SHOWN
from ablation.view.tasks import task_table

LONG = "c" * 500_000
CONFIG = CampaignConfig(n_resamples=100)


def test_paired_and_left_out_tasks_of_a_long_category_share_its_report_name() -> None:
    base = [TaskResult(task_id=f"t{i}", arm="baseline", passed=True, category=LONG) for i in range(4)]
    cand = [TaskResult(task_id=f"t{i}", arm="candidate", passed=i % 2 == 0, category=LONG) for i in range(3)]
    report = compare_results(base, cand, config=CONFIG)  # t3: baseline only, left out
    (name,) = {c.category for c in report.categories}
    table = task_table(results_to_columns(base, "baseline"), results_to_columns(cand, "candidate"), config=CONFIG)
    assert set(table.category.tolist()) == {name} and len(name) < 2 * NAME_SHOWN
    assert table.select(category=name, size=50).total == 4  # the left-out task too
