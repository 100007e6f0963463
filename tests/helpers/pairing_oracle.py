"""The per-trial object path of pairing, kept as the oracle the array path is checked against.

``report_by_objects`` is what ``report_from_results`` computed before every library path went
through :func:`ablation.analysis.columnar.pair_columns`: the trials streamed one by one into
:func:`ablation.analysis.pairing.pair_results`, then :func:`~ablation.analysis.build.build_report`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ablation.analysis.build import build_report
from ablation.analysis.pairing import pair_results
from ablation.config import CampaignConfig, Provenance
from ablation.report import AblationReport
from ablation.schema import AblationTask, TaskResult

__all__ = ["report_by_objects"]


def report_by_objects(
    results: Iterable[Any],
    *,
    config: CampaignConfig | None = None,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    provenance: Provenance | None = None,
    trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> AblationReport:
    """The report of ``results`` paired by the object path (same arguments as
    ``report_from_results``)."""
    config = config or CampaignConfig()
    data = pair_results(
        results, tasks=tasks, expected_ids=expected_ids, on_error=config.on_error,
        keep_trials=trial_lookup is None, trial_lookup=trial_lookup,
    )  # fmt: skip
    return build_report(data, config=config, provenance=provenance)
