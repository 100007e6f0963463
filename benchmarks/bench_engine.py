"""Engine speed and memory, measured side by side with references in one run.

Run ``python benchmarks/bench_engine.py`` (a few minutes; part (d) stores a million trials) or
``python benchmarks/bench_engine.py --quick`` (smaller sizes, about half a minute).

(a) Throughput: no-op sync agents, 10,000 tasks x 2 arms, every trial committed to a temporary
    SQLite run store as a campaign does, against (1) a bare asyncio loop calling the same agents
    through ``asyncio.to_thread`` under a semaphore of the same concurrency (target: at least
    half its calls/s) and (2) pydantic-evals ``Dataset.evaluate_sync`` with no evaluators on the
    same trials (one trial = one case, ``max_concurrency`` equal; target: at least twice its
    cases/s). The engine without a store and a whole ``run_ablation_campaign`` (store and
    report) are shown for information.
(b) Latency-bound runs: 2,000 trials of 50 ms agents at concurrency 64, async (``asyncio.sleep``)
    and sync (``time.sleep`` in the thread pool), against the ideal ``2000 * 0.05 / 64`` s
    (target: within 10 %).
(c) Resume bookkeeping with 100,000 stored trials: ``RunStore.completed_keys`` plus the skip
    plan built from :func:`ablation.run.engine.trial_plan` (target: under 1 s).
(d) Peak memory of analysing 1,000,000 stored binary trials (500,000 tasks x 2 arms, bulk
    inserted with ``append_many``): a child process builds the report the way campaigns and
    ``ablation report`` do, with ``ablation.analysis.stored.report_from_store`` (the store's streaming
    ``trial_rows`` paired by ``pair_columns``). Peak RSS is read with
    ``resource.getrusage(RUSAGE_CHILDREN)`` (target: under 1 GiB). For comparison, another child
    streams the rows into binary arrays and calls ``pair_columns`` + ``build_report`` (without a
    target; it is also the fallback when ``report_from_store`` does not exist).

Every timing is the best of a few repeats; the final table prints each figure with its target,
the ratio and PASS/MISS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import resource
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ablation import (
    AblationEngine,
    AblationTask,
    CampaignConfig,
    RunStore,
    TaskResult,
    run_ablation_campaign,
)
from ablation.run.engine import trial_plan
from ablation.run.sinks import StoreSink
from ablation.schema import suite_fingerprint, task_digests

CONCURRENCY = 8
SLEEP_S = 0.05
SLEEP_CONCURRENCY = 64
RSS_SCALE = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux


@dataclass
class Line:
    """One line of the summary table.

    Attributes:
        name: What was measured.
        value: The measured figure, formatted.
        target: The target, in words.
        ratio: The figure that the target bounds (measured / reference).
        limit: The bound on ``ratio``.
        higher_is_better: True when ``ratio`` must be at least ``limit``, else at most.
    """

    name: str
    value: str
    target: str
    ratio: float
    limit: float
    higher_is_better: bool

    @property
    def passed(self) -> bool:
        """Whether the target is met."""
        return self.ratio >= self.limit if self.higher_is_better else self.ratio <= self.limit


def _best(fn: Callable[[], Any], repeats: int) -> float:
    """Best wall time of ``repeats`` calls of ``fn`` in seconds."""
    return _race({"fn": fn}, repeats, warm_up=False)["fn"]


def _race(
    runners: dict[str, Callable[[], Any]], repeats: int, *, warm_up: bool
) -> dict[str, float]:
    """Best wall time of each runner, the runners taking turns in every round.

    Taking turns (instead of all repeats of one runner, then the next) spreads any change of
    machine load over every runner, so the ratios stay fair on a busy machine.
    """
    if warm_up:
        for run in runners.values():
            run()
    best = dict.fromkeys(runners, float("inf"))
    for _ in range(repeats):
        for name, run in runners.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _suite(n_tasks: int) -> list[AblationTask]:
    return [
        AblationTask(task_id=f"t{i:07d}", input_data=i, expected_output=i) for i in range(n_tasks)
    ]


def noop(x: Any) -> Any:
    """A sync agent that answers its input at once."""
    return x


async def async_sleeper(x: Any) -> Any:
    """An async agent that takes 50 ms."""
    await asyncio.sleep(SLEEP_S)
    return x


def sync_sleeper(x: Any) -> Any:
    """A sync agent that takes 50 ms (blocking a pool thread)."""
    time.sleep(SLEEP_S)
    return x


def _new_campaign(store: RunStore, tasks: list[AblationTask], config: CampaignConfig) -> str:
    return store.create_campaign(
        config=config,
        suite_fingerprint=suite_fingerprint(tasks),
        task_digests=task_digests(tasks),
        baseline_agent="noop",
        candidate_agent="noop",
    )


# --------------------------------------------------------------------------- (a) throughput


def _ablation_with_store(tasks: list[AblationTask], workdir: Path) -> Callable[[], None]:
    config = CampaignConfig(concurrency=CONCURRENCY)
    counter = iter(range(1_000_000))

    def run() -> None:
        with RunStore(workdir / f"a-{next(counter)}.db") as store:
            cid = _new_campaign(store, tasks, config)
            sink = StoreSink(store, cid)  # the campaign's own sink: every trial committed

            async def go() -> list[TaskResult]:
                done = await AblationEngine(config, sink=sink).run_async(noop, noop, tasks)
                sink.close()
                return done

            results = asyncio.run(go())
            assert len(results) == 2 * len(tasks) and store.count(cid) == 2 * len(tasks)

    return run


def _ablation_campaign(tasks: list[AblationTask], workdir: Path) -> Callable[[], None]:
    config = CampaignConfig(concurrency=CONCURRENCY)
    counter = iter(range(1_000_000))

    def run() -> None:
        store = workdir / f"campaign-{next(counter)}.db"
        report = run_ablation_campaign(noop, noop, tasks, config=config, store=store)
        assert report.n_paired == len(tasks)

    return run


def _ablation_no_store(tasks: list[AblationTask]) -> Callable[[], None]:
    def run() -> None:
        AblationEngine(CampaignConfig(concurrency=CONCURRENCY)).run(noop, noop, tasks)

    return run


def _bare_asyncio(tasks: list[AblationTask]) -> Callable[[], None]:
    inputs = [t.input_data for t in tasks]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(max_workers=CONCURRENCY)
        loop.set_default_executor(pool)
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(x: Any) -> bool:
            async with sem:
                return await asyncio.to_thread(noop, x) == x

        outcomes = await asyncio.gather(*(one(x) for x in inputs for _arm in range(2)))
        assert all(outcomes)

    return lambda: asyncio.run(main())


def _pydantic_evals(tasks: list[AblationTask]) -> Callable[[], None]:
    from pydantic_evals import Case, Dataset

    cases = [
        Case(name=f"{t.task_id}-{arm}", inputs=t.input_data, expected_output=t.expected_output)
        for t in tasks
        for arm in ("baseline", "candidate")
    ]
    dataset = Dataset(name="bench", cases=cases)

    def run() -> None:
        report = dataset.evaluate_sync(noop, max_concurrency=CONCURRENCY, progress=False)
        assert len(report.cases) == len(cases)

    return run


def _ablation_rich_progress(tasks: list[AblationTask]) -> Callable[[], None]:
    import io

    from rich.console import Console

    from ablation.run.progress import RichProgress

    def run() -> None:
        console = Console(file=io.StringIO(), force_terminal=True, width=120)
        engine = AblationEngine(
            CampaignConfig(concurrency=CONCURRENCY), progress=RichProgress(console)
        )
        engine.run(noop, noop, tasks)

    return run


def part_a(n_tasks: int, repeats: int, workdir: Path) -> list[Line]:
    """(a) No-op sync agents with store writes against a bare loop and pydantic-evals."""
    tasks = _suite(n_tasks)
    n = 2 * n_tasks
    print(f"\n== (a) throughput: {n:,} trials of no-op sync agents, concurrency {CONCURRENCY} ==")
    runners = {
        "ablation engine + SQLite store": _ablation_with_store(tasks, workdir),
        "ablation engine, no store": _ablation_no_store(tasks),
        "ablation engine, no store, rich progress": _ablation_rich_progress(tasks),
        "run_ablation_campaign (store + report)": _ablation_campaign(tasks, workdir),
        "bare asyncio.to_thread + semaphore": _bare_asyncio(tasks),
        "pydantic-evals evaluate_sync": _pydantic_evals(tasks),
    }
    best = _race(runners, repeats, warm_up=True)
    rates = {name: n / seconds for name, seconds in best.items()}
    print(f"{'runner':<40}{'best s':>10}{'trials/s':>12}")
    for name, seconds in best.items():
        print(f"{name:<40}{seconds:>10.3f}{rates[name]:>12,.0f}")
    print("(the engine without a store and the whole campaign are shown for information)")
    ours = rates["ablation engine + SQLite store"]
    bare = rates["bare asyncio.to_thread + semaphore"]
    evals = rates["pydantic-evals evaluate_sync"]
    quiet, rich = (
        best["ablation engine, no store"],
        best["ablation engine, no store, rich progress"],
    )
    return [
        Line("(a) rich progress overhead", f"{rich:.3f} vs {quiet:.3f} s",
             "<= 1.5x", rich / quiet, 1.5, False),
        Line("(a) vs bare asyncio loop", f"{ours:,.0f} vs {bare:,.0f} calls/s",
             ">= 0.5x", ours / bare, 0.5, True),
        Line("(a) vs pydantic-evals", f"{ours:,.0f} vs {evals:,.0f} cases/s",
             ">= 2x", ours / evals, 2.0, True),
    ]  # fmt: skip


# --------------------------------------------------------------------------- (b) sleeps


def _bare_sleep(n: int) -> Callable[[], None]:
    async def main() -> None:
        sem = asyncio.Semaphore(SLEEP_CONCURRENCY)

        async def one(x: int) -> None:
            async with sem:
                await async_sleeper(x)

        await asyncio.gather(*(one(i) for i in range(n)))

    return lambda: asyncio.run(main())


def part_b(n_trials: int, repeats: int) -> list[Line]:
    """(b) 50 ms agents at concurrency 64 against the ideal wall time."""
    tasks = _suite(n_trials // 2)
    ideal = n_trials * SLEEP_S / SLEEP_CONCURRENCY
    config = CampaignConfig(concurrency=SLEEP_CONCURRENCY)
    print(
        f"\n== (b) {n_trials:,} trials of {SLEEP_S * 1e3:.0f} ms agents at concurrency "
        f"{SLEEP_CONCURRENCY}: ideal {ideal:.3f} s =="
    )
    runners = {
        "ablation, async agents": lambda: AblationEngine(config).run(
            async_sleeper, async_sleeper, tasks
        ),
        "ablation, sync agents (thread pool)": lambda: AblationEngine(config).run(
            sync_sleeper, sync_sleeper, tasks
        ),
        "bare asyncio.sleep + semaphore": _bare_sleep(n_trials),
    }
    walls = _race(runners, repeats, warm_up=False)
    print(f"{'runner':<38}{'best s':>10}{'/ ideal':>10}")
    for name, wall in walls.items():
        print(f"{name:<38}{wall:>10.3f}{wall / ideal:>10.3f}")
    waves = -(-n_trials // SLEEP_CONCURRENCY) * SLEEP_S
    print(f"(whole waves of {SLEEP_CONCURRENCY} trials cannot finish before {waves:.3f} s)")
    return [
        Line(f"(b) {name}", f"{walls[name]:.3f} s vs ideal {ideal:.3f} s", "<= 1.10x ideal",
             walls[name] / ideal, 1.10, False)
        for name in ("ablation, async agents", "ablation, sync agents (thread pool)")
    ]  # fmt: skip


# --------------------------------------------------------------------------- (c) resume


def _stored_results(n_tasks: int, *, fail_every: int = 7) -> Iterator[TaskResult]:
    for i in range(n_tasks):
        tid = f"t{i:07d}"
        yield TaskResult(task_id=tid, arm="baseline", passed=i % fail_every != 0)
        yield TaskResult(task_id=tid, arm="candidate", passed=i % (fail_every + 4) != 0)


def part_c(n_trials: int, repeats: int, workdir: Path) -> list[Line]:
    """(c) Resume bookkeeping: stored keys and the skip plan."""
    n_tasks = n_trials // 2
    tasks = _suite(n_tasks)
    config = CampaignConfig()
    print(f"\n== (c) resume bookkeeping with {n_trials:,} stored trials ==")
    with RunStore(workdir / "resume.db") as store:
        cid = _new_campaign(store, tasks, config)
        start = time.perf_counter()
        store.append_many(cid, _stored_results(n_tasks))
        print(f"bulk insert (append_many): {time.perf_counter() - start:.2f} s (not timed below)")

        def bookkeeping() -> None:
            skip = store.completed_keys(cid)
            plan = [
                t
                for t in trial_plan(tasks, runs=config.runs, seed=config.seed)
                if (t.task.task_id, t.arm, t.run) not in skip
            ]
            assert len(skip) == n_trials and not plan

        seconds = _best(bookkeeping, repeats)
        keys_s = _best(lambda: store.completed_keys(cid), repeats)
        checks_s = _best(
            lambda: store.check_resume(
                cid, suite_fingerprint=suite_fingerprint(tasks), task_digests=task_digests(tasks),
                baseline_agent="noop", candidate_agent="noop", config=config,
            ),
            repeats,
        )  # fmt: skip
        engine_s = _best(
            lambda: AblationEngine(config).run(noop, noop, tasks, skip=store.completed_keys(cid)),
            repeats,
        )
    print(f"completed_keys + skip plan:              {seconds:.3f} s")
    print(f"  of which completed_keys:               {keys_s:.3f} s")
    print(f"fingerprint + task digests + check_resume: {checks_s:.3f} s (info)")
    print(f"engine.run with everything skipped:      {engine_s:.3f} s (info)")
    return [
        Line("(c) completed_keys + skip plan", f"{seconds:.3f} s", "< 1 s", seconds, 1.0, False)
    ]


# --------------------------------------------------------------------------- (d) memory

_CHILD_PRELUDE = """
import json, resource, sys, time
from ablation import RunStore
path, n_tasks = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
"""

_INSERT_CHILD = _CHILD_PRELUDE + textwrap.dedent(
    """
    from ablation import CampaignConfig, TaskResult

    def results():
        for i in range(n_tasks):
            tid = f"t{i:07d}"
            yield TaskResult(task_id=tid, arm="baseline", passed=i % 7 != 0)
            yield TaskResult(task_id=tid, arm="candidate", passed=i % 11 != 0)

    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(), suite_fingerprint="bench", task_digests={},
            baseline_agent="noop", candidate_agent="noop", campaign_id="bench",
        )
        n = store.append_many(cid, results())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"n": n, "seconds": time.perf_counter() - start, "rss": rss}))
    """
)

_STORE_CHILD = _CHILD_PRELUDE + textwrap.dedent(
    """
    from ablation import CampaignConfig, Provenance
    from ablation.analysis.stored import report_from_store

    config = CampaignConfig()
    provenance = Provenance()  # the analysis fills in the settings it used
    with RunStore(path) as store:
        report = report_from_store(store, "bench", config=config, provenance=provenance)
    assert report.n_paired == n_tasks
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"n": 2 * report.n_paired, "seconds": time.perf_counter() - start,
                      "rss": rss, "uplift": report.uplift.estimate}))
    """
)

_ARRAYS_CHILD = _CHILD_PRELUDE + textwrap.dedent(
    """
    from array import array
    import numpy as np
    from ablation import CampaignConfig
    from ablation.analysis.build import build_report
    from ablation.analysis.pair_arms import pair_columns
    from ablation.columns import TrialColumns

    ids, base, cand = [], array("b"), array("b")
    with RunStore(path) as store:
        for row in store.trial_rows("bench"):
            if row.arm == "baseline":
                ids.append(row.task_id)
                base.append(row.passed)
            else:
                assert row.task_id == ids[-1], "rows come sorted by (task_id, arm, run)"
                cand.append(row.passed)
    streamed = time.perf_counter() - start
    id_col = np.asarray(ids, dtype=object)
    data = pair_columns(*(TrialColumns.verdicts(arm, id_col, np.frombuffer(v, np.int8).astype(bool))
                          for arm, v in (("baseline", base), ("candidate", cand))))
    report = build_report(data, config=CampaignConfig())
    assert report.n_paired == n_tasks
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"n": 2 * report.n_paired, "seconds": time.perf_counter() - start,
                      "streamed": streamed, "rss": rss, "uplift": report.uplift.estimate}))
    """
)


def _has_store_report() -> bool:
    """Whether the library builds a report straight from a store (``report_from_store``)."""
    try:
        from ablation.analysis.stored import report_from_store  # noqa: F401
    except ImportError:
        return False
    return True


def _child(code: str, *args: str, timeout: float = 1800) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _mib(kib_or_bytes: float) -> float:
    return kib_or_bytes * RSS_SCALE / 2**20


def part_d(n_trials: int, workdir: Path) -> list[Line]:
    """(d) Peak RSS of building the report of ``n_trials`` stored trials in a child process."""
    n_tasks = n_trials // 2
    path = str(workdir / "million.db")
    print(f"\n== (d) peak memory: report of {n_trials:,} stored trials ({n_tasks:,} tasks x 2) ==")
    floor = _mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    print(f"(this process: {floor:,.0f} MiB; a child's peak RSS counts from its parent's RSS)")
    insert = _child(_INSERT_CHILD, path, str(n_tasks))
    insert_peak = _mib(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(
        f"bulk insert child: {insert['n']:,} trials in {insert['seconds']:.1f} s "
        f"({insert['n'] / insert['seconds']:,.0f}/s), peak RSS {_mib(insert['rss']):,.0f} MiB"
    )
    size = Path(path).stat().st_size + sum(p.stat().st_size for p in workdir.glob("million.db-*"))
    print(f"store size: {size / 2**20:,.0f} MiB")
    if _has_store_report():
        label = "report_from_store (store columns, pair_columns)"
        measured = _child(_STORE_CHILD, path, str(n_tasks))
    else:
        label = "trial_rows -> pair_columns -> build_report"
        print("note: the analysis has no path from trial_rows; building arrays from the rows")
        measured = _child(_ARRAYS_CHILD, path, str(n_tasks))
    peak = _mib(measured["rss"])  # the report child's own high-water mark
    print(
        f"{label} child: {measured['seconds']:.1f} s, peak RSS {peak:,.0f} MiB "
        f"(insert child alone {insert_peak:,.0f} MiB)"
    )
    if _has_store_report():
        arrays = _child(_ARRAYS_CHILD, path, str(n_tasks))
        print(
            f"info: trial_rows -> pair_columns -> build_report child (binary columns only): "
            f"{arrays['seconds']:.1f} s (streaming {arrays['streamed']:.1f} s), "
            f"peak RSS {_mib(arrays['rss']):,.0f} MiB"
        )
    return [Line(f"(d) peak RSS, {label.split(' (')[0]}", f"{peak:,.0f} MiB", "< 1024 MiB",
                 peak / 1024, 1.0, False)]  # fmt: skip


# --------------------------------------------------------------------------- main


def _versions() -> None:
    names = ("ablation", "pydantic-evals", "pydantic", "numpy", "scipy", "rich")
    print(f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
          f"SQLite {sqlite3.sqlite_version}")  # fmt: skip
    print("; ".join(f"{name} {_version(name)}" for name in names))


def _summary(lines: list[Line]) -> None:
    print("\n== summary ==")
    print(f"{'measurement':<44}{'figure':<36}{'target':<16}{'ratio':>8}  result")
    for line in lines:
        print(
            f"{line.name:<44}{line.value:<36}{line.target:<16}{line.ratio:>8.2f}  "
            f"{'PASS' if line.passed else 'MISS'}"
        )


def main(argv: list[str] | None = None) -> int:
    """Run every part and print the summary table; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args(argv)
    _versions()
    repeats = 2 if args.quick else 3
    lines: list[Line] = []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        workdir = Path(tmp)
        # (d) first: on Linux a child's peak RSS starts at its parent's RSS when it was started,
        # so the children are spawned while this process is still small.
        lines_d = part_d(100_000 if args.quick else 1_000_000, workdir)
        lines += part_a(2_000 if args.quick else 10_000, repeats, workdir)
        lines += part_b(2_000, repeats)
        lines += part_c(20_000 if args.quick else 100_000, repeats, workdir)
        lines += lines_d
    _summary(lines)
    return 0 if all(line.passed for line in lines) else 1


if __name__ == "__main__":
    raise SystemExit(main())
