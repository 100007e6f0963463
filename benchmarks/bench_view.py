"""Viewer benchmark: the task table's first page on a stored campaign of 10^5 tasks.

A store is written the way ``bench_scale.py`` writes one (``append_many`` of seeded
``TaskResult`` batches, both arms, with categories, latencies and a few errors), then the real
``ablation view`` command serves it on 127.0.0.1 and the page is fetched over HTTP:

- ``cold``: the first request of the task table, which reads the campaign's columns, pairs and
  classifies its tasks (the report's own pairing, without its statistics) and builds the table;
- ``warm``: the same page again (median of five), and a filtered, sorted page
  (regressions, sorted by candidate pass rate, descending), and the tenth page;
- the campaign page, whose first request builds the whole report (as ``ablation report``).

Target: cold < 1 s at 10^5 tasks. Each figure is a wall time in this process around one HTTP
request; the server is a separate process. Usage:
``python benchmarks/bench_view.py [--tasks 100000] [--keep DIR]``.

``--long-trace``: the server's peak memory (``VmHWM`` of ``/proc/PID/status``, Linux) for one task
page and one page of its steps, each in a fresh server, of a task whose trace is
:data:`TRACE_STEPS` steps of :data:`STEP_BYTES` characters in every run of both arms (about 50 MB
of JSON a trial), with 1 and 3 runs an arm, the task unchanged (both arms pass: the report's
drill-downs do not read it) or a regression (the drill-downs read every run of it). The task page
builds the campaign's report first, as a fresh server does.

``--history N``: a suite's history of every campaign (``/suite/FP?limit=0``) in a fresh server, of
``N`` complete campaigns of :data:`HISTORY_TASKS` tasks (one written by the store, the others
copies of its rows by SQL): wall time and the server's peak memory. ``--history-tasks T``: ``T``
tasks a campaign; ``--by-store``: every campaign written by the store (its own trials, seeded
by its number, and its own arm snapshots, as a campaign that ran has; SQL copies have none, so
their columns are read from the rows), then the page is fetched cold and once more.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

TARGET_S = 1.0
#: The long trace of ``--long-trace``: its steps and each step's characters.
TRACE_STEPS, STEP_BYTES = 10_000, 5_000
#: Tasks of each campaign of ``--history``.
HISTORY_TASKS = 200


def write_store(path: Path, n: int) -> str:
    """A store holding one complete campaign of ``n`` tasks; its id."""
    from ablation.config import CampaignConfig
    from ablation.schema import TaskResult
    from ablation.store.run_store import RunStore

    cats = ("algebra", "geometry", "logic", "retrieval")
    ids = [f"task-{i:07d}" for i in range(n)]
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=1000), suite_fingerprint="bench-view",
            task_digests=dict.fromkeys(ids, "d"), baseline_agent="b", candidate_agent="c",
        )  # fmt: skip
        step = 50_000
        for arm, p, seed in (("baseline", 0.6, 1), ("candidate", 0.62, 2)):
            rng = random.Random(seed)
            for lo in range(0, n, step):
                rows = []
                for i in range(lo, min(n, lo + step)):
                    error = rng.random() < 0.01
                    rows.append(TaskResult(
                        task_id=ids[i], arm=arm, passed=not error and rng.random() < p,
                        status="error" if error else "completed", latency_s=rng.random(),
                        error_type="RuntimeError" if error else None, category=cats[i % 4],
                    ))  # fmt: skip
                store.append_many(cid, rows)
        store.set_status(cid, "complete")
    return cid


def fetch(url: str, timeout: float = 120) -> tuple[float, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body = response.read().decode()
    return time.perf_counter() - start, body


@contextlib.contextmanager
def serve(path: Path) -> Iterator[tuple[str, int]]:
    """``ablation view PATH`` in its own process: its root URL and process id."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view",
         str(path), "--no-browser", "--port", "0"], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        base = re.search(r"http://\S+/", proc.stdout.readline())
        assert base is not None, "ablation view printed no URL"
        yield base.group(0).rstrip("/"), proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a request still being served
            proc.kill()
            proc.wait()


