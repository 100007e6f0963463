"""Build the :class:`~ablation.report.AblationReport` from paired trials.

The engine's campaigns and ``compare`` on existing result files enter here alike, so there is
one copy of the statistics path: trials -> :func:`~ablation.analysis.pairing.pair_results` ->
:func:`build_report` -> gates.

Units of analysis: with one run per task the pair is the task and the binary methods apply
(exact McNemar, Tango and Newcombe score intervals, a multinomial paired bootstrap). With
``runs > 1`` the task stays the unit: per-task pass fractions are compared with a paired t on
their differences (df = T - 1) and a cluster bootstrap over tasks; the 2x2 table then classifies
tasks by the sign of their per-task difference, so McNemar becomes the sign test on tasks.
When tasks are grouped in families, the uplift bootstrap resamples whole families.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, Literal

import numpy as np

from ablation import stats
from ablation.analysis import breakdowns as bd
from ablation.analysis.gates import evaluate_gates
from ablation.analysis.metrics import compare_continuous, compare_latency
from ablation.analysis.pairing import PairedData, pair_results
from ablation.analysis.seeding import stream
from ablation.config import CampaignConfig, Provenance
from ablation.report import (
    AblationReport,
    ArmSummary,
    Interval,
    McNemarSummary,
    NonInferiority,
    PairDetail,
    PairTable,
    QualityComparison,
    TrialView,
    Uplift,
)
from ablation.schema import AblationTask, TaskResult, to_jsonable

__all__ = ["build_report", "compare_results", "package_versions", "report_from_results"]

MAX_DETAILS = 500


def package_versions() -> dict[str, str]:
    """Versions that decide the numbers (Python, numpy, scipy, pydantic, ablation)."""
    versions = {"python": platform.python_version()}
    for name in ("ablation", "numpy", "scipy", "pydantic"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
            versions[name] = "unknown"
    return versions


def _arm_summary(data: PairedData, arm: str, agent: str | None, level: float) -> ArmSummary:
    cols = data.baseline if arm == "baseline" else data.candidate
    passes = int(cols.passes.sum())
    trials = int(cols.runs.sum())
    if data.runs == 1 or trials == 0:
        wilson = stats.wilson_interval(passes, trials, confidence_level=level)
        rate, ci = (passes / trials if trials else 0.0), bd.interval(wilson, level)
    else:
        # Runs of one task are correlated: the interval is over per-task fractions (task = unit).
        fraction = cols.fraction
        t = stats.paired_t_test(np.zeros_like(fraction), fraction, confidence_level=level)
        rate = passes / trials
        ci = Interval(
            low=max(0.0, float(t.confidence_interval.low)),
            high=min(1.0, float(t.confidence_interval.high)),
            confidence_level=level,
            method="t interval over per-task pass fractions (task = unit)",
        )
    lat = cols.latency[~np.isnan(cols.latency)]
    return ArmSummary(
        agent=agent,
        n_trials=cols.n_trials,
        passes=passes,
        pass_rate=rate,
        pass_rate_ci=ci,
        errors=cols.errors,
        timeouts=cols.timeouts,
        retried=cols.retried,
        latency_mean_s=float(lat.mean()) if lat.size else None,
        latency_median_s=float(np.median(lat)) if lat.size else None,
        latency_p90_s=float(np.quantile(lat, 0.9)) if lat.size else None,
        cost_total=cols.cost_total,
        cost_mean=cols.cost_total / cols.cost_trials if cols.cost_total is not None else None,
        quality_means={
            name: (float(np.nanmean(v)) if np.any(~np.isnan(v)) else None)
            for name, v in cols.quality.items()
        },
    )


def _mcnemar(b: int, c: int, runs: int) -> McNemarSummary:
    exact = stats.mcnemar(b, c, method="exact")
    midp = stats.mcnemar(b, c, method="midp")
    method = exact.method
    if runs > 1:
        method = f"{method}; on tasks classified by the sign of their per-task difference (sign test)"
    return McNemarSummary(
        b=b,
        c=c,
        pvalue=float(exact.pvalue),
        midp_pvalue=float(midp.pvalue),
        method=method,
        midp_method=midp.method,
        note="no discordant pairs: the arms agree on every task" if b + c == 0 else None,
    )


def _uplift(data: PairedData, table: PairTable, config: CampaignConfig) -> Uplift:
    level, seed, n = config.confidence_level, config.seed, len(data.task_ids)
    fb, fc = data.baseline.fraction, data.candidate.fraction
    base_passes = int(data.baseline.passes.sum())
    cand_passes = int(data.candidate.passes.sum())
    if n == 0:
        empty = Interval(low=-1.0, high=1.0, confidence_level=level, method="no paired tasks")
        return Uplift(estimate=0.0, ci=empty, tango_ci=empty, n=0)
    cells = (table.both_pass, table.regressions, table.improvements, table.both_fail)
    boot_args: dict[str, Any] = {"n_resamples": config.n_resamples, "confidence_level": level}
    if data.has_families:
        boot = stats.cluster_bootstrap(
            fb, fc, clusters=np.asarray(data.families), weights=data.baseline.runs,
            rng=stream(seed, "uplift"), **boot_args,
        )
    elif data.runs == 1:
        boot = stats.binary_uplift_bootstrap(*cells, rng=stream(seed, "uplift"), **boot_args)
    elif np.all(data.baseline.runs == data.runs) and np.all(data.candidate.runs == data.runs):
        boot = stats.repeated_binary_bootstrap(
            data.baseline.passes, data.candidate.passes, data.runs,
            rng=stream(seed, "uplift"), **boot_args,
        )
    else:
        boot = stats.cluster_bootstrap(fb, fc, rng=stream(seed, "uplift"), **boot_args)
    if data.runs == 1:
        estimate = (table.improvements - table.regressions) / n
        tango = stats.paired_difference_interval(*cells, method="tango", confidence_level=level)
        newcombe = stats.paired_difference_interval(*cells, method="newcombe", confidence_level=level)
        pairing = stats.paired_binary_summary(*cells)
        se_paired: float | None = pairing.se_paired
        se_unpaired: float | None = pairing.se_unpaired
        corr: float | None = pairing.correlation
        tango_ci, newcombe_ci, t_ci = bd.interval(tango, level), bd.interval(newcombe, level), None
        relative = (cand_passes - base_passes) / base_passes if base_passes else None
    else:
        t = stats.paired_t_test(fb, fc, confidence_level=level)
        estimate = float(np.mean(fc - fb))
        se_paired = float(t.standard_error)
        se_unpaired = float(np.sqrt(np.var(fb, ddof=1) / n + np.var(fc, ddof=1) / n)) if n > 1 else None
        corr = float(np.corrcoef(fb, fc)[0, 1]) if n > 1 and fb.std() > 0 and fc.std() > 0 else 0.0
        tango_ci, newcombe_ci, t_ci = None, None, bd.interval(t, level)
        base_rate = float(np.mean(fb))
        relative = estimate / base_rate if base_rate > 0 else None
    return Uplift(
        estimate=estimate,
        relative=relative,
        ci=bd.interval(boot, level),
        tango_ci=tango_ci,
        newcombe_ci=newcombe_ci,
        t_ci=t_ci,
        se_paired=se_paired,
        se_unpaired=se_unpaired,
        correlation=corr,
        n=n,
    )


def _noninferiority(data: PairedData, table: PairTable, config: CampaignConfig) -> NonInferiority | None:
    margin = config.gates.noninferiority_margin
    if margin is None or not data.task_ids:
        return None
    alpha = config.alpha
    level = 1 - 2 * alpha
    if data.runs == 1:
        ni = stats.noninferiority_test(
            table.both_pass, table.regressions, table.improvements, table.both_fail,
            margin=margin, alpha=alpha,
        )
        return NonInferiority(
            margin=margin, alpha=alpha, statistic=float(ni.statistic), pvalue=float(ni.pvalue),
            ci=bd.interval(ni, level), decision=ni.decision, method=ni.method,
        )
    fb, fc = data.baseline.fraction, data.candidate.fraction
    shifted = stats.paired_t_test(fb - margin, fc, confidence_level=level, alternative="greater")
    ci = stats.paired_t_test(fb, fc, confidence_level=level)
    low, high = float(ci.confidence_interval.low), float(ci.confidence_interval.high)
    decision: Literal["non-inferior", "regression", "inconclusive"] = (
        "non-inferior" if low > -margin else ("regression" if high < 0 else "inconclusive")
    )
    return NonInferiority(
        margin=margin, alpha=alpha, statistic=float(shifted.statistic), pvalue=float(shifted.pvalue),
        ci=bd.interval(ci, level), decision=decision,
        method="paired t on per-task differences, H0: uplift <= -margin (task = unit)",
    )


def _view(result: TaskResult | None) -> TrialView | None:
    if result is None:
        return None
    return TrialView(
        status=result.status,
        passed=result.passed if result.completed else None,
        output=result.output,
        error=result.error,
        note=result.verifier_note,
        latency_s=result.latency_s,
        quality=dict(result.quality),
        attempts=result.attempts,
    )


def _details(data: PairedData, masks: tuple[np.ndarray, ...]) -> list[PairDetail]:
    """Side-by-side trials of the first :data:`MAX_DETAILS` regressions and improvements."""
    out: list[PairDetail] = []
    for kind, mask in (("regression", masks[1]), ("improvement", masks[2])):
        for i in np.flatnonzero(mask)[:MAX_DETAILS]:
            tid = data.task_ids[i]
            out.append(
                PairDetail(
                    task_id=tid,
                    kind=kind,  # type: ignore[arg-type]
                    category=data.categories[i],
                    critical=bool(data.critical[i]),
                    run=0 if data.trials else None,
                    expected_output=(
                        to_jsonable(data.tasks[tid].expected_output) if tid in data.tasks else None
                    ),
                    baseline=_view(data.trials.get((tid, "baseline"))),
                    candidate=_view(data.trials.get((tid, "candidate"))),
                )
            )
    return out


def build_report(
    data: PairedData,
    *,
    config: CampaignConfig | None = None,
    provenance: Provenance | None = None,
) -> AblationReport:
    """Compute every statistic of the report from paired data, then apply the gates.

    Args:
        data: Paired columns from :func:`~ablation.analysis.pairing.pair_results` or
            :func:`~ablation.analysis.pairing.pair_arrays`.
        config: Analysis settings (alpha, confidence level, resamples, seed, gates).
        provenance: Provenance to record; the statistical fields are filled in here.

    Returns:
        The gated report.
    """
    config = config or CampaignConfig()
    level = config.confidence_level
    masks = bd.classify(data)
    table = bd.table(masks)
    regressions, improvements = bd.ids(data, masks[1]), bd.ids(data, masks[2])
    critical_regressions = bd.ids(data, masks[1] & data.critical)
    mcnemar = _mcnemar(table.regressions, table.improvements, data.runs)
    uplift = _uplift(data, table, config)
    n = len(data.task_ids)
    summary: Literal["improvement", "regression", "no significant difference", "no discordant pairs"]
    if table.regressions + table.improvements == 0:
        summary = "no discordant pairs"
    elif mcnemar.pvalue < config.alpha:
        summary = "improvement" if table.improvements > table.regressions else "regression"
    else:
        summary = "no significant difference"
    repeated, flaky = (bd.repeated(data, config) if data.runs > 1 and n else (None, []))
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
    has_cost = bool(np.any(~np.isnan(data.baseline.cost)) or np.any(~np.isnan(data.candidate.cost)))
    metrics = {
        name: compare_continuous(
            name, data.baseline.metrics[name], data.candidate.metrics.get(name, np.full(n, np.nan)),
            config=config, left_out_reason="no value in an arm",
        )
        for name in sorted(data.baseline.metrics)
    }
    has_latency = bool(np.any(~np.isnan(data.baseline.latency)))
    methods = {
        "mcnemar": mcnemar.method,
        "mcnemar_midp": mcnemar.midp_method,
        "uplift_ci": uplift.ci.method,
        "pass_rate_ci": "Wilson score interval" if data.runs == 1 else "t over per-task fractions",
    }
    if uplift.tango_ci is not None:
        methods["uplift_tango_ci"] = uplift.tango_ci.method
    prov = provenance or Provenance()
    prov = prov.model_copy(
        update={
            "seed": config.seed,
            "n_resamples": config.n_resamples,
            "confidence_level": level,
            "alpha": config.alpha,
            "runs": data.runs,
            "on_error": config.on_error,
            "methods": {**prov.methods, **methods},
            "versions": {**package_versions(), **prov.versions},
            "labels": {**config.labels, **prov.labels},
            "finished_at": prov.finished_at or datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    psi = (table.regressions + table.improvements) / n if n else 0.0
    mde = None
    if data.runs == 1 and psi > 0:
        mde = float(stats.minimum_detectable_effect(n, psi=psi, alpha=config.alpha))
    elif data.runs > 1 and n > 1:
        sd = float(np.std(data.candidate.fraction - data.baseline.fraction, ddof=1))
        mde = float(stats.minimum_detectable_effect(n, sd=sd, alpha=config.alpha)) if sd > 0 else None
    if mde is not None and not np.isfinite(mde):
        mde = None  # no effect within the observed discordance is detectable at this size
    report = AblationReport(
        n_tasks=data.n_tasks,
        n_paired=n,
        n_critical=int(data.critical.sum()),
        runs=data.runs,
        excluded=data.excluded,
        table=table,
        regressions=regressions,
        improvements=improvements,
        critical_regressions=critical_regressions,
        baseline=_arm_summary(data, "baseline", prov.baseline_agent, level),
        candidate=_arm_summary(data, "candidate", prov.candidate_agent, level),
        mcnemar=mcnemar,
        uplift=uplift,
        latency=compare_latency(data.baseline.latency, data.candidate.latency, config=config)
        if has_latency
        else None,
        cost=compare_continuous(
            "cost", data.baseline.cost, data.candidate.cost, config=config,
            left_out_reason="no cost reported in an arm",
        )
        if has_cost
        else None,
        quality=quality,
        metrics=metrics,
        categories=bd.categories(data, masks, config) if n else [],
        flaky=flaky,
        repeated=repeated,
        noninferiority=_noninferiority(data, table, config),
        minimum_detectable_effect=mde,
        zero_regression_upper_bound=(
            float(stats.zero_failure_upper_bound(n, confidence_level=level))
            if table.regressions == 0 and n
            else None
        ),
        summary=summary,
        details=_details(data, masks),
        provenance=prov,
    )
    return evaluate_gates(report, config.gates, alpha=config.alpha)


def report_from_results(
    results: Iterable[Any],
    *,
    config: CampaignConfig | None = None,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    provenance: Provenance | None = None,
    trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> AblationReport:
    """Pair ``results`` and build the gated report (the engine's and compare's common path).

    ``results`` may be :class:`TaskResult` objects or the store's light rows; with rows, pass a
    ``trial_lookup`` so the drill-downs can fetch the few trials they show.
    """
    config = config or CampaignConfig()
    data = pair_results(
        results, tasks=tasks, expected_ids=expected_ids, on_error=config.on_error,
        keep_trials=trial_lookup is None, trial_lookup=trial_lookup,
    )
    return build_report(data, config=config, provenance=provenance)


def compare_results(
    baseline: Iterable[TaskResult] | Any,
    candidate: Iterable[TaskResult] | Any,
    *,
    expected_ids: Iterable[str] | None = None,
    config: CampaignConfig | None = None,
    names: tuple[str, str] | None = None,
) -> AblationReport:
    """Build the report from results that already exist.

    Args:
        baseline: The baseline's results: a list of :class:`TaskResult` (any ``arm`` value; it is
            set to ``"baseline"``), or a path to a JSONL/CSV file read by
            :func:`~ablation.sources.result_files.load_results` with its defaults.
        candidate: The candidate's results, likewise.
        expected_ids: Ids that should be present; those missing from either side are reported
            as missing observations instead of silently shrinking the comparison.
        config: Analysis settings.
        names: Labels of the two sides for provenance (default: file names or "baseline" /
            "candidate").

    Returns:
        The same :class:`AblationReport` a campaign produces.
    """
    sides: list[list[TaskResult]] = []
    labels: list[str] = []
    for side, arm in ((baseline, "baseline"), (candidate, "candidate")):
        if isinstance(side, str) or hasattr(side, "__fspath__"):
            from ablation.sources.result_files import load_results

            rows = load_results(side, arm=arm)  # type: ignore[arg-type]
            labels.append(str(side))
        else:
            rows = list(side)
            labels.append(arm)
        sides.append([r if r.arm == arm else r.model_copy(update={"arm": arm}) for r in rows])
    label_b, label_c = names or (labels[0], labels[1])
    config = config or CampaignConfig()
    provenance = Provenance(
        baseline_agent=label_b,
        candidate_agent=label_c,
        source="compare",
    )
    return report_from_results(
        [*sides[0], *sides[1]], config=config, expected_ids=expected_ids, provenance=provenance
    )
