"""Build the :class:`~ablation.report.AblationReport` from paired trials.

The engine's campaigns and ``compare`` on existing result files enter here alike, so there is
one copy of the statistics path: trial columns -> :func:`~ablation.analysis.pair_arms.pair_columns`
-> :func:`build_report` -> gates.

Units of analysis: with one run per task the pair is the task and the binary methods apply
(exact McNemar, Tango and Newcombe score intervals, a multinomial paired bootstrap). With
``runs > 1`` the task stays the unit: per-task pass fractions are compared by the exact sign-flip
test on their differences and a fixed-n betting interval for their mean (the paired t and a
cluster bootstrap over tasks beside them); the 2x2 table then classifies tasks by the sign of
their per-task difference (the two-sided McNemar figure becomes a descriptive sign test on tasks).
When tasks are grouped in families, the uplift bootstrap resamples whole families.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ablation.analysis import breakdowns, critical_flags, headline, latency_censoring
from ablation.analysis.background import import_report_statistics, in_background
from ablation.analysis.completeness import missing_pairs
from ablation.analysis.details import details
from ablation.analysis.failures import error_summary, errored_regressions
from ablation.analysis.gates import evaluate_gates
from ablation.analysis.latency_censoring import censored_latency, latency_comparison
from ablation.analysis.metric_margins import metric_noninferiority
from ablation.analysis.metrics import compare_continuous
from ablation.analysis.notes import with_notes
from ablation.analysis.pairing import PairedData
from ablation.analysis.sequential import counted_pairs
from ablation.analysis.versions import package_versions
from ablation.config import CampaignConfig, Provenance, config_or_default
from ablation.errors import WrongType
from ablation.outputs import TOOL_CALLS_PREFIX
from ablation.process_hooks import during_large_work
from ablation.report import (
    AblationReport,
    Claim,
    ContinuousComparison,
    McNemarSummary,
    PairTable,
    QualityComparison,
    Uplift,
    UpliftTest,
)
from ablation.schema import AblationTask, TaskResult

__all__ = [
    "build_report",
    "compare_columns",
    "compare_results",
    "package_versions",
    "report_from_results",
    "source_date",
]


def source_date() -> str | None:
    """``SOURCE_DATE_EPOCH`` as an ISO time (reproducible builds), or ``None`` when unset."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not raw:
        return None
    try:
        return datetime.fromtimestamp(int(raw), UTC).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):
        return None


def _summary(table: PairTable, test: UpliftTest) -> Claim:
    """The sentence's claim, by the regression gate's own one-sided test (one test per question)."""
    if table.regressions + table.improvements == 0:
        return "no paired tasks" if table.n == 0 else "no discordant pairs"
    if test.pvalue_worse < test.alpha and test.pvalue_worse <= test.pvalue_better:
        return "regression"
    if test.pvalue_better < test.alpha:
        return "improvement"
    return "no significant difference"


def _quality(data: PairedData, config: CampaignConfig) -> dict[str, QualityComparison]:
    n = len(data.task_ids)
    quality: dict[str, QualityComparison] = {}
    for name in sorted(set(data.baseline.quality) | set(data.candidate.quality)):
        nan = np.full(n, np.nan)
        comparison = compare_continuous(
            name, data.baseline.quality.get(name, nan), data.candidate.quality.get(name, nan),
            config=config, left_out_reason="scorer error or no completed output in an arm",
        )
        quality[name] = QualityComparison(
            **comparison.model_dump(),
            scorer_errors_baseline=data.baseline.quality_errors.get(name, 0),
            scorer_errors_candidate=data.candidate.quality_errors.get(name, 0),
        )
    return quality


def _arm_metric(metrics: Mapping[str, np.ndarray], name: str, n: int) -> np.ndarray:
    """An arm's per-task values of metric ``name`` (NaN where none); a tool the arm never called
    counts 0 calls on the tasks where it reported usage (``model_requests``)."""
    values = metrics.get(name)
    if values is not None:
        return values
    requests = metrics.get("model_requests")
    if requests is not None and name.startswith(TOOL_CALLS_PREFIX):
        return np.where(np.isnan(requests), np.nan, 0.0)
    return np.full(n, np.nan)


