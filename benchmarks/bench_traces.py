"""Per-trial overhead of collecting OpenTelemetry spans (``CampaignConfig.traces``).

A trivial sync agent ends ``k`` spans per trial through the OpenTelemetry API (as instrumented
code does); the engine runs ``N`` tasks x 2 arms at concurrency 8, no store. Each configuration
runs in its own process (OpenTelemetry's global provider is per process), rounds alternate the
configurations, and each figure is the best round:

- ``no-sdk``: without the ``otel`` extra (``opentelemetry.sdk`` made unimportable): the API's
  spans are no-ops and nothing is collected — the reference.
- ``sdk-off``: the SDK installed and a provider set by the user (no exporter), ``traces="off"``:
  spans are recorded by the SDK but not collected.
- ``sdk-on``: the same with ``traces="auto"``: every trial under its own trace, its spans
  collected, compressed and kept on the trial.

Usage::

    python benchmarks/bench_traces.py            # N = 2000, k in 0, 10, 100, 3 rounds
    python benchmarks/bench_traces.py --quick    # N = 500, 2 rounds
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

MODES = ("no-sdk", "sdk-off", "sdk-on")

CHILD = """
import json, sys, time
mode, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if mode == "no-sdk":
    sys.modules["opentelemetry.sdk"] = None  # as if the otel extra were not installed
else:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    trace.set_tracer_provider(TracerProvider())
from opentelemetry import trace
from ablation import AblationEngine, AblationTask, CampaignConfig

tracer = trace.get_tracer("bench")

def agent(x):
    for i in range(k):
        with tracer.start_as_current_span("step", attributes={"i": i, "gen_ai.tool.name": "t"}):
            pass
    return x

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(n)]
config = CampaignConfig(concurrency=8, traces="off" if mode == "sdk-off" else "auto", timeout_s=None)
engine = AblationEngine(config, keep_results=True)
engine.run(agent, agent, tasks[:50])  # warm-up: imports, thread pool
start = time.perf_counter()
results = engine.run(agent, agent, tasks)
elapsed = time.perf_counter() - start
kept = sum(r.spans.count for r in results if r.spans is not None)
print(json.dumps({"us_per_trial": elapsed / (2 * n) * 1e6, "spans_kept": kept}))
"""


def child(mode: str, k: int, n: int) -> dict[str, float]:
    """One run of ``mode`` in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(k), str(n)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--trials", type=int, default=None, help="tasks per arm (default 2000)")
    parser.add_argument("--spans", default="0,10,100", help="spans per trial, comma-separated")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args()
    n = args.trials or (500 if args.quick else 2000)
    rounds = args.rounds or (2 if args.quick else 3)
    ks = [int(k) for k in args.spans.split(",")]
    import opentelemetry.sdk.version as sdk_version

    import ablation

    print(f"python {sys.version.split()[0]}, opentelemetry-sdk {sdk_version.__version__}, "
          f"ablation {getattr(ablation, '__version__', '?')}; {n} tasks x 2 arms, {rounds} rounds")  # fmt: skip
    best: dict[tuple[str, int], dict[str, float]] = {}
    started = time.perf_counter()
    for _ in range(rounds):
        for k in ks:
            for mode in MODES:
                found = child(mode, k, n)
                if (mode, k) not in best or found["us_per_trial"] < best[mode, k]["us_per_trial"]:
                    best[mode, k] = found
    print("\n| spans per trial | mode | µs per trial | overhead vs no-sdk (µs) | ratio | spans kept |")
    print("|---|---|---|---|---|---|")
    for k in ks:
        ref = best["no-sdk", k]["us_per_trial"]
        for mode in MODES:
            b = best[mode, k]
            print(f"| {k} | {mode} | {b['us_per_trial']:.1f} | {b['us_per_trial'] - ref:+.1f} | "
                  f"{b['us_per_trial'] / ref:.2f} | {int(b['spans_kept'])} |")  # fmt: skip
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
