"""Connor's (1987) normal approximation for the paired binary design: its MDE and critical value.

:func:`ablation.stats.minimum_detectable_effect` reports it; the exact MDE search
(:func:`ablation.stats.power.exact_minimum_detectable_effect`) starts next to it.

Reference: Connor, R. J. (1987). Sample size for testing differences in proportions for the
paired-sample design. *Biometrics* 43(1), 207-211.
"""

from __future__ import annotations

import math

from ablation.stats import _dist
from ablation.stats._roots import brentq

__all__ = ["connor_mde", "normal_z"]


def normal_z(alpha: float, alternative: str) -> float:
    """The normal critical value of a test at level ``alpha`` (``α/2`` per tail when two-sided)."""
    a = alpha / 2.0 if alternative == "two-sided" else alpha
    return -float(_dist.ndtri(a))


def connor_mde(n: int, psi: float, z_alpha: float, z_beta: float) -> float:
    """Connor's (1987) normal MDE: the root of ``√n·δ = z_α·√ψ + z_β·√(ψ − δ²)`` on ``[0, ψ]``.

    ``0`` when even ``δ = 0`` satisfies it, ``inf`` when ``δ = ψ`` does not. The formula of
    :func:`ablation.stats.minimum_detectable_effect` for a binary outcome, and the starting
    bracket of :func:`ablation.stats.power.exact_minimum_detectable_effect`.
    """
    rn = math.sqrt(n)

    def f(d: float) -> float:
        return rn * d - z_alpha * math.sqrt(psi) - z_beta * math.sqrt(max(psi - d * d, 0.0))

    if f(0.0) >= 0.0:
        return 0.0
    if f(psi) < 0.0:
        return math.inf
    return float(brentq(f, 0.0, psi, xtol=1e-15, rtol=1e-14, maxiter=500))
