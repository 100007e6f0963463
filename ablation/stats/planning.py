"""Planning: sample size and minimum detectable effect for paired comparisons.

Connor (1987, *Biometrics* 43:207) for paired binary outcomes:
``n = (z_a·√ψ + z_b·√(ψ − δ²))² / δ²`` with ψ = p10 + p01 the discordant probability, δ = p01 − p10
(``|δ| ≤ ψ``), ``z_a = z_{1−α/2}`` two-sided (``z_{1−α}`` one-sided) and ``z_b = z_{power}``.
Report the minimum detectable effect after a run, not post-hoc "observed power". The exact
power, sample size and MDE of the exact McNemar test are in :mod:`ablation.stats.power`.
"""

from __future__ import annotations

import math
from typing import Any

from ablation.stats import _dist
from ablation.stats._common import as_count, check_alternative, check_level
from ablation.stats._connor import connor_mde, normal_z
from ablation.stats._lazy import LazyModule
from ablation.stats._results import SampleSizeResult
from ablation.stats.power import (
    EXACT_POWER_MAX_N,
    exact_mcnemar_power,
    exact_sample_size_paired,
)

_st: Any = LazyModule("scipy.stats")

__all__ = [
    "EXACT_SEARCH_LIMIT",
    "minimum_detectable_effect",
    "noninferiority_design_text",
    "sample_size_paired",
]

EXACT_SEARCH_LIMIT = 100_000
"""Largest Connor n for which :func:`sample_size_paired` also searches the exact-test n."""


def sample_size_paired(
    psi: float,
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
) -> SampleSizeResult:
    """Number of paired tasks needed to detect ``δ`` with McNemar's test (Connor 1987).

    Reference values: ψ = 0.5, δ = 0.4 → 22.01 → 23; ψ = 0.10, δ = 0.03 → 870.

    Connor's formula is a normal approximation; the test the framework runs is the exact
    conditional McNemar test, which is conservative. The result therefore also carries the exact
    power of that test at Connor's n (ψ = 0.10, δ = 0.03: 0.776 at 870) and the smallest n at which
    the exact test reaches the target power (920 there), both by exact enumeration
    (:mod:`ablation.stats.power`). For one-sided tests the exact figures use δ in the direction of
    the alternative. ``n_exact_test`` is left ``None`` when Connor's n exceeds
    ``EXACT_SEARCH_LIMIT`` (100 000): the exhaustive search costs ``O(n√n)``; ``exact_power`` is
    left ``None`` when it exceeds :data:`ablation.stats.power.EXACT_POWER_MAX_N` (10⁷ pairs, the
    limit of :func:`ablation.stats.exact_mcnemar_power`), and ``method`` then says so. Any valid
    ψ and δ give a result, however large n.

    Args:
        psi: Expected discordant probability ``ψ`` in ``(0, 1]`` (from a pilot or history).
        delta: Target difference ``δ`` (sign ignored), ``0 < |δ| ≤ ψ``.
        alpha: Significance level.
        power: Target power.
        alternative: ``"two-sided"`` (default) or one-sided (``"less"``/``"greater"``).

    Returns:
        A :class:`SampleSizeResult` with ``n = ceil(n_exact)``.

    Raises:
        ValueError: When ``δ == 0``, ``|δ| > ψ`` or ψ is outside ``(0, 1]``.
    """
    a = check_level(alpha, "alpha")
    pw = check_level(power, "power")
    check_alternative(alternative)
    ps = float(psi)
    dl = float(delta)
    if not (math.isfinite(ps) and 0.0 < ps <= 1.0):
        raise ValueError(f"psi (discordant probability) must be in (0, 1], got {psi!r}")
    if not math.isfinite(dl) or dl == 0.0:
        raise ValueError("delta must be a non-zero difference in pass rates")
    if abs(dl) > ps:
        raise ValueError(
            f"|delta| ({abs(dl):g}) cannot exceed psi ({ps:g}): the difference is at most the "
            "discordant probability"
        )
    za = normal_z(a, alternative)
    zb = float(_dist.ndtri(pw))
    n_exact = (za * math.sqrt(ps) + zb * math.sqrt(max(ps - dl * dl, 0.0))) ** 2 / (dl * dl)
    n = max(1, math.ceil(n_exact - 1e-9))
    signed = -abs(dl) if alternative == "less" else abs(dl)
    method = f"Connor (1987) paired-binary sample size ({alternative})"
    exact_power = None
    if n <= EXACT_POWER_MAX_N:
        exact_power = exact_mcnemar_power(n, ps, signed, alpha=a, alternative=alternative)
    else:
        method += f"; exact power not computed above {EXACT_POWER_MAX_N} pairs"
    n_test = None
    if n <= EXACT_SEARCH_LIMIT:
        try:
            n_test = exact_sample_size_paired(
                ps, signed, alpha=a, power=pw, alternative=alternative, max_n=4 * n + 1000
            )
        except ValueError:  # not reached within 4n + 1000 pairs: leave it unknown
            n_test = None
    return SampleSizeResult(
        n,
        float(n_exact),
        ps,
        dl,
        a,
        pw,
        method,
        exact_power,
        n_test,
    )


