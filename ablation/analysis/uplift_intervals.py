"""The registry of interval methods for the pass-rate uplift, and the one headline chooser.

Each method is a function of the paired data (:class:`UpliftInputs`) that returns an
:class:`~ablation.report.Interval` or ``None`` when it does not apply (the score intervals need one
run per task; the t and betting intervals need repeated runs). :func:`uplift_intervals` runs every
registered method and returns the list the report carries as ``uplift.intervals``;
:func:`choose_headline` picks the one that becomes ``uplift.ci``, and is the only place the
headline rule is applied: every renderer reads ``uplift.ci`` (or ``uplift.headline``, its name).

Adding a method is one function plus one registration line::

    register_interval_method("agresti-min", my_interval)

Assumptions: a method is deterministic given the data and the campaign's seed (it draws random
numbers only from :func:`ablation.analysis.seeding.stream`); the list keeps registration order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ablation import stats
from ablation.analysis import breakdowns
from ablation.analysis.pairing import PairedData
from ablation.analysis.seeding import stream
from ablation.config import CampaignConfig
from ablation.report import Interval, NamedInterval, PairTable

__all__ = [
    "INTERVAL_METHODS",
    "IntervalMethod",
    "UpliftInputs",
    "choose_headline",
    "register_interval_method",
    "uplift_intervals",
]


class UpliftInputs(NamedTuple):
    """What an interval method may read: the paired data, its 2x2 table and per-task outcomes.

    ``baseline_fractions`` and ``candidate_fractions`` are each arm's per-task pass fractions (the
    0/1 outcomes themselves with one run per task).
    """

    data: PairedData
    table: PairTable
    baseline_fractions: np.ndarray
    candidate_fractions: np.ndarray
    config: CampaignConfig

    @property
    def cells(self) -> tuple[int, int, int, int]:
        t = self.table
        return (t.both_pass, t.regressions, t.improvements, t.both_fail)

    @property
    def level(self) -> float:
        return self.config.confidence_level


class IntervalMethod(NamedTuple):
    """One registered interval method.

    Attributes:
        name: Its key in ``uplift.intervals`` (``"tango"``, ``"bootstrap"``, ...).
        compute: ``compute(inputs) -> Interval | None`` (``None``: does not apply to these data).
        secondary: Shown as a labelled secondary figure (the bootstrap).
    """

    name: str
    compute: Callable[[UpliftInputs], Interval | None]
    secondary: bool = False


#: Name -> method, in the order the report lists the intervals.
INTERVAL_METHODS: dict[str, IntervalMethod] = {}


def register_interval_method(
    name: str, compute: Callable[[UpliftInputs], Interval | None], *, secondary: bool = False
) -> None:
    """Register ``compute`` as the interval method ``name`` (replacing one of the same name)."""
    INTERVAL_METHODS[name] = IntervalMethod(name, compute, secondary)


def _one_run(compute: Callable[..., Any]) -> Callable[[UpliftInputs], Interval | None]:
    """An interval method over the 2x2 table, which applies with one run per task only:
    ``compute(n11, b, c, n22, confidence_level=...)`` gives a :class:`stats` result."""

    def method(x: UpliftInputs) -> Interval | None:
        if x.data.runs != 1:
            return None
        return breakdowns.interval(compute(*x.cells, confidence_level=x.level), x.level)

    return method


# ``stats`` loads its functions on first use: they are looked up when a method runs, not here.
_tango = _one_run(lambda *t, **k: stats.paired_difference_interval(*t, method="tango", **k))
#: Tango at a wider level below 30 discordant pairs (:func:`stats.headline_difference_interval`).
_tango_sparse = _one_run(lambda *t, **k: stats.headline_difference_interval(*t, **k))
_newcombe = _one_run(lambda *t, **k: stats.paired_difference_interval(*t, method="newcombe", **k))


def _paired_t(x: UpliftInputs) -> Interval | None:
    if x.data.runs == 1:
        return None
    t = stats.paired_t_test(x.baseline_fractions, x.candidate_fractions, confidence_level=x.level)
    return breakdowns.interval(t, x.level)


def _betting(x: UpliftInputs) -> Interval | None:
    if x.data.runs == 1 or x.data.has_families:  # it assumes independent tasks
        return None
    return breakdowns.betting_interval(x.candidate_fractions - x.baseline_fractions, x.level, x.config.seed)


def _bootstrap(x: UpliftInputs) -> Interval:
    """The seeded bootstrap: over families, the 2x2 cells, or tasks' runs."""
    data, config = x.data, x.config
    rng = stream(config.seed, "uplift")
    args: dict[str, Any] = {"n_resamples": config.n_resamples, "confidence_level": x.level, "rng": rng}
    if data.has_families:
        boot = stats.cluster_bootstrap(
            x.baseline_fractions,
            x.candidate_fractions,
            clusters=np.asarray(data.families),
            weights=data.baseline.runs,
            **args,
        )
    elif data.runs == 1:
        boot = stats.binary_uplift_bootstrap(*x.cells, **args)
    elif np.all(data.baseline.runs == data.runs) and np.all(data.candidate.runs == data.runs):
        boot = stats.repeated_binary_bootstrap(
            data.baseline.passes, data.candidate.passes, data.runs, **args
        )
    else:
        boot = stats.cluster_bootstrap(x.baseline_fractions, x.candidate_fractions, **args)
    return breakdowns.interval(boot, x.level)


register_interval_method("tango", _tango)
register_interval_method("tango_sparse", _tango_sparse)
register_interval_method("newcombe", _newcombe)
register_interval_method("t", _paired_t, secondary=True)  # loses its level when few tasks change
register_interval_method("betting", _betting)
register_interval_method("bootstrap", _bootstrap, secondary=True)


def uplift_intervals(inputs: UpliftInputs) -> list[NamedInterval]:
    """Every registered method's interval that applies to ``inputs``, in registration order."""
    out: list[NamedInterval] = []
    for m in INTERVAL_METHODS.values():
        iv = m.compute(inputs)
        if iv is not None:
            out.append(NamedInterval(name=m.name, secondary=m.secondary, **iv.model_dump()))
    return out


def choose_headline(
    intervals: Sequence[NamedInterval], *, runs: int, has_families: bool
) -> NamedInterval:
    """The headline interval of the uplift: the one rule, used by the analysis for every report.

    The family bootstrap when tasks share families (the other intervals assume independent
    tasks); with one run per task the Tango score interval with the sparse-table rule
    (``tango_sparse``: computed at a wider level below 30 discordant pairs, where Tango alone
    covers down to 92.6%; see STATISTICS.md); with repeated
    runs the fixed-n betting interval (the t interval is [0, 0] when no task changes and
    under-covers when most tasks are deterministic). When the preferred interval is absent the
    bootstrap stands in.

    Raises:
        ValueError: when ``intervals`` holds neither the preferred interval nor the bootstrap.
    """
    by_name = {iv.name: iv for iv in intervals}
    preferred = "bootstrap" if has_families else ("tango_sparse" if runs == 1 else "betting")
    chosen = by_name.get(preferred) or by_name.get("bootstrap")
    if chosen is None:
        raise ValueError(f"no {preferred!r} or 'bootstrap' interval among {sorted(by_name)}")
    return chosen
