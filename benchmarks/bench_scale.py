"""Scale benchmark: every path a user takes at 1e3 ... 1e6 tasks, each figure in its own process.

Each measurement runs in a fresh child process (``python bench_scale.py --child NAME N``). The
child builds its input, times only the operation, and prints one JSON line with the wall time
and its own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``); for a CLI figure the child
runs the ``ablation`` command as its own subprocess and reports that command's peak RSS
(``RUSAGE_CHILDREN`` after the one ``wait``). Nothing is measured in the parent.

Targets and references (issue 13) are printed side by side:

- ``ablation compare`` on two 1M-line JSONL files: < 5 s, < 1 GiB
- ``compare_results`` on 1M TaskResults < 2 s; on 1M dict records < 4 s
- ``ablation report`` on a stored 1M-trial campaign with latencies: < 3 s, < 1 GiB
- 1M-task campaign with a store (no-op agents): peak RSS < 1 GiB, flat (RSS sampled each 0.5 s)
- whole campaign >= 0.8x a bare ``asyncio.to_thread`` loop (sync no-op agents, 10k tasks), and
  >= 1.5x pydantic-evals with ``EqualsExpected`` (async agents sleeping 10 ms, concurrency 100;
  at 1k and at 10k tasks: the issue says "from 1k tasks up")
- ``ablation compare`` on two 500-line files < 0.5 s; ``ablation --help`` < 0.2 s

Usage: ``python benchmarks/bench_scale.py [--quick] [--big N] [--sizes 1000,10000] [--only help,compare_cli]``
(``--only`` runs the named figures and scaling columns only; ``--only compare_repeated`` adds the
repeated-runs column, ``compare_results`` on dict records with 3 runs per task and arm).

Each target figure but the store insert and the 1e6-task campaign (minutes each) is the median of
three runs, each in its own child, printed with the fastest and slowest run: one run on a 2-core VM
varies by 15-25 %. The scaling table is one run per cell.

Bytecode: an installed package has its modules compiled (pip writes ``.pyc`` files; an editable
checkout gets ``__pycache__`` on first import), but where ``PYTHONDONTWRITEBYTECODE`` is set every
CLI start compiles every module of the package again (~0.1-0.2 s). The run therefore compiles the
package once (``compileall`` into its ``__pycache__`` folders, which git ignores) before measuring;
``--no-bytecode`` measures without (and says so).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
GIB = 1024**3


def _rss_self() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def write_jsonl(path: Path, n: int, seed: int, p: float) -> None:
    rng = random.Random(seed)
    with path.open("w") as f:
        for i in range(n):
            f.write(f'{{"id": "task-{i:07d}", "passed": {"true" if rng.random() < p else "false"}}}\n')


def _results(n: int, arm: str, p: float, seed: int, start: int = 0) -> list[Any]:
    """Trials of tasks ``start .. n - 1`` of one arm (seeded by ``seed``)."""
    from ablation.schema import TaskResult

    rng = random.Random(seed)
    return [
        TaskResult(task_id=f"task-{i:07d}", arm=arm, passed=rng.random() < p, latency_s=rng.random())
        for i in range(start, n)
    ]


def _cli(args: list[str], out: Path | None = None) -> dict[str, float]:
    """Wall time and peak RSS of one ``ablation`` command in a child process.

    Exit 0 (gates pass) and 2 (a gate failed; the report is still written) are results; any
    other exit (1: a usage, input or operational error) raises, so an error is never timed as a
    figure. ``out``: the command's ``-o`` file, removed first and required afterwards.
    """
    if out is not None:
        out.unlink(missing_ok=True)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", *args],
        env=ENV, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode not in (0, 2):
        raise RuntimeError(f"ablation {args[0]} exited {done.returncode}: {done.stderr[-300:]}")
    if out is not None and not out.is_file():
        raise RuntimeError(f"ablation {args[0]} exited {done.returncode} but wrote no {out.name}")
    return {"wall": wall, "rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}


def child_compare_cli(n: int, tmp: Path) -> dict[str, float]:
    b, c = tmp / f"b{n}.jsonl", tmp / f"c{n}.jsonl"
    if not b.exists():
        write_jsonl(b, n, 1, 0.6)
        write_jsonl(c, n, 2, 0.62)
    out = tmp / "out.json"
    return _cli(["compare", str(b), str(c), "--format", "json", "-o", str(out)], out)


def child_help(n: int, tmp: Path) -> dict[str, float]:
    return _cli(["--help"])


def child_compare_results(n: int, tmp: Path) -> dict[str, float]:
    from ablation.analysis.build import compare_results
    from ablation.config import CampaignConfig

    b, c = _results(n, "baseline", 0.6, 1), _results(n, "candidate", 0.62, 2)
    start = time.perf_counter()
    compare_results(b, c, config=CampaignConfig(n_resamples=1000))
    return {"wall": time.perf_counter() - start, "rss": _rss_self()}


def child_compare_dicts(n: int, tmp: Path) -> dict[str, float]:
    from ablation.analysis.build import compare_results
    from ablation.config import CampaignConfig

    rng = random.Random(3)
    b = [{"task_id": f"task-{i:07d}", "passed": rng.random() < 0.6} for i in range(n)]
    c = [{"task_id": f"task-{i:07d}", "passed": rng.random() < 0.62} for i in range(n)]
    start = time.perf_counter()
    compare_results(b, c, config=CampaignConfig(n_resamples=1000))
    return {"wall": time.perf_counter() - start, "rss": _rss_self()}


def child_compare_repeated(n: int, tmp: Path) -> dict[str, float]:
    """``compare_results`` on ``n`` tasks x 3 runs per arm (dict records), default resamples."""
    from ablation.analysis.build import compare_results

    rng = random.Random(4)
    b, c = (
        [{"task_id": f"task-{i:07d}", "run": r, "passed": rng.random() < p} for i in range(n) for r in range(3)]
        for p in (0.6, 0.62)
    )
    start = time.perf_counter()
    compare_results(b, c)
    return {"wall": time.perf_counter() - start, "rss": _rss_self()}


def child_store_insert(n: int, tmp: Path) -> dict[str, float]:
    from ablation.config import CampaignConfig
    from ablation.store.run_store import RunStore

    path = tmp / f"store{n}.db"
    path.unlink(missing_ok=True)
    store = RunStore(path)
    cid = store.create_campaign(
        config=CampaignConfig(n_resamples=1000), suite_fingerprint="bench", task_digests={},
        baseline_agent="b", candidate_agent="c",
    )  # fmt: skip
    start = time.perf_counter()
    step = 100_000
    for lo in range(0, n, step):
        m = min(step, n - lo)
        for arm, p, seed in (("baseline", 0.6, lo), ("candidate", 0.62, lo + 1)):
            rows = _results(lo + m, arm, p, seed, start=lo)
            store.append_many(cid, rows)
    wall = time.perf_counter() - start
    store.set_status(cid, "complete")  # the campaign ends: its arm snapshots are written (untimed)
    store.close()
    return {"wall": wall, "rss": _rss_self(), "trials_per_s": 2 * n / wall}


def child_store_report(n: int, tmp: Path) -> dict[str, float]:
    """``ablation report`` on the store ``store_insert`` wrote (written first, untimed, when a
    run measures this figure alone)."""
    path, out = tmp / f"store{n}.db", tmp / "rep.json"
    if not path.exists():
        child_store_insert(n, tmp)
    return _cli(["report", "--store", str(path), "--format", "json", "-o", str(out)], out)


def child_campaign_store(n: int, tmp: Path) -> dict[str, float]:
    """Peak RSS of the whole call; flatness from the samples taken while trials run.

    ``rss_q1``/``rss_q4`` are the highest samples of the first and last quarter of the engine's
    run (up to the progress reporter's ``finish``); the report built afterwards (imports,
    arrays) counts in ``rss`` and ``rss_report``. The suite is a generator function, read once
    to check and fingerprint it and once more for the plan, so no list of tasks is held.
    """
    from ablation.config import CampaignConfig
    from ablation.run.campaign import run_ablation_campaign
    from ablation.run.progress import NullProgress
    from ablation.schema import AblationTask

    def tasks() -> Any:  # the suite as a generator function: never held whole (issue 13)
        return (AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(n))

    samples: list[int] = []
    ran: list[int] = []
    done = threading.Event()

    class Marker(NullProgress):
        def finish(self) -> None:
            ran.append(len(samples))

    def sample() -> None:
        while not done.wait(0.5):
            samples.append(_rss_now())

    sampler = threading.Thread(target=sample, daemon=True)
    path = tmp / f"campaign{n}.db"
    path.unlink(missing_ok=True)
    sampler.start()
    start = time.perf_counter()
    run_ablation_campaign(
        _noop, _noop, tasks, config=CampaignConfig(n_resamples=1000, concurrency=8), store=path,
        progress=Marker(),
    )  # fmt: skip
    wall = time.perf_counter() - start
    done.set()
    running = samples[: ran[0] if ran else len(samples)]
    q = len(running) // 4 or 1
    return {"wall": wall, "rss": _rss_self(), "rss_q1": max(running[:q], default=0),
            "rss_q4": max(running[-q:], default=0), "rss_report": max(samples, default=0)}  # fmt: skip


def _noop(x: Any) -> Any:
    return x


async def _sleepy(x: Any) -> Any:
    await asyncio.sleep(0.01)
    return x


def child_sync_ratio(n: int, tmp: Path) -> dict[str, float]:
    from ablation.config import CampaignConfig
    from ablation.run.campaign import run_ablation_campaign
    from ablation.schema import AblationTask

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(n)]

    async def bare() -> None:
        sem = asyncio.Semaphore(8)

        async def one(x: int) -> Any:
            async with sem:
                return await asyncio.to_thread(_noop, x)

        await asyncio.gather(*(one(i) for i in range(2 * n)))

    start = time.perf_counter()
    asyncio.run(bare())
    ref = time.perf_counter() - start
    start = time.perf_counter()
    run_ablation_campaign(_noop, _noop, tasks, config=CampaignConfig(n_resamples=1000, concurrency=8))
    ours = time.perf_counter() - start
    return {"wall": ours, "ref": ref, "ratio": ref / ours, "rss": _rss_self()}


def child_async_ratio(n: int, tmp: Path) -> dict[str, float]:
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    from ablation.config import CampaignConfig
    from ablation.run.campaign import run_ablation_campaign
    from ablation.schema import AblationTask

    tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(n)]
    cases = [Case(name=f"{i}-{a}", inputs=i, expected_output=i) for i in range(n) for a in "bc"]
    dataset = Dataset(name="bench", cases=cases, evaluators=[EqualsExpected()])
    start = time.perf_counter()
    dataset.evaluate_sync(_sleepy, max_concurrency=100, progress=False)
    ref = time.perf_counter() - start
    start = time.perf_counter()
    config = CampaignConfig(n_resamples=1000, concurrency=100)
    run_ablation_campaign(_sleepy, _sleepy, tasks, config=config)
    ours = time.perf_counter() - start
    return {"wall": ours, "ref": ref, "ratio": ref / ours, "rss": _rss_self()}


CHILDREN = {name[6:]: fn for name, fn in globals().items() if name.startswith("child_")}
#: Scaling columns without a target, measured with ``--only``: repeated runs (3 per task and arm).
OPT_IN = {"compare_repeated"}


#: Figures measured once: minutes each (the 1e6 insert and campaign), or judged on memory.
ONCE = {"store_insert", "campaign_store"}


def measure(name: str, n: int, tmp: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, str(n), str(tmp)], env=ENV,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_median(name: str, n: int, tmp: Path, repeat: int) -> dict[str, float]:
    """``repeat`` runs of a figure, each in its own child: the run of median wall time, with the
    fastest and slowest wall times beside it (one run of a 2-core VM varies by 15-25 %)."""
    runs = [measure(name, n, tmp) for _ in range(repeat)]
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    runs.sort(key=lambda r: r["wall"])
    middle = dict(runs[len(runs) // 2])
    if repeat > 1:
        middle.update(runs=repeat, fastest=runs[0]["wall"], slowest=runs[-1]["wall"])
    return middle


def fmt(r: dict[str, float]) -> str:
    if "error" in r:
        return f"ERROR {r['error']}"
    text = f"{r['wall']:8.3f} s  {r['rss'] / 2**20:7.0f} MiB"
    if "runs" in r:
        text += f"  (median of {r['runs']:.0f}: {r['fastest']:.3f}-{r['slowest']:.3f} s)"
    for key in ("ref", "ratio", "trials_per_s", "rss_q1", "rss_q4", "rss_report"):
        if key in r:
            v = r[key]
            text += f"  {key}=" + (f"{v / 2**20:.0f} MiB" if key.startswith("rss") else f"{v:,.3f}")
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    ap.add_argument("--sizes", help="comma-separated sizes of the scaling table")
    ap.add_argument("--big", type=int, help="size of the 1M targets (default 1,000,000)")
    ap.add_argument("--only", help="comma-separated figure names (help, compare_cli, ...): run only those")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="do not compile the package first (CLI starts compile its modules)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, n, tmp = args.child
        print(json.dumps(CHILDREN[name](int(n), Path(tmp))))
        return 0
    big = args.big or (1000 if args.quick else 1_000_000)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        [100, 1000] if args.quick else [1000, 10_000, 100_000, 1_000_000])
    sync_n, async_n = (50, 10) if args.quick else (10_000, 1000)  # quick: a smoke run, not a figure
    print(f"load average: {os.getloadavg()}")
    if args.no_bytecode:
        print("bytecode: not compiled first (PYTHONDONTWRITEBYTECODE="
              f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})")
    else:  # as installed: the package's modules compiled once
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ablation")], check=True)
        print("bytecode: the package compiled first (compileall), as an installed package is")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        targets = [
            ("ablation --help (< 0.2 s)", "help", 0, lambda r: r["wall"] < 0.2),
            ("compare CLI, 500 lines (< 0.5 s)", "compare_cli", 500, lambda r: r["wall"] < 0.5),
            (f"compare CLI, {big:,} lines (< 5 s, < 1 GiB)", "compare_cli", big,
             lambda r: r["wall"] < 5 and r["rss"] < GIB),
            (f"compare_results, {big:,} TaskResults (< 2 s)", "compare_results", big, lambda r: r["wall"] < 2),
            (f"compare_results, {big:,} dicts (< 4 s)", "compare_dicts", big, lambda r: r["wall"] < 4),
            (f"store bulk insert, {big:,} tasks x 2 (info)", "store_insert", big, lambda r: True),
            (f"ablation report, {big:,}-task store with latencies (< 3 s, < 1 GiB)", "store_report", big,
             lambda r: r["wall"] < 3 and r["rss"] < GIB),
            (f"campaign with store, {big:,} tasks (RSS < 1 GiB, flat)", "campaign_store", big,
             lambda r: r["rss"] < GIB and r["rss_q4"] < 1.2 * max(r["rss_q1"], 1)),
            (f"whole campaign vs bare to_thread, {sync_n:,} tasks (>= 0.8x)", "sync_ratio",
             sync_n, lambda r: r["ratio"] >= 0.8),
            (f"whole campaign vs pydantic-evals+EqualsExpected, {async_n:,} tasks (>= 1.5x)",
             "async_ratio", async_n, lambda r: r["ratio"] >= 1.5),
            (f"whole campaign vs pydantic-evals+EqualsExpected, {10 * async_n:,} tasks (>= 1.5x)",
             "async_ratio", 10 * async_n, lambda r: r["ratio"] >= 1.5),
        ]  # fmt: skip
        only = set(args.only.split(",")) if args.only else None
        if only is not None:
            targets = [t for t in targets if t[1] in only]
        missed = 0
        for label, name, n, ok in targets:
            repeat = 1 if name in ONCE or args.quick else 3
            r = measure_median(name, n, tmp, repeat)
            good = "error" not in r and ok(r)
            missed += not good
            print(f"{'PASS' if good else 'MISS'}  {label:<72} {fmt(r)}")
        print("\nscaling (wall s / peak MiB):")
        paths = ["compare_cli", "compare_results", "compare_dicts", "store_insert", "store_report"]
        paths = [p for p in paths if only is None or p in only]
        paths += sorted(OPT_IN & (only or set()))  # columns measured only when named
        print("n".rjust(10) + "".join(p.rjust(22) for p in paths))
        for n in sizes:
            cells = []
            for p in paths:
                r = measure(p, n, tmp)
                cells.append("error" if "error" in r else f"{r['wall']:.3f} / {r['rss'] / 2**20:.0f}")
            print(f"{n:>10}" + "".join(c.rjust(22) for c in cells))
    print(f"load average: {os.getloadavg()}")
    return 1 if missed and not args.quick else 0


if __name__ == "__main__":
    sys.exit(main())
