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
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TARGET_S = 1.0


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


def fetch(url: str) -> tuple[float, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read().decode()
    return time.perf_counter() - start, body


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="write the store here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / f"view{args.tasks}.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        start = time.perf_counter()
        cid = write_store(path, args.tasks)
        print(f"store: {args.tasks} tasks x 2 arms written in {time.perf_counter() - start:.1f} s")
        proc = subprocess.Popen(
            [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", "view",
             str(path), "--no-browser", "--port", "0"], stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            base = re.search(r"http://\S+/", proc.stdout.readline())
            assert base is not None, "ablation view printed no URL"
            root = base.group(0).rstrip("/")
            tasks = f"{root}/campaign/{cid}/tasks"
            cold, body = fetch(tasks)
            assert f"of {args.tasks} tasks" in body, body[:500]
            warm = statistics.median(fetch(tasks)[0] for _ in range(5))
            filtered = fetch(f"{tasks}?show=regressions&sort=candidate&dir=desc")[0]
            tenth = fetch(f"{tasks}?page=10&sort=latency_c")[0]
            campaign = fetch(f"{root}/campaign/{cid}")[0]
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    verdict = "PASS" if cold < TARGET_S else "MISS"
    print(f"{verdict} task table first page, cold (columns read, paired, table built): {cold:.3f} s "
          f"(target < {TARGET_S:.0f} s)")  # fmt: skip
    print(f"     warm: {warm:.3f} s; regressions sorted by candidate, desc: {filtered:.3f} s; "
          f"page 10 by latency: {tenth:.3f} s; campaign page (report built): {campaign:.3f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
