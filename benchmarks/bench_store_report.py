"""``ablation report`` on a 10^6-trial store written by ``ablation run`` (target: < 3 s).

The store is written once through the real write path: ``ablation run`` of a suite of
500,000 tasks with two no-op agents (1,000,000 trials, each with its measured latency), which
commits the trials as the engine finishes them and writes each arm's snapshot with the
campaign's own report. Generating it takes minutes; it is kept under ``--dir`` and reused.
Then ``ablation report --format json`` runs ``--repeat`` times in a fresh process each: the
wall and CPU times, the highest peak RSS and the load average are printed, one JSON line.

Usage: ``python benchmarks/bench_store_report.py [--tasks 500000] [--dir /tmp/ablation-store-bench]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SUITE = """\
from ablation import AblationTask


def tasks():
    return (AblationTask(task_id=f"t{{i:07d}}", input_data=i, expected_output=i % 3 != 0)
            for i in range({n}))
"""
AGENTS = """\
def baseline(x):
    return x % 3 != 0


def candidate(x):
    return x % 5 != 0
"""
LAUNCH = "from ablation.cli import main_entry; main_entry()"


def _write_store(folder: Path, n: int) -> Path:
    """The store of one campaign of ``n`` tasks, written by ``ablation run`` unless present."""
    store = folder / f"runs-{n}.db"
    if store.exists():
        return store
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.py").write_text(SUITE.format(n=n), encoding="utf-8")
    (folder / "agents.py").write_text(AGENTS, encoding="utf-8")
    partial = folder / "partial.db"
    for leftover in folder.glob("partial.db*"):
        leftover.unlink()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", LAUNCH, "run", "suite.py:tasks", "--baseline", "agents.py:baseline",
         "--candidate", "agents.py:candidate", "--store", str(partial), "--no-progress",
         "--format", "json", "--output", str(folder / "run.json"), "--resamples", "1000"],
        cwd=folder, check=False, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    print(f"# store written by ablation run in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    partial.rename(store)
    return store


def _report_once(store: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one ``ablation report``
    process (the CPU time says what the wall time would be on an idle machine)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "report", "--store", str(store), "--format", "json",
         "-o", str(out)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 2):  # 2: a gate failed, the report is still written
        raise SystemExit(f"ablation report exited with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=500_000, help="tasks (trials = 2 x tasks)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ablation-store-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    store = _write_store(args.dir, args.tasks)
    runs = [_report_once(store, args.dir / "report.json") for _ in range(args.repeat)]
    report = json.loads((args.dir / "report.json").read_text(encoding="utf-8"))
    print(json.dumps({
        "trials": 2 * args.tasks, "n_paired": report["n_paired"],
        "wall_s_median": round(statistics.median(w for w, _, _ in runs), 2),
        "wall_s": [round(w, 2) for w, _, _ in runs], "cpu_s": [round(c, 2) for _, c, _ in runs],
        "peak_rss_mib": round(max(r for _, _, r in runs)),
        "store_mib": round(store.stat().st_size / 2**20), "load_average": os.getloadavg(),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
