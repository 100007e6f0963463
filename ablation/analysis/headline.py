"""The headline figures of a report: per-arm summaries, exact McNemar, the uplift and its
intervals, non-inferiority, and the minimum detectable effect.

With one run per task the pair is the task and the binary methods apply; with ``runs > 1`` the task
stays the unit (per-task pass fractions; see :mod:`ablation.analysis.build`).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np

from ablation import stats
from ablation.analysis import breakdowns
from ablation.analysis.pairing import PairedData
from ablation.analysis.seeding import stream
from ablation.analysis.uplift_intervals import (
    UpliftInputs,
    choose_headline,
    uplift_intervals,
)
from ablation.config import CampaignConfig
from ablation.report import (
    ArmSummary,
    Interval,
    McNemarSummary,
    NamedInterval,
    NonInferiority,
    PairTable,
    Uplift,
    UpliftTest,
)

__all__ = [
    "arm_summary",
    "critical_ids",
    "mcnemar_summary",
    "minimum_detectable",
    "noninferiority",
    "uplift",
    "uplift_test",
    "zero_bound",
]

_P90 = np.array([0.9])  # the quantile level of an arm's latency p90 (stats.linear_quantiles)


#: Up to this many tasks the per-arm pass rate with repeated runs gets the fixed-n betting interval
#: (valid at any n, and conservative); above it, the design-effect Wilson interval, whose normal
#: approximation holds there and which is the narrower (docs/STATISTICS.md, per-arm pass rate).
BETTING_MAX_TASKS = 2000


def repeated_pass_rate_interval(fraction: np.ndarray, rate: float, trials: int, level: float) -> Interval:
    """An arm's pass-rate interval with repeated runs: the task is the unit, never zero width."""
    if fraction.size > BETTING_MAX_TASKS:
        return clustered_wilson(fraction, rate, trials, level)
    ci = stats.bounded_mean_interval(fraction, confidence_level=level, rng=0)
    return Interval(
        low=max(0.0, float(ci.low)), high=min(1.0, float(ci.high)), confidence_level=level,
        method="fixed-n betting interval for the mean per-task pass fraction (task = unit)",
    )


def clustered_wilson(fraction: np.ndarray, rate: float, trials: int, level: float) -> Interval:
    """Wilson interval for a pass rate over tasks run several times, at the effective sample size.

    Runs of one task are correlated, so the trials are not independent: the interval is Wilson's
    at ``n_eff = rate(1 − rate) / v``, where ``v`` is the variance of the per-task pass fractions
    divided by the number of tasks (the task is the unit; Kish's design effect, as Korn &
    Graubard 1998 use it for clustered proportions), kept within ``[tasks, trials]``. With
    deterministic tasks ``n_eff`` is the number of tasks; with independent runs it is the number
    of trials. Never zero width (unlike a t interval over the fractions when no task varies).

    Assumptions: independent tasks; every task ran about the same number of times.
    """
    tasks = int(fraction.size)
    v = float(np.var(fraction, ddof=1)) / tasks if tasks > 1 else 0.0
    n_eff = rate * (1.0 - rate) / v if v > 0 else float(tasks)
    n_eff = min(max(n_eff, float(tasks)), float(trials))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    z2 = z * z
    centre = (rate + z2 / (2 * n_eff)) / (1 + z2 / n_eff)
    half = z * math.sqrt(rate * (1 - rate) / n_eff + z2 / (4 * n_eff * n_eff)) / (1 + z2 / n_eff)
    return Interval(
        low=0.0 if rate == 0 else max(0.0, centre - half),
        high=1.0 if rate == 1 else min(1.0, centre + half),
        confidence_level=level,
        method=f"Wilson score interval at the effective sample size {n_eff:.4g} (task = unit)",
    )


def arm_summary(
    data: PairedData, arm: str, agent: str | None, level: float,
    latency: np.ndarray | None = None, other: np.ndarray | None = None,
) -> ArmSummary:
    """One arm's summary; its latency figures are over the tasks where both arms have one
    (``latency``/``other``: the arms' per-task latencies, timeouts counted at the cap), so the two
    arms' means describe the same tasks."""
    cols = data.baseline if arm == "baseline" else data.candidate
    passes = int(cols.passes.sum())
    trials = int(cols.runs.sum())
    if data.runs == 1 or trials == 0:
        wilson = stats.wilson_interval(passes, trials, confidence_level=level)
        rate, ci = (passes / trials if trials else 0.0), breakdowns.interval(wilson, level)
    else:
        rate = passes / trials
        ci = repeated_pass_rate_interval(cols.fraction, rate, trials, level)
    if latency is None or other is None:
        lat = cols.latency[~np.isnan(cols.latency)]
    else:
        lat = latency[~(np.isnan(latency) | np.isnan(other))]
    return ArmSummary(
        agent=agent,
        n_trials=cols.n_trials,
        passes=passes,
        counted_trials=trials,
        pass_rate=rate,
        pass_rate_ci=ci,
        errors=cols.errors,
        timeouts=cols.timeouts,
        retried=cols.retried,
        latency_mean_s=float(lat.mean()) if lat.size else None,
        latency_median_s=stats.median(lat) if lat.size else None,
        latency_p90_s=float(stats.linear_quantiles(lat, _P90)[0]) if lat.size else None,
        cost_total=cols.cost_total,
        cost_mean=cols.cost_total / cols.cost_trials if cols.cost_total is not None else None,
        cost_trials=cols.cost_trials if cols.cost_total is not None else None,
        quality_means={
            name: (float(np.nanmean(v)) if np.any(~np.isnan(v)) else None)
            for name, v in cols.quality.items()
        },
    )


