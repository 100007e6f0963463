"""The report of a campaign whose trials are in memory (no store), through the columnar path.

A campaign without a store keeps its :class:`~ablation.schema.TaskResult` s; they are read into
one :class:`~ablation.columns.TrialColumns` per arm (:mod:`ablation.analysis.in_memory`, a C-level
read of each field) and paired by :func:`~ablation.analysis.pair_arms.pair_columns`, the path
``compare_results`` takes, instead of a per-trial Python accumulation. The drill-downs fetch
their few trials from the list (:class:`~ablation.analysis.in_memory.ResultLookup`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ablation.analysis.build import build_report
from ablation.analysis.in_memory import ResultLookup, split_arms
from ablation.analysis.pair_arms import pair_columns
from ablation.config import CampaignConfig, Provenance
from ablation.report import AblationReport
from ablation.schema import AblationTask, TaskResult

__all__ = ["report_from_trials"]


def report_from_trials(
    results: Sequence[TaskResult],
    *,
    config: CampaignConfig,
    tasks: Sequence[AblationTask],
    provenance: Provenance,
) -> AblationReport:
    """The gated report of ``results`` (both arms, either possibly empty: a campaign stopped
    before its first trial), equal to :func:`~ablation.analysis.build.report_from_results`'s."""
    columns = split_arms(results)
    data = pair_columns(
        columns["baseline"][1], columns["candidate"][1], tasks=tasks, on_error=config.on_error,
        trial_lookup=ResultLookup(columns),
    )  # fmt: skip
    return build_report(data, config=config, provenance=provenance)
