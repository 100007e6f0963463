"""Sequential campaigns on real data: how often they agree with the full suite, and what they save.

Data: the 24 SWE-bench Verified systems bundled in ``examples/data/`` (500 tasks each, see
``examples/data/SOURCES.md``); every ordered pair (baseline, candidate) is one campaign: 552.

For each pair the full-suite decision is the exact McNemar test (two-sided, ``--alpha``):
"regression" or "improvement" when p < alpha, else undecided. The sequential campaign is the
replay path of ``ablation compare --sequential-replay`` (``ablation.analysis.sequential``) with
the release gates ``--margin`` (non-inferiority) and "no significant regression", its tasks in the
seeded random order of ``--seed``. Its decision is *fail* when it stopped on a significant
regression or inferiority, *pass* when non-inferiority was shown. Among the pairs where the full
suite is decisive, it reaches the same decision when it fails a full-suite regression and passes
a full-suite improvement. Saving = 1 - agent calls used / agent calls of the full suite.

``--agents K`` also runs K pairs as real campaigns (``run_ablation_campaign`` with agents that
replay the stored outcomes, concurrency 8, a SQLite store) and checks that each stops at the same
pair and decision as the replay.

Targets: same decision >= 95 %, median saving >= 40 %. Exit status 1 when one is missed.

    python benchmarks/sequential.py [--seed 0] [--seeds 1] [--margin 0.02] [--agents 3] [--suite-claim]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ablation import AblationTask, run_ablation_campaign
from ablation.analysis.pair_arms import pair_columns
from ablation.analysis.sequential import apply_sequential
from ablation.columns import TrialColumns
from ablation.config import CampaignConfig, GatePolicy, SequentialPolicy
from ablation.stats import mcnemar

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"
FAIL_GATES = {"regression", "inferior", "critical_regression"}


def load() -> tuple[list[str], dict[str, np.ndarray]]:
    """Task ids (sorted) and each system's verdicts aligned with them."""
    systems: dict[str, np.ndarray] = {}
    ids: list[str] | None = None
    for path in sorted(DATA.glob("swebench-verified-mini__*.jsonl")):
        rows = sorted(
            (json.loads(line) for line in path.read_text().splitlines() if line.strip()),
            key=lambda r: r["id"],
        )
        these = [r["id"] for r in rows]
        if ids is not None and these != ids:
            raise SystemExit(f"{path}: task ids differ from the other files")
        ids = these
        systems[path.stem.split("__", 1)[1]] = np.array([bool(r["passed"]) for r in rows])
    assert ids is not None
    return ids, systems


def full_decision(base: np.ndarray, cand: np.ndarray, alpha: float) -> str:
    b, c = int(np.sum(base & ~cand)), int(np.sum(~base & cand))
    if b + c == 0 or mcnemar(b, c, method="exact").pvalue >= alpha:
        return "undecided"
    return "regression" if b > c else "improvement"


SUITE_CLAIM = "--suite-claim" in sys.argv  # the suite-only non-inferiority claim (opt-in)


def config_for(seed: int, alpha: float, margin: float) -> CampaignConfig:
    return CampaignConfig(
        seed=seed,
        alpha=alpha,
        n_resamples=100,
        gates=GatePolicy(noninferiority_margin=margin, no_significant_regression=True),
        sequential=SequentialPolicy(suite_claim=SUITE_CLAIM),
    )


def replay_all(ids: list[str], systems: dict[str, np.ndarray], args: argparse.Namespace) -> list[dict]:
    rows = []
    for (a, base), (c, cand) in itertools.permutations(systems.items(), 2):
        full = full_decision(base, cand, args.alpha)
        for seed in range(args.seed, args.seed + args.seeds):
            data = pair_columns(*(TrialColumns.verdicts(arm, np.asarray(ids, dtype=object), v)
                                  for arm, v in (("baseline", base), ("candidate", cand))))
            _, s = apply_sequential(data, config_for(seed, args.alpha, args.margin))
            seq = "fail" if s.gate in FAIL_GATES else "pass" if s.gate == "non_inferior" else "none"
            rows.append({
                "baseline": a, "candidate": c, "seed": seed, "full": full, "gate": s.gate,
                "sequential": seq, "pairs": s.pairs, "calls": s.agent_calls,
                "planned": s.agent_calls_planned,
                "same": (full == "regression" and seq == "fail")
                or (full == "improvement" and seq == "pass"),
            })
    return rows