def peak_mib(pid: int) -> float:
    """The process's peak resident set so far (``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/PID/status (Linux only)")


def write_long_trace(path: Path, runs: int, regression: bool) -> str:
    """A store of one complete campaign: task ``big`` whose every trial has a trace of
    :data:`TRACE_STEPS` steps (the arms' traces differ from the middle on), and 20 small tasks."""
    from ablation.config import CampaignConfig
    from ablation.schema import TaskResult
    from ablation.store.run_store import RunStore

    half = TRACE_STEPS // 2
    ids = ["big", *(f"small-{i}" for i in range(20))]
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=200, seed=1), suite_fingerprint="long-trace",
            task_digests=dict.fromkeys(ids, "d"), baseline_agent="m:b", candidate_agent="m:c",
        )  # fmt: skip
        for arm in ("baseline", "candidate"):
            for run in range(runs):
                trace = [{"step": k, "text": (f"{arm if k >= half else 'same'}{run}-{k} " * STEP_BYTES)[:STEP_BYTES]}
                         for k in range(TRACE_STEPS)]  # fmt: skip
                passed = arm == "baseline" or not regression
                store.append_many(cid, [TaskResult(task_id="big", arm=arm, run=run, passed=passed, trace=trace)])
                del trace
                store.append_many(cid, [TaskResult(task_id=t, arm=arm, run=run, passed=True) for t in ids[1:]])
        store.set_status(cid, "complete")
    return cid


def long_trace(directory: Path) -> None:
    """Print the server's peak memory for the task page and a steps page of the long trace."""
    print(f"task 'big': {TRACE_STEPS} steps of {STEP_BYTES} characters in every trial")
    for regression in (False, True):
        for runs in (1, 3):
            path = directory / f"long-{runs}-{int(regression)}.db"
            path.unlink(missing_ok=True)
            cid = write_long_trace(path, runs, regression)
            figures = []
            for name, page in (("task page", f"/campaign/{cid}/task?id=big"),
                               ("steps page", f"/campaign/{cid}/steps?id=big&arm=candidate&run=0&field=trace&page=30")):  # fmt: skip
                with serve(path) as (root, pid):
                    start = peak_mib(pid)
                    wall, body = fetch(root + page)
                    figures.append(f"{name} {peak_mib(pid):.0f} MiB ({len(body) / 1e3:.0f} kB, {wall:.2f} s)")
            kind = "regression" if regression else "unchanged"
            print(f"{runs} run(s) an arm, {kind}: server at start {start:.0f} MiB; peak with " + ", ".join(figures))
            path.unlink()


def write_history(path: Path, n: int, tasks: int = HISTORY_TASKS, by_store: bool = False) -> str:
    """``n`` complete campaigns of one suite of ``tasks`` tasks (the first written by the store,
    the others copies of its campaign and trial rows by SQL, or each written by the store with
    ``by_store``); the suite's fingerprint."""
    import sqlite3

    from ablation.config import CampaignConfig
    from ablation.schema import TaskResult
    from ablation.store.run_store import RunStore

    suite, rng = "h" * 64, random.Random(3)
    ids = [f"task-{i:05d}" for i in range(tasks)]
    if by_store:
        with RunStore(path) as store:
            for k in range(n):
                rng = random.Random(k)
                cid = store.create_campaign(
                    config=CampaignConfig(n_resamples=1000), suite_fingerprint=suite,
                    task_digests=dict.fromkeys(ids, "d"), baseline_agent="b", candidate_agent="c",
                    campaign_id=f"c-{k:05d}",
                )  # fmt: skip
                store.append_many(cid, [
                    TaskResult(task_id=t, arm=arm, passed=rng.random() < (0.6 if arm == "baseline" else 0.62),
                               latency_s=rng.random())
                    for t in ids for arm in ("baseline", "candidate")
                ])  # fmt: skip
                store.set_status(cid, "complete")
                store.update_provenance(cid, verdict="pass")
        return suite
    with RunStore(path) as store:
        first = store.create_campaign(
            config=CampaignConfig(n_resamples=1000), suite_fingerprint=suite, task_digests=dict.fromkeys(ids, "d"),
            baseline_agent="b", candidate_agent="c", campaign_id="c-00000",
        )  # fmt: skip
        store.append_many(first, [TaskResult(task_id=t, arm=arm, passed=rng.random() < 0.6, latency_s=rng.random())
                                  for t in ids for arm in ("baseline", "candidate")])  # fmt: skip
        store.set_status(first, "complete")
        store.update_provenance(first, verdict="pass")
    with sqlite3.connect(path) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(campaigns)") if r[1] != "id"]
        tcols = [r[1] for r in conn.execute("PRAGMA table_info(trials)") if r[1] != "campaign_id"]
        for k in range(1, n):
            conn.execute(f"INSERT INTO campaigns (id, {', '.join(cols)}) SELECT ?, {', '.join(cols)} "
                         "FROM campaigns WHERE id = ?", (f"c-{k:05d}", first))  # fmt: skip
            conn.execute(f"INSERT INTO trials (campaign_id, {', '.join(tcols)}) SELECT ?, {', '.join(tcols)} "
                         "FROM trials WHERE campaign_id = ?", (f"c-{k:05d}", first))  # fmt: skip
    conn.close()
    return suite


