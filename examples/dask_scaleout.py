"""Scale out: run the agents' trials on a Dask cluster, keep the analysis local.

Run from the repository root (needs ``pip install 'ablation[dask]'``)::

    python examples/dask_scaleout.py

:func:`ablation.run.scaleout.dask_executor` yields a :class:`concurrent.futures.Executor` backed by
a Dask cluster (here a ``LocalCluster`` with two worker processes; pass
``scheduler="tcp://host:8786"`` for a real one). The engine sends every sync agent call there;
verdicts, the store and the report stay in this process. The report is the same as a local
run's, apart from measured times.

The agents are defined in this script, so Dask ships them to the workers by value. Each call
checks that it runs inside a Dask worker (and raises otherwise, which would be a recorded
error), so a report without errors shows that every trial really ran on the cluster.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ablation import CampaignConfig, load_suite, run_ablation_campaign
from ablation.run.scaleout import dask_executor

ROOT = Path(__file__).resolve().parent.parent
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def _evaluate(expression: str, *, precedence: bool) -> float:
    values: list[float] = []
    ops: list[str] = []

    def reduce() -> None:
        op, right, left = ops.pop(), values.pop(), values.pop()
        values.append(
            left + right if op == "+" else left - right if op == "-" else
            left * right if op == "*" else left / right
        )

    for token in expression.split():
        if token in _PRECEDENCE:
            while ops and (not precedence or _PRECEDENCE[ops[-1]] >= _PRECEDENCE[token]):
                reduce()
            ops.append(token)
        else:
            values.append(float(token))
    while ops:
        reduce()
    value = values[0]
    return int(value) if value.is_integer() else value


def _require_worker() -> None:
    """Raise ``ValueError`` unless called inside a Dask worker."""
    from distributed import get_worker

    get_worker()


def baseline(task: dict) -> float:
    """Left-to-right evaluation (ignores precedence), run on a Dask worker."""
    _require_worker()
    time.sleep(0.01)  # stands in for a model call
    return _evaluate(task["expression"], precedence=False)


def candidate(task: dict) -> float:
    """Precedence-aware evaluation, run on a Dask worker."""
    _require_worker()
    time.sleep(0.01)
    return _evaluate(task["expression"], precedence=True)


def main() -> int:
    """Run the arithmetic suite on a two-worker local cluster."""
    tasks = load_suite(ROOT / "tasks" / "arithmetic.py")
    # as many calls in flight as the cluster has worker threads: a queued call waits on its clock
    config = CampaignConfig(seed=5, concurrency=2, n_resamples=2000)
    started = time.perf_counter()
    with dask_executor(local_workers=2) as executor:
        report = run_ablation_campaign(baseline, candidate, tasks, config=config, executor=executor)
    elapsed = time.perf_counter() - started
    errors = report.baseline.errors + report.candidate.errors
    trials = report.baseline.n_trials + report.candidate.n_trials
    print(f"{trials} trials ran on Dask workers in {elapsed:.1f} s (cluster start included); "
          f"{errors} errors")
    print(f"pass rate {report.baseline.pass_rate:.1%} -> {report.candidate.pass_rate:.1%}; "
          f"{report.table.regressions} regressions, {report.table.improvements} improvements; "
          f"exact McNemar p = {report.mcnemar.pvalue:.3g}")
    print(f"regressions: {', '.join(report.regressions) or 'none'}")
    print(f"verdict: {report.verdict}")
    for group in report.errors.groups if report.errors else ():  # none expected: say which, and why
        print(f"errors: {group.count} in {group.arm} at {group.stage}, {group.error_type}, tasks "
              f"{', '.join(group.task_ids)}: {group.example}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