def as_agents(ids: list[str], systems: dict[str, np.ndarray], rows: list[dict], k: int, margin: float,
              alpha: float) -> list[str]:
    """Run k pairs as real campaigns; return mismatches with the replay."""
    problems = []
    tasks = [AblationTask(task_id=t, input_data={"id": t}, expected_output=True) for t in ids]
    picks = [r for r in rows if r["full"] != "undecided"][:: max(1, len(rows) // max(k, 1))][:k]
    for r in picks:
        table_b = dict(zip(ids, systems[r["baseline"]].tolist(), strict=True))
        table_c = dict(zip(ids, systems[r["candidate"]].tolist(), strict=True))
        with tempfile.TemporaryDirectory() as tmp:
            report = run_ablation_campaign(
                lambda x, t=table_b: t[x["id"]], lambda x, t=table_c: t[x["id"]], tasks,
                config=config_for(r["seed"], alpha, margin).model_copy(update={"concurrency": 8}),
                store=Path(tmp) / "runs.db",
            )
        s = report.sequential
        assert s is not None
        if (s.gate, s.pairs) != (r["gate"], r["pairs"]):
            problems.append(f"{r['baseline']} -> {r['candidate']}: campaign {s.gate}@{s.pairs}, "
                            f"replay {r['gate']}@{r['pairs']}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1, help="run orders per pair")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--margin", type=float, default=0.02)
    parser.add_argument("--agents", type=int, default=3, help="pairs also run as real campaigns")
    parser.add_argument("--suite-claim", action="store_true",
                        help="non-inferiority about the suite only (default: population claim)")
    args = parser.parse_args()
    ids, systems = load()
    started = time.perf_counter()
    rows = replay_all(ids, systems, args)
    elapsed = time.perf_counter() - started
    decisive = [r for r in rows if r["full"] != "undecided"]
    same = sum(r["same"] for r in decisive) / len(decisive)
    savings = [1 - r["calls"] / r["planned"] for r in decisive]
    print(f"{len(systems)} systems, {len(ids)} tasks, {len(rows)} campaigns "
          f"({len(rows) // args.seeds} ordered pairs x {args.seeds} order(s)), alpha {args.alpha}, "
          f"margin {args.margin}; replayed in {elapsed:.1f} s\n")
    print("| full-suite exact McNemar | campaigns | same decision | median calls saved | "
          "mean calls saved | median pairs run |")
    print("|---|---:|---:|---:|---:|---:|")
    for label in ("regression", "improvement", "undecided"):
        group = [r for r in rows if r["full"] == label]
        if not group:
            continue
        sv = [1 - r["calls"] / r["planned"] for r in group]
        agree = f"{100 * sum(r['same'] for r in group) / len(group):.1f}%" if label != "undecided" else "-"
        print(f"| {label} | {len(group)} | {agree} | {100 * statistics.median(sv):.1f}% | "
              f"{100 * statistics.mean(sv):.1f}% | {statistics.median(r['pairs'] for r in group):g} |")
    print(f"| **decisive (both)** | {len(decisive)} | {100 * same:.1f}% | "
          f"{100 * statistics.median(savings):.1f}% | {100 * statistics.mean(savings):.1f}% | "
          f"{statistics.median(r['pairs'] for r in decisive):g} |")
    gates: dict[str, int] = {}
    for r in rows:
        gates[r["gate"]] = gates.get(r["gate"], 0) + 1
    print("\nstopping rule that decided: " + ", ".join(f"{g} {n}" for g, n in sorted(gates.items())))
    wrong = [r for r in decisive if r["sequential"] != "none" and not r["same"]]
    print(f"decisive pairs decided the opposite way: {len(wrong)}")
    problems = as_agents(ids, systems, rows, args.agents, args.margin, args.alpha) if args.agents else []
    if args.agents:
        print(f"{args.agents} pair(s) run as real campaigns: "
              + ("same stopping pair and decision as the replay" if not problems else "; ".join(problems)))
    ok = same >= 0.95 and statistics.median(savings) >= 0.40 and not problems
    print(f"\ntargets: same decision {100 * same:.1f}% (>= 95%), median saving "
          f"{100 * statistics.median(savings):.1f}% (>= 40%): {'PASS' if ok else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
