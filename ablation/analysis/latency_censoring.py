"""Latency with timeouts: a timed-out trial counts at the time limit, not as missing.

Dropping timed-out trials is informative censoring: a candidate that loops to the limit on its
slowest tasks loses exactly those tasks from the comparison and looks as fast as the baseline,
or faster, since each arm's mean is then over a different task set. Here a timed-out trial
counts at the cap (the campaign's ``timeout_s``, or the one an export's header names; without one,
as for result files whose limit neither a setting nor the files name (:func:`time_limit_of_files`),
the largest latency seen, a lower bound), so its task stays in the paired comparison with a
latency that is a lower bound of the truth; a task's latency in an arm is the mean of its
completed trials' latencies and the cap for each timed-out trial.

Assumptions: ``PairedData.failures`` lists every failed trial with its status; a trial that
failed otherwise (an error) has no latency and does not count.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ablation.analysis.metrics import compare_latency
from ablation.analysis.pairing import PairedData
from ablation.config import CampaignConfig, config_or_default
from ablation.errors import InputError
from ablation.report import LatencyComparison

__all__ = ["CensoredLatency", "censored_latency", "latency_comparison", "time_limit_of_files"]


def time_limit_of_files(
    config: CampaignConfig | None, files: Sequence[tuple[str, float | None, bool]] = ()
) -> CampaignConfig:
    """``config`` for results read from files, with the time limit their timeouts count at.

    ``files``: ``(name, time limit the file names, whether it holds a timed-out trial)`` of each
    file of the comparison; a file names its limit when it is an ``ablation`` export whose
    campaign header holds ``timeout_s``. The limit is, in this order:

    - ``config``'s ``timeout_s`` when ``config`` sets it (the user's word wins);
    - the limit the files that hold a timed-out trial all name, when they name one and the
      same: every timeout then ran exactly that long, so it counts there;
    - else unknown (``None``: a timeout counts at the largest latency seen, a lower bound): a
      file with a timeout that names no limit, or no file with a timeout at all.

    Files with timeouts under different limits are refused: a timeout at 60 s and one at 300 s
    are different events, and one cap would invent latency for the first arm (the larger limit)
    or drop some for the second (the smaller), biasing the comparison either way; the user sets
    ``timeout_s`` to choose. A file without a timeout has no say, whatever limit it names (the
    cap is applied to timed-out trials only).

    ``CampaignConfig``'s default ``timeout_s`` is the limit a campaign *runs* with; plain files
    carry no limit of their own, and counting their timeouts at that default (300 s) when they
    ran under another would invent a latency.

    Raises:
        InputError: files with timeouts name different limits, one line naming each.
    """
    config = config_or_default(config)
    if "timeout_s" in config.model_fields_set:
        return config
    timed = [(name, limit) for name, limit, timed_out in files if timed_out]
    limits = {limit for _, limit in timed}
    if len(limits) > 1 and None not in limits:
        named = ", ".join(f"{name} under {limit:g} s" for name, limit in timed)
        raise InputError(
            f"trials timed out under different time limits ({named}): a timeout means a different "
            "latency in each, so no one limit counts them all; set timeout_s (`timeout` in "
            "[tool.ablation]) to count every timeout at one"
        )
    limit = limits.pop() if len(limits) == 1 else None
    return config.model_copy(update={"timeout_s": limit})


@dataclass(frozen=True)
class CensoredLatency:
    """Both arms' per-task latencies with timeouts at the cap, and what was counted.

    Attributes:
        baseline: Per-task latency of the baseline (NaN: no completed or timed-out trial).
        candidate: Likewise for the candidate.
        timed_out_baseline: Per paired task, whether a baseline trial timed out.
        timed_out_candidate: Likewise for the candidate.
        cap: The latency a timed-out trial counts at (``None``: no timeout in either arm).
        cap_known: Whether ``cap`` is the configured time limit (else the largest latency seen).
    """

    baseline: np.ndarray
    candidate: np.ndarray
    timed_out_baseline: np.ndarray
    timed_out_candidate: np.ndarray
    cap: float | None
    cap_known: bool


def censored_latency(data: PairedData, timeout_s: float | None, on_error: str = "fail") -> CensoredLatency:
    """The paired latency columns with every timed-out trial counted at the cap.

    ``on_error``: the campaign's; under ``"exclude"`` a task's counted runs (``ArmColumns.runs``)
    already leave its failed trials out, so its completed trials are those runs, not those runs
    less its failures.
    """
    ids, n = data.task_ids, len(data.task_ids)
    fails = {"baseline": np.zeros(n), "candidate": np.zeros(n)}
    outs = {"baseline": np.zeros(n), "candidate": np.zeros(n)}
    for tid, arm, _run, status, *_ in data.failures:
        i = bisect_left(ids, tid)  # the paired ids are sorted: no index of every id is built
        if i == n or ids[i] != tid or arm not in fails:
            continue
        fails[arm][i] += 1
        outs[arm][i] += status == "timeout"
    cols = {"baseline": data.baseline, "candidate": data.candidate}
    if not (outs["baseline"].any() or outs["candidate"].any()):
        b, c = data.baseline.latency, data.candidate.latency
        return CensoredLatency(b, c, outs["baseline"] > 0, outs["candidate"] > 0, None, False)
    seen = np.concatenate([a.latency[~np.isnan(a.latency)] for a in cols.values()])
    cap_known = timeout_s is not None
    cap = float(timeout_s) if timeout_s is not None else float(seen.max(initial=0.0))
    out = {}
    for arm, col in cols.items():
        completed = col.runs if on_error == "exclude" else np.clip(col.runs - fails[arm], 0, None)
        done = completed * ~np.isnan(col.latency)
        total = np.nan_to_num(col.latency) * done + cap * outs[arm]
        count = done + outs[arm]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[arm] = np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)
    return CensoredLatency(
        out["baseline"], out["candidate"], outs["baseline"] > 0, outs["candidate"] > 0, cap,
        cap_known,
    )


def latency_comparison(config: CampaignConfig, lat: CensoredLatency) -> LatencyComparison | None:
    """The report's latency section from the censored columns (``None``: no latency in either
    arm; an arm with none is named as the reason its pairs are left out)."""
    arms = (("baseline", lat.baseline), ("candidate", lat.candidate))
    has = {arm: bool(np.any(~np.isnan(col))) for arm, col in arms}
    if not any(has.values()):
        return None
    out = compare_latency(lat.baseline, lat.candidate, config=config)
    lacking = [arm for arm, present in has.items() if not present]
    if lacking:
        out = out.model_copy(update={"left_out_reason": f"no latency in the {lacking[0]}'s results"})
    if lat.cap is None:
        return out
    how = "the time limit" if lat.cap_known else "the largest latency seen (a lower bound)"
    only_b = int(np.sum(lat.timed_out_baseline & ~lat.timed_out_candidate))
    only_c = int(np.sum(lat.timed_out_candidate & ~lat.timed_out_baseline))
    return out.model_copy(
        update={
            "timeouts_only_baseline": only_b,
            "timeouts_only_candidate": only_c,
            "censoring": f"timed-out trials counted at {lat.cap:g} s, {how}: their latencies "
            "are lower bounds",
        }
    )
