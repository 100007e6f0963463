"""A toy interval method for the uplift: the Wald interval of the paired difference.

Register it with one line: ``register_interval_method("wald", wald)``.
"""

from __future__ import annotations

from ablation import stats
from ablation.analysis.uplift_intervals import UpliftInputs
from ablation.report import Interval


def wald(x: UpliftInputs) -> Interval | None:
    """The Wald interval with one run per task (``None`` with repeated runs)."""
    if x.data.runs != 1:
        return None
    ci = stats.paired_difference_interval(*x.cells, method="wald", confidence_level=x.level)
    return Interval(
        low=float(ci.confidence_interval.low), high=float(ci.confidence_interval.high),
        confidence_level=x.level, method="toy Wald interval",
    )
