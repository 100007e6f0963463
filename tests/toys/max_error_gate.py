"""A toy release gate: the candidate's share of errored trials must not exceed a limit.

Register it with one line: ``register_gate(MaxErrorRate())``; configure it through the Python
API with ``GatePolicy(custom={"max error rate": 0.05})``.
"""

from __future__ import annotations

from ablation.config import GatePolicy
from ablation.report import AblationReport, GateResult


class MaxErrorRate:
    """Fails when the candidate's errors / trials is above ``policy.custom["max error rate"]``."""

    name = "max error rate"
    fail_if_significant = False
    holm_family: str | None = None

    def applies(self, policy: GatePolicy, report: AblationReport) -> bool:
        return self.name in policy.custom

    def judge(self, policy: GatePolicy, report: AblationReport, alpha: float) -> list[GateResult]:
        limit = float(policy.custom[self.name])
        arm = report.candidate
        rate = arm.errors / arm.n_trials if arm.n_trials else 0.0
        status = "fail" if rate > limit else "pass"
        evidence = f"candidate error rate {arm.errors}/{arm.n_trials} = {rate:.3g} vs limit {limit:g}"
        return [GateResult(name=self.name, status=status, evidence=evidence)]