def history(directory: Path, n: int, tasks: int = HISTORY_TASKS, by_store: bool = False) -> None:
    """Print the wall time and the server's peak memory of a suite history of ``n`` campaigns
    of ``tasks`` tasks (with ``by_store``, a second request's wall time too)."""
    path = directory / f"history{n}-{tasks}{'-store' if by_store else ''}.db"
    if not (by_store and path.exists()):  # a store written by the store is kept and reused
        path.unlink(missing_ok=True)
        start = time.perf_counter()
        write_history(path, n, tasks, by_store)
        print(f"store: {n} campaigns of {tasks} tasks written in {time.perf_counter() - start:.1f} s")
    suite = "h" * 64
    with serve(path) as (root, pid):
        wall, body = fetch(f"{root}/suite/{suite}?limit=0", timeout=900)
        rows = body.count("<tr><td><a href=")
        print(f"suite history, every campaign: {wall:.2f} s, peak {peak_mib(pid):.0f} MiB, "
              f"{len(body) / 1e6:.1f} MB, {rows} campaigns listed")  # fmt: skip
        if by_store:
            print(f"the same page again: {fetch(f'{root}/suite/{suite}?limit=0', timeout=900)[0]:.2f} s")
    if not by_store:
        path.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="write the store here and keep it")
    parser.add_argument("--long-trace", action="store_true", help="peak memory of a long trace's task page")
    parser.add_argument("--history", type=int, metavar="N", help="a suite history of N campaigns")
    parser.add_argument("--history-tasks", type=int, default=HISTORY_TASKS, metavar="T", help="tasks a campaign")
    parser.add_argument("--by-store", action="store_true", help="every campaign written by the store")
    args = parser.parse_args()
    if args.history:
        with tempfile.TemporaryDirectory() as tmp:
            history(args.keep or Path(tmp), args.history, args.history_tasks, args.by_store)
        return 0
    if args.long_trace:
        with tempfile.TemporaryDirectory() as tmp:
            long_trace(args.keep or Path(tmp))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / f"view{args.tasks}.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        start = time.perf_counter()
        cid = write_store(path, args.tasks)
        print(f"store: {args.tasks} tasks x 2 arms written in {time.perf_counter() - start:.1f} s")
        with serve(path) as (root, _):
            tasks = f"{root}/campaign/{cid}/tasks"
            cold, body = fetch(tasks)
            assert f"of {args.tasks} tasks" in body, body[:500]
            warm = statistics.median(fetch(tasks)[0] for _ in range(5))
            filtered = fetch(f"{tasks}?show=regressions&sort=candidate&dir=desc")[0]
            tenth = fetch(f"{tasks}?page=10&sort=latency_c")[0]
            campaign = fetch(f"{root}/campaign/{cid}")[0]
    verdict = "PASS" if cold < TARGET_S else "MISS"
    print(f"{verdict} task table first page, cold (columns read, paired, table built): {cold:.3f} s "
          f"(target < {TARGET_S:.0f} s)")  # fmt: skip
    print(f"     warm: {warm:.3f} s; regressions sorted by candidate, desc: {filtered:.3f} s; "
          f"page 10 by latency: {tenth:.3f} s; campaign page (report built): {campaign:.3f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
