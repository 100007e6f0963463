"""Repeated runs: stochastic (but seeded) agents, three runs per task, flaky tasks named.

Run from the repository root::

    python examples/repeated_runs.py

Real agents sample: the same task can pass on one run and fail on the next. With ``runs=3``
every task runs three times per arm and the *task* stays the unit of analysis: per-task pass
fractions, a paired t interval and a cluster bootstrap over tasks, the intra-class correlation
and design effect of each arm. Tasks with mixed outcomes inside an arm are listed as flaky,
apart from the stable regressions and improvements.

The two agents below draw their successes from a seeded generator keyed by (agent, task,
call number), so the script prints the same report on every run even though trials run
concurrently.
"""

from __future__ import annotations

import random
import sys
import threading
from collections import Counter
from typing import Any

from ablation import AblationTask, CampaignConfig, run_ablation_campaign

# Twenty ticket-routing tasks: route a message to the right queue.
_MESSAGES = [
    ("billing", "I was charged twice this month."),
    ("billing", "Can I get an invoice with our VAT number?"),
    ("billing", "Why did my card get declined?"),
    ("billing", "Please switch us to annual billing."),
    ("billing", "The receipt shows the wrong company name."),
    ("technical", "The app crashes when I open settings."),
    ("technical", "Sync has been stuck at 99 percent since yesterday."),
    ("technical", "I get error 502 on the dashboard."),
    ("technical", "Exports time out for large projects."),
    ("technical", "The API returns 401 with a fresh token."),
    ("account", "How do I add a second admin?"),
    ("account", "I want to change the account owner."),
    ("account", "Please close my account."),
    ("account", "Two-factor codes never arrive."),
    ("account", "Can I merge two workspaces?"),
    ("sales", "Do you offer discounts for nonprofits?"),
    ("sales", "We need a quote for 200 seats."),
    ("sales", "Is there an on-premise edition?"),
    ("sales", "Can we get a trial extension for procurement?"),
    ("sales", "Who do I talk to about a reseller deal?"),
]

tasks = [
    AblationTask(
        task_id=f"{queue}-{i:02d}",
        category=queue,
        input_data={"message": message},
        expected_output=queue,
    )
    for i, (queue, message) in enumerate(_MESSAGES)
]

_QUEUE = {message: queue for queue, message in _MESSAGES}


class SampledRouter:
    """A router that answers correctly with a per-task probability, reproducibly.

    Args:
        name: Agent name (also part of the seed).
        accuracy: Probability of the right queue, per queue; unknown queues get 0.5.
        seed: Base seed.
        blind_spots: Messages the router always gets wrong (a systematic error, not noise).
    """

    def __init__(
        self,
        name: str,
        accuracy: dict[str, float],
        seed: int,
        blind_spots: frozenset[str] = frozenset(),
    ) -> None:
        self.name = name
        self.accuracy = accuracy
        self.seed = seed
        self.blind_spots = blind_spots
        self._calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, task: dict[str, Any]) -> str:
        """Route one message; the k-th call for a message always draws the same number."""
        message = task["message"]
        with self._lock:
            k = self._calls[message]
            self._calls[message] += 1
        rng = random.Random(f"{self.seed}:{self.name}:{message}:{k}")
        right = _QUEUE[message]
        if message not in self.blind_spots and rng.random() < self.accuracy.get(right, 0.5):
            return right
        return rng.choice(sorted(set(_QUEUE.values()) - {right}))


def main() -> int:
    """Run three runs per arm and print the repeated-runs analysis."""
    baseline = SampledRouter(
        "router-v1",
        {"billing": 0.95, "technical": 0.7, "account": 0.95, "sales": 0.95},
        seed=11,
        blind_spots=frozenset({"The API returns 401 with a fresh token."}),
    )
    candidate = SampledRouter(
        "router-v2",
        {"billing": 0.95, "technical": 0.97, "account": 0.8, "sales": 0.95},
        seed=11,
        blind_spots=frozenset({"Two-factor codes never arrive."}),
    )
    config = CampaignConfig(runs=3, seed=3, n_resamples=2000, concurrency=4)
    report = run_ablation_campaign(baseline, candidate, tasks, config=config)
    rep = report.repeated
    assert rep is not None
    print(f"{report.n_tasks} tasks x {rep.runs} runs per arm")
    print(f"pass rate: baseline {report.baseline.pass_rate:.1%}, "
          f"candidate {report.candidate.pass_rate:.1%}")
    print(f"mean per-task difference {rep.mean_difference:+.3f}, paired t "
          f"{rep.t_ci.confidence_level:.0%} CI [{rep.t_ci.low:+.3f}, {rep.t_ci.high:+.3f}], "
          f"p = {rep.t_pvalue:.3g}")
    if rep.cluster_ci is not None:
        print(f"cluster bootstrap CI [{rep.cluster_ci.low:+.3f}, {rep.cluster_ci.high:+.3f}]")
    for arm, icc, deff in (
        ("baseline", rep.icc_baseline, rep.design_effect_baseline),
        ("candidate", rep.icc_candidate, rep.design_effect_candidate),
    ):
        if icc is not None and deff is not None:
            print(f"{arm}: intra-class correlation {icc:.2f}, design effect {deff:.2f}")
    print(f"stable regressions: {', '.join(rep.stable_regressions) or 'none'}")
    print(f"stable improvements: {', '.join(rep.stable_improvements) or 'none'}")
    print(f"flaky tasks ({len(report.flaky)}):")
    for item in report.flaky:
        print(f"  {item.task_id}: baseline {item.baseline_passes}/{item.baseline_runs}, "
              f"candidate {item.candidate_passes}/{item.candidate_runs} "
              f"(flaky in {', '.join(item.flaky_in)})")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