def _metrics(data: PairedData, config: CampaignConfig) -> dict[str, ContinuousComparison]:
    """Paired comparisons of the baseline's metrics, and of tool call counts of either arm."""
    n = len(data.task_ids)
    base, cand = data.baseline.metrics, data.candidate.metrics
    names = set(base) | {name for name in cand if name.startswith(TOOL_CALLS_PREFIX)}
    return {
        name: compare_continuous(
            name, _arm_metric(base, name, n), _arm_metric(cand, name, n),
            config=config, left_out_reason="no value in an arm",
        )
        for name in sorted(names)
    }


def _provenance(
    prov: Provenance, data: PairedData, config: CampaignConfig, mcnemar: McNemarSummary,
    uplift: Uplift,
) -> Provenance:
    """Fill in the statistical fields of the provenance: settings, methods, versions."""
    methods = {
        "mcnemar": mcnemar.method,
        "mcnemar_midp": mcnemar.midp_method,
        "uplift_ci": uplift.ci.method,
        **({"uplift_bootstrap_ci": uplift.bootstrap_ci.method} if uplift.bootstrap_ci else {}),
        "pass_rate_ci": "Wilson score interval" if data.runs == 1 else "t over per-task fractions",
    }
    if uplift.tango_ci is not None:
        methods["uplift_tango_ci"] = uplift.tango_ci.method
    return prov.model_copy(
        update={
            "seed": config.seed,
            "n_resamples": config.n_resamples,
            "confidence_level": config.confidence_level,
            "alpha": config.alpha,
            "runs": data.runs,
            "on_error": config.on_error,
            "methods": {**prov.methods, **methods},
            "versions": {**package_versions(), **prov.versions},
            "labels": {**config.labels, **prov.labels},
            # No wall clock unless the caller gives one: the same inputs give the same bytes.
            "finished_at": prov.finished_at or source_date(),
        }
    )


# Pairs from which the exact MDE (~0.2 s at 1e6 pairs) runs on a thread of its own beside the
# other statistics (:func:`in_background`). The same numbers either way. The latency statistics
# stay on the caller's thread: on the MDE's thread, with every other section built meanwhile, a
# 1e6-pair report took 0.93 s against 0.73 s (the caller's Python and pydantic work holds the GIL
# that each of their numpy steps waits for) and its peak grew ~80 MiB (benchmarks/README.md).
_PARALLEL = 10_000


def _cost(data: PairedData, config: CampaignConfig) -> ContinuousComparison | None:
    if not (np.any(~np.isnan(data.baseline.cost)) or np.any(~np.isnan(data.candidate.cost))):
        return None
    return compare_continuous(
        "cost", data.baseline.cost, data.candidate.cost, config=config,
        left_out_reason="no cost in an arm: none stated, or a model without a price",
    )


def _parts(
    data: PairedData, masks: tuple[np.ndarray, ...], config: CampaignConfig,
    overall: tuple[list[str], list[str]],
) -> dict[str, Any]:
    """The report's cost, quality, metric, category and drill-down sections (``overall``: the
    regression and improvement ids, which a single category copies)."""
    return {
        "cost": _cost(data, config),
        "quality": _quality(data, config),
        "metrics": _metrics(data, config),
        "categories": breakdowns.categories(data, masks, config, overall) if len(data.task_ids) else [],
        "details": details(data, masks),
    }