def mcnemar_summary(b: int, c: int, runs: int, pairs: int | None = None) -> McNemarSummary:
    """Exact and mid-p McNemar on ``b`` regressions and ``c`` improvements among ``pairs``
    (``None``: unknown, taken as some); the note says when there were no pairs or no discordant
    pair (p = 1 either way: the test had nothing to weigh)."""
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
        note=(
            "no paired tasks: the test had no data" if pairs == 0
            else "no discordant pairs: the arms agree on every task" if b + c == 0 else None
        ),
    )


def uplift_test(data: PairedData, table: PairTable, alpha: float) -> UpliftTest:
    """The one test of a pass-rate change that the summary sentence and the regression gate share.

    With one run per task: the exact McNemar test, one-sided each way (``P(X >= b)`` for
    "candidate worse", ``P(X <= b)`` for "candidate better", ``X ~ Bin(b + c, 1/2)``). With
    repeated runs: the exact sign-flip test on per-task differences of pass fractions, one-sided
    each way (exact under "the arms are exchangeable within each task" however many tasks are
    deterministic; the McNemar test again with one run).
    """
    if data.runs == 1:
        b, c = table.regressions, table.improvements
        worse = stats.mcnemar(b, c, method="exact", alternative="less")
        better = stats.mcnemar(b, c, method="exact", alternative="greater")
        return UpliftTest(
            method="one-sided exact McNemar",
            pvalue_worse=float(worse.pvalue), pvalue_better=float(better.pvalue), alpha=alpha,
        )
    d = data.candidate.fraction - data.baseline.fraction
    lcm = math.lcm(*{int(r) for r in np.concatenate((data.baseline.runs, data.candidate.runs))})
    p_worse = stats.sign_flip_test(d, denominator=lcm, alternative="less").pvalue
    p_better = stats.sign_flip_test(d, denominator=lcm, alternative="greater").pvalue
    return UpliftTest(
        method=(
            f"one-sided exact sign-flip test on per-task pass-fraction differences "
            f"({data.runs} runs, task = unit)"
        ),
        pvalue_worse=float(p_worse), pvalue_better=float(p_better), alpha=alpha,
    )


def uplift(data: PairedData, table: PairTable, config: CampaignConfig) -> Uplift:
    """The uplift with every applicable registered interval and the headline chosen among them
    (:mod:`ablation.analysis.uplift_intervals`)."""
    level, n = config.confidence_level, len(data.task_ids)
    baseline_fractions, candidate_fractions = breakdowns.pass_fractions(data)
    base_passes = int(data.baseline.passes.sum())
    cand_passes = int(data.candidate.passes.sum())
    if n == 0:
        empty = Interval(low=-1.0, high=1.0, confidence_level=level, method="no paired tasks")
        listed = [NamedInterval(name="tango", **empty.model_dump()),
                  NamedInterval(name="bootstrap", secondary=True, **empty.model_dump())]  # fmt: skip
        return Uplift(estimate=0.0, ci=empty, headline="tango", intervals=listed, n=0)
    cells = (table.both_pass, table.regressions, table.improvements, table.both_fail)
    if data.runs == 1:
        estimate = (table.improvements - table.regressions) / n
        pairing = stats.paired_binary_summary(*cells)
        se_paired: float | None = pairing.se_paired
        se_unpaired: float | None = pairing.se_unpaired
        corr: float | None = pairing.correlation
        relative = (cand_passes - base_passes) / base_passes if base_passes else None
    else:
        base, cand = baseline_fractions, candidate_fractions
        t = stats.paired_t_test(base, cand, confidence_level=level)
        estimate = float(np.mean(cand - base))
        se_paired = float(t.standard_error)
        se_unpaired = float(np.sqrt(np.var(base, ddof=1) / n + np.var(cand, ddof=1) / n)) if n > 1 else None
        corr = float(np.corrcoef(base, cand)[0, 1]) if n > 1 and base.std() > 0 and cand.std() > 0 else 0.0
        base_rate = float(np.mean(base))
        relative = estimate / base_rate if base_rate > 0 else None
    inputs = UpliftInputs(data, table, baseline_fractions, candidate_fractions, config)
    listed = uplift_intervals(inputs)
    chosen = choose_headline(listed, runs=data.runs, has_families=data.has_families)
    return Uplift(
        estimate=estimate,
        relative=relative,
        ci=Interval(**chosen.model_dump(exclude={"name", "secondary"})),
        headline=chosen.name,
        intervals=listed,
        se_paired=se_paired,
        se_unpaired=se_unpaired,
        correlation=corr,
        n=n,
    )


