"""Sequential non-inferiority makes the population claim of the fixed-n test.

The confidence sequence behind the non-inferior stop treats tasks as i.i.d. draws by default;
the suite-only claim (sampling without replacement, which shrinks to the observed uplift at the
end of the suite) is the named opt-in ``SequentialPolicy(suite_claim=True)``.
"""

from __future__ import annotations

import math

from ablation import CampaignConfig, GatePolicy, SequentialPolicy, compare_results, stats
from ablation.analysis.sequential import sequential_order


def _suite() -> tuple[list[dict], list[dict]]:
    """200 tasks, b = 20 regressions and c = 14 improvements spread over the seeded order."""
    ids = [f"t{i:03d}" for i in range(200)]
    order = sequential_order(ids, 0)
    reg, imp = set(order[0::10][:20]), set(order[5::10][:14])
    assert not reg & imp
    both = {t for i, t in enumerate(ids) if i % 2 == 0} - reg - imp
    base = [{"task_id": t, "passed": t in reg or t in both} for t in ids]
    cand = [{"task_id": t, "passed": t in imp or t in both} for t in ids]
    return base, cand


def _config(sequential: SequentialPolicy | None) -> CampaignConfig:
    return CampaignConfig(
        n_resamples=200, sequential=sequential, gates=GatePolicy(noninferiority_margin=0.05)
    )


def _ni(report):
    return next(g for g in report.gates if g.name == "non-inferiority")


def test_sequential_ni_does_not_pass_where_the_fixed_n_test_is_inconclusive() -> None:
    base, cand = _suite()
    fixed = compare_results(base, cand, config=_config(None))
    assert (fixed.table.regressions, fixed.table.improvements) == (20, 14)
    assert _ni(fixed).status == "inconclusive"
    seq = compare_results(base, cand, config=_config(SequentialPolicy()))
    assert seq.sequential is not None and seq.sequential.gate != "non_inferior"
    assert _ni(seq).status != "pass" and seq.verdict == "fail"
    assert "population claim" in seq.sequential.interval.method
    # The suite-only claim is an explicit opt-in, named in the interval's method.
    suite = compare_results(base, cand, config=_config(SequentialPolicy(suite_claim=True)))
    assert suite.sequential is not None and "suite-only claim" in suite.sequential.interval.method
    assert suite.sequential.gate == "non_inferior" and suite.sequential.pairs > 190


def test_false_non_inferior_rate_at_the_margin_holds_alpha() -> None:
    # True uplift exactly -M (N = 200, psi = 0.2, M = 0.05): the suite-only sequence passed 46%.
    n_sim = 2000
    sim = stats.simulate_sequential(0.2, -0.05, n_max=200, margin=0.05, n_sim=n_sim, rng=3)
    rate = dict(sim.rates)["non_inferior"]
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n_sim)