@during_large_work
def build_report(
    data: PairedData,
    *,
    config: CampaignConfig | None = None,
    provenance: Provenance | None = None,
    arms: Sequence[Any] | None = None,
) -> AblationReport:
    """Compute every statistic of the report from paired data, then apply the gates.

    Args:
        data: Paired columns from :func:`~ablation.analysis.pair_arms.pair_columns` (or any
            :class:`~ablation.analysis.pairing.PairedData` built the same way).
        config: Analysis settings (alpha, level, resamples, seed, gates); with ``sequential`` set,
            every figure counts only the tasks up to the monitor's decision (``apply_sequential``).
        provenance: Provenance to record; the statistical fields are filled in here.
        arms: The paired arms' columns, if the caller has them: flags of critical tasks left out.

    Returns:
        The gated report, with its change notes.
    """
    config = config_or_default(config)
    data, sequential = counted_pairs(data, config)
    level = config.confidence_level
    masks = breakdowns.classify(data)
    table = breakdowns.table(masks)
    mde_call = functools.partial(headline.minimum_detectable, data, table, config.alpha)
    with in_background(mde_call, len(data.task_ids) >= _PARALLEL) as mde_result:
        regressions, improvements = breakdowns.ids(data, masks[1]), breakdowns.ids(data, masks[2])
        critical_regressions, critical_flaky = headline.critical_ids(data, masks)
        mcnemar = headline.mcnemar_summary(table.regressions, table.improvements, data.runs, table.n)
        test = headline.uplift_test(data, table, config.alpha)
        uplift = headline.uplift(data, table, config)
        n = len(data.task_ids)
        repeated, flaky = (breakdowns.repeated(data, config) if data.runs > 1 and n else (None, []))
        prov = _provenance(provenance or Provenance(), data, config, mcnemar, uplift)
        parts = _parts(data, masks, config, (regressions, improvements))
        lat = censored_latency(data, config.timeout_s, config.on_error)
        latency = latency_comparison(config, lat)
        mde, mde_method = mde_result()
    report = AblationReport(
        n_tasks=data.n_tasks,
        n_paired=n,
        n_critical=int(data.critical.sum()),
        runs=data.runs,
        excluded=data.excluded,
        table=table,
        regressions=[],
        improvements=[],
        critical_regressions=[],
        critical_flaky=critical_flaky,
        baseline=headline.arm_summary(data, "baseline", prov.baseline_agent, level, lat.baseline, lat.candidate),
        candidate=headline.arm_summary(data, "candidate", prov.candidate_agent, level, lat.candidate, lat.baseline),
        mcnemar=mcnemar,
        uplift=uplift,
        latency=latency,
        **parts,
        flaky=flaky,
        repeated=repeated,
        noninferiority=headline.noninferiority(data, table, config),
        minimum_detectable_effect=mde,
        minimum_detectable_effect_method=mde_method,
        metric_noninferiority=metric_noninferiority(data, config, lat),
        errors=error_summary(data),
        errored_regressions=errored_regressions(data, regressions),
        zero_regression_upper_bound=headline.zero_bound(table, n, level),
        summary=_summary(table, test),
        uplift_test=test,
        provenance=prov,
        sequential=sequential,
    )
    report = breakdowns.with_ids(
        report, regressions=regressions, improvements=improvements,
        critical_regressions=critical_regressions,
        critical_excluded=critical_flags.left_out(missing_pairs(report), data, arms),
    )  # fmt: skip
    return evaluate_gates(with_notes(report, data, config.alpha), config.gates, alpha=config.alpha)