def noninferiority(data: PairedData, table: PairTable, config: CampaignConfig) -> NonInferiority | None:
    """The non-inferiority test at the configured margin, with the interval beside it.

    With one run per task: the exact unconditional test (``method``), and as ``ci`` the
    two-sided ``1 - 2 alpha`` Tango score interval the test reports, labelled by that interval's
    own method (:func:`ablation.stats.paired_difference_interval`, ``"tango"``), not by the
    test's. With repeated runs: the betting e-value and the fixed-n betting interval.
    ``None`` without a margin or without pairs.
    """
    margin = config.gates.noninferiority_margin
    if margin is None or not len(data.task_ids):
        return None
    alpha = config.alpha
    level = 1 - 2 * alpha
    if data.runs == 1:
        cells = (table.both_pass, table.regressions, table.improvements, table.both_fail)
        ni = stats.noninferiority_test(*cells, margin=margin, alpha=alpha)
        # the test's interval is this one (same table, method and level); its name labels it
        tango = stats.paired_difference_interval(*cells, method="tango", confidence_level=level)
        return NonInferiority(
            margin=margin, alpha=alpha, statistic=float(ni.statistic), pvalue=float(ni.pvalue),
            ci=breakdowns.interval(ni, level, method=tango.method), decision=ni.decision,
            method=ni.method,
        )
    d = data.candidate.fraction - data.baseline.fraction
    test = stats.bounded_mean_noninferiority(
        d, margin=margin, alpha=alpha, rng=stream(config.seed, "uplift-betting")
    )
    ci = breakdowns.betting_interval(d, level, config.seed)
    decision: Literal["non-inferior", "regression", "inconclusive"] = (
        "non-inferior" if test.pvalue <= alpha else ("regression" if ci.high < 0 else "inconclusive")
    )
    return NonInferiority(
        margin=margin, alpha=alpha, statistic=float(test.statistic), pvalue=float(test.pvalue),
        ci=ci, decision=decision,
        method="betting e-value on per-task differences (fixed-n, task = unit)",
    )


def minimum_detectable(
    data: PairedData, table: PairTable, alpha: float
) -> tuple[float | None, str | None]:
    """The smallest regression the comparison could detect at 80% power, and how it was computed.

    The MDE of the test the regression gate runs (:func:`uplift_test`, one-sided, H1 "candidate
    worse", at ``alpha``). With one run per task it is the exact MDE of the one-sided exact
    McNemar test (enumeration, :func:`ablation.stats.exact_minimum_detectable_effect`) at the
    observed discordance; with repeated runs, the normal formula on the per-task SD (the paired
    t test). Returned as a magnitude; ``None`` when no regression within the observed
    discordance is detectable at this size.
    """
    n = len(data.task_ids)
    psi = (table.regressions + table.improvements) / n if n else 0.0
    mde, method = None, None
    if data.runs == 1 and psi > 0:
        mde = float(stats.exact_minimum_detectable_effect(n, psi, alpha=alpha, alternative="less"))
        method = (
            f"exact power of the one-sided exact McNemar test (enumeration), 80% power, "
            f"alpha {alpha:g}, observed discordance {psi:.4g}"
        )
    elif data.runs > 1 and n > 1:
        sd = float(np.std(data.candidate.fraction - data.baseline.fraction, ddof=1))
        mde = (
            float(stats.minimum_detectable_effect(n, sd=sd, alpha=alpha, alternative="less"))
            if sd > 1e-9 else None
        )
        method = (
            "normal approximation (per-task SD) for the one-sided sign-flip test on per-task "
            f"fractions, 80% power, alpha {alpha:g}"
        )
    if mde is not None and not np.isfinite(mde):
        mde = None  # no effect within the observed discordance is detectable at this size
    return mde, (method if mde is not None else None)


def critical_ids(data: PairedData, masks: tuple[np.ndarray, ...]) -> tuple[list[str], list[str]]:
    """Critical tasks that regressed, and (repeated runs) those whose lower pass fraction is flaky.

    With one run a critical task regresses when the baseline passed and the candidate failed.
    With repeated runs it regresses when the baseline passed every run and the candidate failed
    every run; a critical task whose pass fraction fell otherwise is flaky in at least one arm and
    is listed, not counted (a flaky task is not a regression by itself).
    """
    lower = masks[1] & data.critical
    if data.runs == 1:
        return breakdowns.ids(data, lower), []
    b, c = data.baseline, data.candidate
    stable = (b.passes == b.runs) & (c.passes == 0)
    return breakdowns.ids(data, lower & stable), breakdowns.ids(data, lower & ~stable)


def zero_bound(table: PairTable, n: int, level: float) -> float | None:
    """The one-sided upper bound on the regression rate when no pair regressed (else ``None``)."""
    if table.regressions or not n:
        return None
    return float(stats.zero_failure_upper_bound(n, confidence_level=level))