def minimum_detectable_effect(
    n: int,
    *,
    psi: float | None = None,
    sd: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
) -> float:
    """Smallest effect detectable with ``n`` pairs at the given ``alpha`` and ``power``.

    Binary (``psi`` given): solves Connor's equation ``√n·δ = z_a√ψ + z_b√(ψ − δ²)`` for δ
    (n = 500, ψ = 0.10 → 0.0395). If even ``δ = ψ`` is not detectable, returns ``inf``.
    Continuous (``sd`` = SD of the per-task differences): ``(z_a + z_b)·sd/√n``.

    Args:
        n: Number of pairs (tasks), ≥ 1.
        psi: Discordant probability (binary outcome).
        sd: Standard deviation of per-task differences (continuous outcome).
        alpha: Significance level.
        power: Target power.
        alternative: ``"two-sided"`` (default) or one-sided.

    Returns:
        The MDE in the units of the outcome (pass-rate units for binary).

    Raises:
        ValueError: Unless exactly one of ``psi`` and ``sd`` is given, or on invalid values.
    """
    nn = as_count(n, "n")
    if nn < 1:
        raise ValueError("n must be at least 1")
    a = check_level(alpha, "alpha")
    pw = check_level(power, "power")
    check_alternative(alternative)
    if (psi is None) == (sd is None):
        raise ValueError("give exactly one of psi (binary outcome) or sd (continuous outcome)")
    za = normal_z(a, alternative)
    zb = float(_dist.ndtri(pw))
    if sd is not None:
        s = float(sd)
        if not (math.isfinite(s) and s >= 0.0):
            raise ValueError(f"sd must be finite and >= 0, got {sd!r}")
        return (za + zb) * s / math.sqrt(nn)
    assert psi is not None
    ps = float(psi)
    if not (math.isfinite(ps) and 0.0 < ps <= 1.0):
        raise ValueError(f"psi (discordant probability) must be in (0, 1], got {psi!r}")
    return connor_mde(nn, ps, za, zb)


def noninferiority_design_text(
    psi: float, delta: float, margin: float, alpha: float = 0.05, power: float = 0.8
) -> str:
    """The fixed-n non-inferiority design, in words: the question a sequential PASS answers.

    Normal approximation for the paired difference with the unrestricted variance:
    ``n = (z_{1−α} + z_power)²·(ψ − δ²)/(δ + M)²`` for a one-sided test at ``alpha`` of
    H0 ``Δ ≤ −M`` when the true uplift is ``δ > −M``.
    """
    if delta <= -margin:
        return (f"fixed-n non-inferiority design (margin {margin:g}): none, the true uplift "
                f"{delta:+g} is not above -margin, so non-inferiority is not the expected answer")
    z = float(_dist.ndtri(1 - alpha)) + float(_dist.ndtri(power))
    n = math.ceil(z * z * (psi - delta * delta) / (delta + margin) ** 2)
    return (f"fixed-n non-inferiority design (margin {margin:g}, the question a sequential PASS "
            f"answers): {n} tasks, {2 * n} agent calls for {100 * power:g}% power "
            f"(normal approximation)")
