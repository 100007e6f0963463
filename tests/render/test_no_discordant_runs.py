"""With repeated runs, "no discordant pairs" means each task's pass count is equal in both arms,
not that the arms agreed: the sentence said "both arms agree on every task" beside a list of
tasks whose runs went both ways (baseline pass-fail-fail, candidate fail-fail-pass)."""

from __future__ import annotations

from ablation import CampaignConfig, TaskResult, compare_results
from ablation.render._format import summary_sentence


def _rows(arm: str, pattern: str, tasks: int) -> list[TaskResult]:
    return [TaskResult(task_id=f"t{i}", arm=arm, run=r, passed=ch == "p")
            for i in range(tasks) for r, ch in enumerate(pattern)]  # fmt: skip


def test_equal_pass_counts_over_runs_are_not_called_agreement() -> None:
    config = CampaignConfig(n_resamples=100, runs=3)
    report = compare_results(_rows("baseline", "pff", 5), _rows("candidate", "ffp", 5), config=config)
    assert report.summary == "no discordant pairs"
    sentence = summary_sentence(report)
    assert sentence.startswith("No discordant pairs (both arms pass each task equally often over its runs)")
    assert "agree" not in sentence
    once = compare_results(_rows("baseline", "p", 5), _rows("candidate", "p", 5), config=CampaignConfig(n_resamples=100))
    assert summary_sentence(once).startswith("No discordant pairs (both arms agree on every task)")
