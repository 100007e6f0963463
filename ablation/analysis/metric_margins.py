"""Non-inferiority of numeric metrics and quality scores, for ``GatePolicy.metric_margins``.

Each named metric gets :func:`ablation.stats.metric_noninferiority` (one-sided paired t on
candidate - baseline, shifted by the margin) on the pairs where both arms have a value. Latency
(``latency_s``), cost and token counts are lower-is-better; quality scores and any other metric
are higher-is-better. A name with fewer than :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` pairs
of values gets no entry, and its gate is inconclusive, saying why
(:func:`ablation.analysis.gate_data.too_few_pairs`): the t test under-covers below that n on
skewed differences, and the report shows no interval of the mean difference there either, so a
gate beside it would pass on a test the report refuses.

Latency is the report's own (:func:`~ablation.analysis.latency_censoring.censored_latency`): a
timed-out trial counts at the time limit, a lower bound of its latency, so the gate tests the
numbers the latency section shows. A lower bound decides one way only: when the candidate timed
out on a pair, its mean latency can be anything above the bound, so non-inferiority cannot be
shown ("inconclusive", saying why); when the baseline did, the baseline's mean can be anything
above it, so a regression cannot be shown either. A bound of the other arm's side decides as
the test says.

A quality score whose scorer failed on a trial (``TaskResult.quality_errors``) of either arm is
tested on the pairs that were scored, but its decision is ``"inconclusive"`` whatever the test
says, and ``method`` names the scorer, its failures per arm and the first error message
(:func:`scorer_errors`): a score that could not be computed is missing from its pair, and a
check that could not run is never a pass nor a failure. So is any metric some pairs lack in one
arm (a trial that errored or timed out before giving an output to score, a cost not stated):
the decision is the gate's (:mod:`ablation.analysis.metric_gate`), never a "non-inferior" or
"regression" of the pairs that have the value beside an inconclusive gate. The failures counted are those of every
trial of the data's tasks the arm summaries count (``ArmColumns.quality_errors``, shown beside
the quality score in the report).
"""

from __future__ import annotations

import numpy as np

from ablation import stats
from ablation.analysis.breakdowns import interval
from ablation.analysis.failures import scorer_error_groups, scorer_failed
from ablation.analysis.gate_data import LATENCY_NAMES
from ablation.analysis.latency_censoring import CensoredLatency
from ablation.analysis.pairing import PairedData
from ablation.config import CampaignConfig
from ablation.report import NonInferiority

__all__ = ["LOWER_IS_BETTER", "metric_columns", "metric_noninferiority", "scorer_errors"]

LOWER_IS_BETTER = frozenset({*LATENCY_NAMES, "cost", "tokens"})


def metric_columns(
    data: PairedData, name: str, latency: CensoredLatency | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The per-task baseline and candidate values of a metric, or ``None`` when absent; latency
    from ``latency`` (the report's, timeouts at the limit) when given."""
    b, c = data.baseline, data.candidate
    if name in LATENCY_NAMES:
        return (latency.baseline, latency.candidate) if latency is not None else (b.latency, c.latency)
    if name == "cost":
        return b.cost, c.cost
    for table_b, table_c in ((b.quality, c.quality), (b.metrics, c.metrics)):
        if name in table_b or name in table_c:
            nan = np.full(len(data.task_ids), np.nan)
            return table_b.get(name, nan), table_c.get(name, nan)
    return None


def scorer_errors(data: PairedData, name: str) -> str | None:
    """Words saying that the scorer of quality score ``name`` failed on a trial of the data
    (:func:`~ablation.analysis.failures.scorer_failed`, with the example of its first error
    group), or ``None`` when it never failed or ``name`` is no quality score."""
    arms = (("baseline", data.baseline), ("candidate", data.candidate))
    counts = [(cols.quality_errors.get(name, 0), data.trials_seen.get(arm, 0)) for arm, cols in arms]
    if name not in data.baseline.quality and name not in data.candidate.quality:
        return None
    if not any(n for n, _ in counts):
        return None
    examples = (g.example for g in scorer_error_groups(data) if g.scorer == name and g.example)
    return scorer_failed(name, counts, next(examples, None))


def _bounded(decision: str, keep: np.ndarray, latency: CensoredLatency | None) -> str | None:
    """Why a latency ``decision`` cannot stand on the pairs ``keep`` because an arm's values are
    lower bounds there (module docstring), or ``None``."""
    if latency is None:
        return None
    arm, timed = (
        ("candidate", latency.timed_out_candidate) if decision == "non-inferior"
        else ("baseline", latency.timed_out_baseline) if decision == "regression" else ("", None)
    )  # fmt: skip
    count = 0 if timed is None else int(timed[keep].sum())
    if not count:
        return None
    shown = "non-inferiority" if decision == "non-inferior" else "a regression"
    return (
        f"the {arm} timed out on {count} of {int(keep.sum())} pairs, counted at the time limit, a lower "
        f"bound of its latency there, so {shown} cannot be shown"
    )


def metric_noninferiority(
    data: PairedData, config: CampaignConfig, latency: CensoredLatency | None = None
) -> dict[str, NonInferiority]:
    """One non-inferiority test per configured metric margin that has
    :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` or more pairs (inconclusive when its scorer
    failed on a trial, or when timeouts bound latency the wrong way: see the module docstring).

    Args:
        data: The paired data.
        config: Its margins and alpha.
        latency: The report's latency, timeouts counted at the limit (``None``: the paired
            columns', which leave timed-out trials out).
    """
    out: dict[str, NonInferiority] = {}
    alpha = config.alpha
    for name, margin in config.gates.metric_margins.items():
        cols = metric_columns(data, name, latency)
        if cols is None:
            continue
        keep = ~(np.isnan(cols[0]) | np.isnan(cols[1]))
        if int(keep.sum()) < stats.MEAN_DIFFERENCE_MIN_N:
            continue
        ni = stats.metric_noninferiority(
            cols[0][keep], cols[1][keep], margin=margin, alpha=alpha,
            higher_is_better=name not in LOWER_IS_BETTER,
        )
        failed = scorer_errors(data, name) if name not in LOWER_IS_BETTER else None
        if failed is None and not keep.all():  # as the gate (metric_gate.unpaired_values)
            failed = f"{int((~keep).sum())} of {keep.size} pairs have no {name} in one arm"
        if failed is None and name in LATENCY_NAMES:
            failed = _bounded(ni.decision, keep, latency)
        method = f"{ni.method}; {int(keep.sum())} pairs"
        out[name] = NonInferiority(
            margin=margin, alpha=alpha, statistic=float(ni.statistic), pvalue=float(ni.pvalue),
            ci=interval(ni, 1 - 2 * alpha), decision="inconclusive" if failed else ni.decision,
            method=method if failed is None else (
                f"{method} (the pairs with a value in both arms); inconclusive whatever the test says: {failed}"
            ),
        )  # fmt: skip
    return out