def report_from_results(
    results: Iterable[Any],
    *,
    config: CampaignConfig | None = None,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    provenance: Provenance | None = None,
    trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> AblationReport:
    """The gated report of :class:`TaskResult` s of both arms (either may be empty; each goes to
    its ``arm``), read into columns and paired by :func:`~ablation.analysis.pair_arms.pair_columns`
    against the suite ``tasks`` or the ``expected_ids`` when given; the drill-downs fetch their few
    trials from ``trial_lookup`` when given, else from ``results``."""
    from ablation.analysis.in_memory import ResultLookup, split_arms
    from ablation.analysis.pair_arms import pair_columns

    config, columns = config_or_default(config), split_arms(results)
    lookup = trial_lookup if trial_lookup is not None else ResultLookup(columns)
    data = pair_columns(columns["baseline"][1], columns["candidate"][1], tasks=tasks,
                        expected_ids=expected_ids, on_error=config.on_error, trial_lookup=lookup)  # fmt: skip
    return build_report(data, config=config, provenance=provenance)


def _side(
    side: Any, arm: str, key: str | None, field: str | None, run_field: str | None,
    ids: np.ndarray | None = None,
) -> tuple[Sequence[Any], Any, str]:
    """One side of :func:`compare_results` as ``(rows, TrialColumns, label)``; a list side
    shares ``ids`` (the other side's task ids) when it holds the same ids in the same order.
    Lists of :class:`TaskResult` and of TaskResult-shaped records (with ``task_id``) take the
    columnar fast path; files, DataFrames and result-file-like mappings are read by
    :mod:`ablation.sources.inputs` first."""
    from ablation.analysis.in_memory import (
        are_records,
        result_fields,
        results_to_columns,
        side_columns,
    )

    if key is None and field is None and run_field is None and isinstance(side, list) and side:
        given = result_fields(side)  # every row a TaskResult: the fields some row sets
        if given is not None or are_records(side):
            return side_columns(side, arm, given, ids)
    from ablation.sources.inputs import side_results  # the readers of every format: only here

    rows, label = side_results(side, arm, key=key, field=field, run_field=run_field)
    return rows, results_to_columns(rows, arm, source=label), label


def _expected_ids(expected_ids: Any) -> list[str] | None:
    """``expected_ids`` as a list of ids; a string (it would split into characters) is refused."""
    if expected_ids is None:
        return None
    if isinstance(expected_ids, str | bytes) or not isinstance(expected_ids, Iterable):
        raise WrongType(
            f"expected_ids must be an iterable of ids (e.g. a list of str), got "
            f"{type(expected_ids).__name__} {expected_ids!r:.60}"
        )
    return [str(i) for i in expected_ids]


@during_large_work
def compare_results(
    baseline: Iterable[TaskResult] | Any,
    candidate: Iterable[TaskResult] | Any,
    *,
    expected_ids: Iterable[str] | None = None,
    config: CampaignConfig | None = None,
    names: tuple[str, str] | None = None,
    key: str | None = None,
    field: str | None = None,
    run_field: str | None = None,
) -> AblationReport:
    """Build the report from results that already exist.

    Args:
        baseline: The baseline's results: a list of :class:`TaskResult` (any ``arm`` value; it is
            set to ``"baseline"``), a list of TaskResult-shaped dict records (``task_id``,
            ``passed``, ...), a path to a result file of any supported format (read by
            :func:`~ablation.sources.result_files.load_results`), a list of result-file-like
            mappings (``key``/``field`` paths, default ``id``/``passed``), or a pandas/polars
            DataFrame (rows read like a JSONL file). Anything else is a ``TypeError`` (see
            :mod:`ablation.sources.inputs`).
        candidate: The candidate's results, likewise.
        expected_ids: Ids that should be present (an iterable of ids; a string is a
            ``TypeError``); those missing from either side are reported as missing observations
            instead of silently shrinking the comparison.
        config: Analysis settings.
        names: Labels of the two sides for provenance (default: file names or "baseline" /
            "candidate").
        key: Dotted path of the id in files, mappings and DataFrame rows (default ``id``).
        field: Dotted path of the verdict (default ``passed``), or a tool format's scorer.
        run_field: Dotted path of the run index (repeated runs).

    Returns:
        The same :class:`AblationReport` a campaign produces.
    """
    from ablation.analysis.in_memory import ResultLookup, side_names

    expected_ids, names = _expected_ids(expected_ids), side_names(names)
    first = _side(baseline, "baseline", key, field, run_field)
    second = _side(candidate, "candidate", key, field, run_field, first[1].task_id)
    return compare_columns(
        first[1], second[1], expected_ids=expected_ids, config=latency_censoring.time_limit_of_files(config),
        names=names or (first[2], second[2]),
        trial_lookup=ResultLookup({"baseline": first[:2], "candidate": second[:2]}),
    )


def compare_columns(
    baseline: Any, candidate: Any, *, names: tuple[str, str], expected_ids: Iterable[str] | None = None,
    config: CampaignConfig | None = None, trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> AblationReport:
    """The report of :func:`compare_results` from two arms' :class:`~ablation.columns.TrialColumns`.

    ``names`` label the sides in the provenance; ``trial_lookup`` maps ``(task_id, arm)`` to the
    first-run :class:`TaskResult` for the drill-downs; ``expected_ids`` are checked by the caller.
    """
    from ablation.analysis.pair_arms import pair_columns

    import_report_statistics(max(len(baseline), len(candidate)))  # before the pairing's lists
    config, provenance = config_or_default(config), Provenance(
        baseline_agent=names[0], candidate_agent=names[1], source="compare")
    data = pair_columns(baseline, candidate, expected_ids=expected_ids, on_error=config.on_error,
                        trial_lookup=trial_lookup)  # fmt: skip
    return build_report(data, config=config, provenance=provenance, arms=(baseline, candidate))
