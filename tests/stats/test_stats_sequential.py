"""Sequential monitoring: e-process, confidence sequence, stopping rules and their validity.

Reference values come from exact integer arithmetic (``math.comb``), quadrature or closed forms,
never from the code under test. The Monte Carlo validity checks are seeded; an observed error rate
passes when it is not significantly above the nominal level (exact binomial tail > 0.001), which
the conservative procedures here clear by a wide margin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special
from scipy import stats as sst

from ablation.stats import (
    SequentialMonitor,
    SequentialRegressionTest,
    UpliftConfidenceSequence,
    mcnemar,
    regression_eprocess,
    sequential_decisions,
    simulate_sequential,
    uplift_confidence_sequence,
)

ALPHA = 0.05


def exact_log_e(b: int, c: int) -> float:
    """log E for the uniform prior on [1/2, 1]: Σ_{j≤b} C(n+1, j) / ((n+1)·C(n, b)), in integers."""
    n = b + c
    if b <= c:
        num = sum(math.comb(n + 1, j) for j in range(b + 1))
    else:  # Σ_{j≤b} C(n+1, j) = 2^(n+1) − Σ_{i≤c} C(n+1, i)
        num = 2 ** (n + 1) - sum(math.comb(n + 1, i) for i in range(c + 1))
    return math.log(num) - math.log((n + 1) * math.comb(n, b))


def not_above(rate: float, n: int, level: float) -> bool:
    """The observed rate is not significantly above ``level`` (exact binomial, one-sided 0.001)."""
    k = round(rate * n)
    return bool(sst.binom.sf(k - 1, n, level) > 0.001)


def null_campaigns(psi: float, n_sim: int, n: int, seed: int) -> np.ndarray:
    """Pairs with P(regression | discordant) = 1/2 (Δ = 0), as -1/0/+1."""
    u = np.random.default_rng(seed).random((n_sim, n))
    return np.where(u < psi / 2, -1.0, np.where(u < psi, 1.0, 0.0))


# --- e-process: exact values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c"),
    [
        (0, 0),
        (1, 0),
        (0, 1),
        (5, 3),
        (30, 10),
        (10, 30),
        (17, 17),
        (0, 2000),
        (2000, 0),
        (400, 1600),
        (1200, 800),
        (60, 0),
    ],
)
def test_eprocess_uniform_prior_equals_exact_integer_formula(b: int, c: int) -> None:
    res = regression_eprocess(b, c)
    log_e = exact_log_e(b, c)
    assert res.log_e_value == pytest.approx(log_e, rel=1e-12, abs=1e-11)
    assert res.e_value == (pytest.approx(math.exp(log_e), rel=1e-10) if log_e < 700 else math.inf)


def test_eprocess_all_regressions_closed_form() -> None:
    # b regressions, no improvement: E = (2^(b+1) − 1)/(b + 1)
    for b in range(1, 40):
        assert regression_eprocess(b, 0).e_value == pytest.approx((2 ** (b + 1) - 1) / (b + 1))


@pytest.mark.parametrize(
    ("b", "c"),
    [(0, 1_000_000), (10, 999_990), (999_990, 10), (1_000_000, 0)],
)
def test_eprocess_exact_at_a_million_pairs(b: int, c: int) -> None:
    assert regression_eprocess(b, c).log_e_value == pytest.approx(
        exact_log_e(b, c), rel=1e-12, abs=1e-9
    )


@pytest.mark.parametrize("b", [480_000, 499_000, 500_500, 520_000])
def test_eprocess_balanced_million_matches_log_sum_exp(b: int) -> None:
    # independent route: log-sum-exp of log C(n+1, j), j ≤ b, from gammaln (no incomplete beta)
    n = 1_000_000
    j = np.arange(b + 1)
    log_comb = special.gammaln(n + 2) - special.gammaln(j + 1) - special.gammaln(n + 2 - j)
    log_den = math.log(n + 1) + special.gammaln(n + 1) - special.gammaln(b + 1)
    expected = special.logsumexp(log_comb) - (log_den - special.gammaln(n - b + 1))
    assert regression_eprocess(b, n - b).log_e_value == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize("prior", [(2.0, 2.0), (3.0, 1.5), (0.7, 0.9)])
@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 1), (12, 4), (5, 20), (25, 25)])
def test_eprocess_general_prior_equals_quadrature(
    prior: tuple[float, float], b: int, c: int
) -> None:
    a0, a1 = prior
    norm = sst.beta.sf(0.5, a0, a1)

    def integrand(p: float) -> float:
        return math.exp(b * math.log(2 * p) + c * math.log(2 * (1 - p))) * sst.beta.pdf(p, a0, a1)

    value, _ = integrate.quad(integrand, 0.5, 1.0, epsabs=0.0, epsrel=1e-12, limit=200)
    assert regression_eprocess(b, c, prior=prior).e_value == pytest.approx(value / norm, rel=1e-8)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (4, 9), (30, 11), (300, 250)])
def test_two_sided_symmetric_prior_is_the_untruncated_mixture(b: int, c: int) -> None:
    # ½(E_less + E_greater) = 2^n B(a+b, a+c)/B(a, a) for a symmetric Beta(a, a)
    a = 2.5
    expected = (b + c) * math.log(2) + special.betaln(a + b, a + c) - special.betaln(a, a)
    got = regression_eprocess(b, c, prior=(a, a), alternative="two-sided").log_e_value
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    mirror = regression_eprocess(c, b, prior=(a, a), alternative="greater")
    assert mirror.log_e_value == regression_eprocess(b, c, prior=(a, a)).log_e_value


counts = st.integers(0, 1_000_000)


@settings(max_examples=80, deadline=None)  # the values themselves: exact integer sums above
@given(b=counts, c=counts)
def test_eprocess_nonnegative_and_monotone(b: int, c: int) -> None:
    e = regression_eprocess(b, c)
    assert e.e_value >= 0.0 and math.isfinite(e.log_e_value)
    assert regression_eprocess(b + 1, c).log_e_value >= e.log_e_value
    assert regression_eprocess(b, c + 1).log_e_value <= e.log_e_value


def test_eprocess_rejects_invalid_input() -> None:
    for bad in [dict(b=-1, c=0), dict(b=1.5, c=0)]:
        with pytest.raises(ValueError):
            regression_eprocess(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        regression_eprocess(1, 1, prior=(0.0, 1.0))
    with pytest.raises(ValueError):
        regression_eprocess(1, 1, alternative="worse")
    state = SequentialRegressionTest()
    for outcome in [1.5, -2, math.nan]:
        with pytest.raises(ValueError):
            state.update(outcome)
    with pytest.raises(TypeError):
        state.update(True)


def test_incremental_test_equals_one_shot_and_replay() -> None:
    rng = np.random.default_rng(11)
    diffs = rng.choice([-1.0, -1 / 3, 0.0, 0.0, 1 / 3, 1.0], size=400)
    state = SequentialRegressionTest()
    running_max = 0.0
    for d in diffs:
        state = state.update(d)
        one_shot = regression_eprocess(state.b, state.c)
        assert state.log_e_value == one_shot.log_e_value
        running_max = max(running_max, one_shot.log_e_value)
    assert state.max_log_e_value == running_max
    assert (state.b, state.c, state.pairs) == (np.sum(diffs < 0), np.sum(diffs > 0), 400)
    assert SequentialRegressionTest.from_outcomes(diffs) == state  # bit-identical replay
    assert state.rejected(ALPHA) == (running_max >= math.log(1 / ALPHA))


# --- e-process: validity under optional stopping ------------------------------------------


@pytest.mark.parametrize("psi", [0.05, 0.2])
def test_eprocess_false_alarm_rate_under_monitoring_after_every_pair(psi: float) -> None:
    diffs = null_campaigns(psi, 4000, 500, seed=20240 + int(psi * 100))
    rate = float(np.mean(sequential_decisions(diffs).gate == "regression"))
    assert rate <= ALPHA and not_above(rate, 4000, ALPHA)


def test_peeking_at_exact_mcnemar_after_every_pair_inflates_false_alarms() -> None:
    n, n_sim = 500, 4000
    b = np.arange(n + 1)[:, None]
    c = np.arange(n + 1)[None, :]
    total = b + c
    # one-sided exact McNemar (H1: candidate worse): P(X >= b), X ~ Bin(b + c, 1/2)
    with np.errstate(invalid="ignore"):
        table = np.where(total > 0, sst.binom.sf(b - 1, np.maximum(total, 1), 0.5), 1.0)
    rng = np.random.default_rng(3)
    for bb, cc in zip(rng.integers(0, 250, 40), rng.integers(0, 250, 40), strict=True):
        ref = mcnemar(int(bb), int(cc), alternative="less").pvalue
        assert table[bb, cc] == pytest.approx(ref, rel=1e-9, abs=1e-300)
    diffs = null_campaigns(0.2, n_sim, n, seed=2025)
    cum_b = np.cumsum(diffs < 0, axis=1)
    cum_c = np.cumsum(diffs > 0, axis=1)
    peeking = float(np.mean((table[cum_b, cum_c] <= ALPHA).any(axis=1)))
    fixed_n = float(np.mean(table[cum_b[:, -1], cum_c[:, -1]] <= ALPHA))
    sequential = float(np.mean(sequential_decisions(diffs).gate == "regression"))
    assert peeking > 2 * ALPHA
    assert fixed_n <= ALPHA and not_above(fixed_n, n_sim, ALPHA)
    assert sequential <= ALPHA < peeking


# --- confidence sequence ------------------------------------------------------------------


def test_cs_incremental_equals_one_shot_pair_by_pair() -> None:
    rng = np.random.default_rng(5)
    for population in (None, 250):
        diffs = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=250, p=[0.15, 0.1, 0.5, 0.1, 0.15])
        res = uplift_confidence_sequence(diffs, population_size=population, grid_size=401)
        state = UpliftConfidenceSequence(population_size=population, grid_size=401)
        for i, d in enumerate(diffs):
            state = state.update(d)
            ci = state.interval
            assert (ci.low, ci.high) == (res.lower[i], res.upper[i])
        replay = UpliftConfidenceSequence.from_outcomes(
            diffs, population_size=population, grid_size=401
        )
        assert np.array_equal(replay.log_capital_up, state.log_capital_up)
        assert replay.interval == state.interval
        assert res.estimate[-1] == pytest.approx(diffs.mean())


def test_cs_coverage_uniform_over_time_iid() -> None:
    # three-point pairs: regression 0.175, improvement 0.125 -> Δ = −0.05 (on the grid)
    truth, n_sim = -0.05, 800
    u = np.random.default_rng(77).random((n_sim, 300))
    diffs = np.where(u < 0.175, -1.0, np.where(u < 0.3, 1.0, 0.0))
    res = uplift_confidence_sequence(diffs, grid_size=101)
    miss = float(np.mean(((res.lower > truth) | (res.upper < truth)).any(axis=1)))
    assert miss <= ALPHA and not_above(miss, n_sim, ALPHA)
    assert np.all(res.lower <= res.upper)


def test_cs_coverage_without_replacement_on_a_fixed_suite() -> None:
    # a fixed suite of 300 tasks with 3 runs per arm: differences of pass fractions
    rng = np.random.default_rng(8)
    suite = (rng.binomial(3, 0.6, 300) - rng.binomial(3, 0.55, 300)) / 3.0
    truth = math.fsum(suite) / suite.size
    n_sim = 500
    orders = np.array([rng.permutation(suite) for _ in range(n_sim)])
    res = uplift_confidence_sequence(orders, population_size=suite.size, grid_size=101)
    miss = (res.lower > truth) | (res.upper < truth)
    rate = float(np.mean(miss.any(axis=1)))
    assert rate <= ALPHA and not_above(rate, n_sim, ALPHA)
    assert not miss[:, -1].any()  # closes on the suite's uplift at n = N
    assert np.max(res.upper[:, -1] - res.lower[:, -1]) < 1e-12
    # the interval narrows towards the end: half-width at n = 0.9 N well below the i.i.d. one
    iid = uplift_confidence_sequence(orders[:50], grid_size=101)
    assert np.mean(res.upper[:50, 269] - res.lower[:50, 269]) < np.mean(
        iid.upper[:, 269] - iid.lower[:, 269]
    )


diff_values = st.one_of(
    st.sampled_from([-1.0, 0.0, 1.0]),
    st.floats(-1.0, 1.0, allow_nan=False),
)


@settings(max_examples=60, deadline=None)
@given(diffs=st.lists(diff_values, min_size=1, max_size=60), wor=st.booleans())
def test_cs_properties(diffs: list[float], wor: bool) -> None:
    n = len(diffs)
    state = UpliftConfidenceSequence(population_size=n if wor else None, grid_size=101)
    previous = state.interval
    for d in diffs:
        state = state.update(d)
        ci = state.interval
        assert -1.0 <= ci.low <= ci.high <= 1.0
        if not state.is_empty:  # the running intersection is nested
            assert previous.low <= ci.low and ci.high <= previous.high
        previous = ci
    if wor:
        truth = math.fsum(diffs) / n
        assert state.interval.contains(truth)
        assert state.interval.width <= 1e-12
        if all(float(d).is_integer() for d in diffs):
            assert state.interval.width == 0.0


def test_empty_intersection_falls_back_to_the_certain_range() -> None:
    # an adversarial order (10 improvements, then 10 regressions) of a suite with uplift 0: the
    # bets on "more improvements" exclude 0, the random-order assumption fails, and the interval
    # falls back to what the remaining tasks allow, which always holds the truth
    state = UpliftConfidenceSequence(population_size=20, grid_size=101)
    seen_empty = False
    for i, d in enumerate([1.0] * 10 + [-1.0] * 10, start=1):
        state = state.update(d)
        seen_empty |= state.is_empty
        if state.is_empty:
            remaining = 20 - i
            ci = state.interval
            assert (ci.low, ci.high) == (
                max(-1.0, (state.sum_diff - remaining) / 20),
                min(1.0, (state.sum_diff + remaining) / 20),
            )
            assert ci.contains(0.0)
    assert seen_empty
    assert (state.interval.low, state.interval.high) == (0.0, 0.0)


def test_noninferiority_decision_is_strict_at_the_margin() -> None:
    # a 10-task suite with uplift exactly −0.2: at n = N the interval is the point −0.2
    diffs = [-1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    state = UpliftConfidenceSequence.from_outcomes(diffs, population_size=10)
    assert (state.interval.low, state.interval.high) == (-0.2, -0.2)
    assert state.decision(0.2) == "inconclusive"
    assert state.decision(0.19) == "inferior"
    assert state.decision(0.21) == "non-inferior"


@pytest.mark.parametrize("psi", [0.1, 0.3])
def test_false_noninferiority_at_the_margin_iid(psi: float) -> None:
    margin, n_sim = 0.05, 4000
    u = np.random.default_rng(int(psi * 1000)).random((n_sim, 500))
    p_reg = (psi + margin) / 2  # Δ = −margin
    diffs = np.where(u < p_reg, -1.0, np.where(u < psi, 1.0, 0.0))
    res = sequential_decisions(diffs, margin=margin)
    rate = float(np.mean(res.gate == "non_inferior"))
    assert rate <= ALPHA and not_above(rate, n_sim, ALPHA)


def test_false_noninferiority_at_the_margin_without_replacement() -> None:
    # a fixed suite of 400 tasks with uplift exactly −0.05, run in random orders
    suite = np.array([-1.0] * 50 + [1.0] * 30 + [0.0] * 320)
    rng = np.random.default_rng(21)
    orders = np.array([rng.permutation(suite) for _ in range(3000)])
    res = sequential_decisions(orders, margin=0.05, population_size=400)
    rate = float(np.mean(res.gate == "non_inferior"))
    assert rate <= ALPHA and not_above(rate, 3000, ALPHA)


# --- monitor ------------------------------------------------------------------------------


def test_vectorised_decisions_equal_the_monitor_replayed() -> None:
    # 7 trajectories per configuration (each replayed pair by pair): between them they reach
    # every gate, and every configuration a regression
    rng = np.random.default_rng(9)
    configs = [
        dict(margin=0.05, population_size=200),
        dict(margin=0.02, futility_after=150),
        dict(n_candidates=3, population_size=200),
    ]
    seen: set[str] = set()
    for config in configs:
        diffs = rng.choice([-1.0, 0.0, 1.0], size=(7, 200), p=[0.18, 0.7, 0.12])
        critical = rng.random((7, 200)) < 0.004
        res = sequential_decisions(diffs, critical=critical, **config)  # type: ignore[arg-type]
        assert "regression" in res.gate.tolist()
        seen.update(res.gate.tolist())
        for row in range(7):
            monitor = SequentialMonitor(**config)  # type: ignore[arg-type]
            for d, flag in zip(diffs[row], critical[row], strict=True):
                monitor = monitor.update(d, critical=bool(flag))
                if monitor.decided:
                    break
            assert (monitor.gate or "undecided", monitor.decided_at or 200) == (
                res.gate[row],
                res.stop[row],
            )
    gates = {"regression", "critical_regression", "non_inferior", "inferior", "futility"}
    assert seen == gates | {"end_of_suite"}


def test_monitor_state_is_a_pure_function_of_the_outcomes() -> None:
    rng = np.random.default_rng(4)
    diffs = rng.choice([-1.0, 0.0, 1.0, 0.5], size=300, p=[0.2, 0.6, 0.15, 0.05])
    flags = rng.random(300) < 0.01
    config = dict(margin=0.03, population_size=300)
    live = SequentialMonitor(**config)  # type: ignore[arg-type]
    for d, flag in zip(diffs, flags, strict=True):
        live = live.update(d, critical=bool(flag))
    replayed = SequentialMonitor.replay(diffs, flags, **config)
    assert replayed.state == live.state
    assert replayed.state.pairs == 300


def test_monitor_regression_gate_and_bonferroni_split() -> None:
    # all pairs regressions: E after b pairs is (2^(b+1) − 1)/(b + 1); 1/0.05 = 20 is reached at
    # b = 7 (31.9; b = 6 gives 18.1), 1/0.0125 = 80 at b = 9 (102.3; b = 8 gives 56.8)
    for k, expected in [(1, 7), (4, 9)]:
        monitor = SequentialMonitor(n_candidates=k)
        while not monitor.decided:
            monitor = monitor.update(-1)
        assert (monitor.gate, monitor.decided_at) == ("regression", expected)
        assert monitor.alpha_per_candidate == pytest.approx(0.05 / k)
        assert "Significant regression" in monitor.reason


def test_monitor_critical_regression_decides_at_once_and_decisions_are_final() -> None:
    monitor = SequentialMonitor(margin=0.02, population_size=50)
    monitor = monitor.update(1).update(0).update(-1, critical=False).update(1, critical=True)
    assert not monitor.decided  # a critical task that improved decides nothing
    monitor = monitor.update(-1, critical=True)
    assert (monitor.gate, monitor.decided_at) == ("critical_regression", 5)
    assert "critical" in monitor.reason
    later = monitor.update(1).update(1)
    assert (later.gate, later.decided_at, later.pairs) == ("critical_regression", 5, 7)
    assert later.critical_regressions == 1


def test_monitor_futility_and_end_of_suite() -> None:
    fut = SequentialMonitor.replay([0, 1, -1] * 10, futility_after=20)
    assert (fut.gate, fut.decided_at) == ("futility", 20)
    end = SequentialMonitor.replay([0, 1, -1] * 10, population_size=30)
    assert (end.gate, end.decided_at) == ("end_of_suite", 30)
    assert "30 tasks" in end.reason
    with pytest.raises(ValueError):
        end.update(0)  # the suite has no task left
    assert SequentialMonitor.replay([0, 0, 0]).state.gate is None


def test_monitor_repeated_runs_use_sign_for_the_test_and_value_for_the_interval() -> None:
    diffs = [0.25, -1 / 3, 0.0, 2 / 3, -0.5]
    monitor = SequentialMonitor.replay(diffs)
    assert (monitor.state.regressions, monitor.state.improvements) == (2, 2)
    assert monitor.state.estimate == pytest.approx(sum(diffs) / 5)
    assert monitor.uplift is not None and monitor.uplift.alpha == pytest.approx(0.10)


def test_monitor_rejects_invalid_settings() -> None:
    for bad in [dict(alpha=0.0), dict(n_candidates=0), dict(margin=-0.1), dict(futility_after=0)]:
        with pytest.raises(ValueError):
            SequentialMonitor(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SequentialMonitor.replay([0, 1], [True])


# --- simulation ---------------------------------------------------------------------------


def test_simulation_summaries() -> None:
    sim = simulate_sequential(0.3, -0.15, n_max=300, n_sim=500, rng=1)
    again = simulate_sequential(0.3, -0.15, n_max=300, n_sim=500, rng=1)
    assert sim == again
    assert sim.expected_agent_calls == 2 * sim.expected_pairs
    assert sim.agent_calls_p90 == 2 * sim.pairs_p90
    assert sum(rate for _, rate in sim.rates) == pytest.approx(1.0)
    assert sim.rate("regression") > 0.95
    assert sim.expected_pairs < 150 <= sim.n_max and sim.pairs_p90 <= sim.n_max
    null = simulate_sequential(0.2, 0.0, n_max=300, n_sim=2000, rng=2, margin=0.05)
    assert null.rate("regression") <= ALPHA
    # Δ = 0 is inside the 5-point margin: the population claim (i.i.d. sequence, the default)
    # shows it less often than the suite-only claim, whose interval closes on the suite's uplift.
    suite = simulate_sequential(
        0.2, 0.0, n_max=300, n_sim=2000, rng=2, margin=0.05, without_replacement=True
    )
    assert 0.2 < null.rate("non_inferior") < suite.rate("non_inferior")
    assert suite.rate("non_inferior") > 0.5
    with pytest.raises(ValueError):
        simulate_sequential(0.1, 0.2, n_max=100)
