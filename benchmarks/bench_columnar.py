"""Realistic result files at the columnar floor: ``ablation compare`` beside DuckDB and polars.

Two files (baseline, candidate) of rows with the fields real result files carry::

    {"id": "task-0000001", "passed": true, "latency_s": 1.234, "cost": 0.00123, "tokens": 1234,
     "category": "math", "meta": {"model": "m-2", "attempt": 1}}

as JSON lines and as CSV (the nested ``meta`` flattened to ``meta_model``/``meta_attempt`` columns),
at 1e4, 1e5 and 1e6 rows. Each measurement is one fresh process timed from the outside, its peak
RSS read with ``resource.getrusage(RUSAGE_CHILDREN)`` after the one ``wait``:

- ``ablation``: ``ablation compare BEFORE AFTER --format json`` to ``/dev/null`` (exit 0 or 2);
- ``duckdb``: ``read_json_auto`` / ``read_csv`` of both files joined on ``id``, the pass counts of
  the four cells fetched (the read and join the report needs, no statistics);
- ``duckdb-columns``: the same read and join fetching every column the report reads (verdicts,
  latency, cost, tokens, category of both arms) as one Arrow table: the work of ``ablation-pair``;
- ``duckdb-exact``: DuckDB reading both files so that no cell is cast or dropped unseen (JSON
  lines: one pass for the keys, then every key as a ``JSON`` column; CSV: every cell as text),
  no checks after: the floor of an exact read through DuckDB;
- ``polars``: ``read_ndjson`` / ``read_csv`` of both, ``join`` on ``id``, the same counts;
- ``ablation-pair``: what ``compare`` does before its statistics (``load_result_columns`` of both
  files, the candidate's with the baseline's ids, and ``pair_columns``, under the command's
  process hooks): the same read and join as DuckDB's;
- ``ablation-read``: pyarrow's reading of both files alone, as the engine reads them
  (``engine_columns.read_table``): the floor of any exact read through pyarrow;
- ``msgspec-read`` (JSON lines only): msgspec decoding both files strictly into structs of this
  shape (a verdict that is not a boolean, fractional tokens or an unknown field refused, the nested
  ``meta`` kept raw), then the six columns as NumPy arrays: the floor of an exact read through
  msgspec, told the shape in advance (msgspec is installed for the benchmark only).

The data files are written once under ``--data`` (default ``/tmp/ablation-bench-columnar``) and
reused. Usage::

    python benchmarks/bench_columnar.py [--sizes 10000,100000,1000000] [--repeat 1]
        [--formats jsonl,csv]
        [--tools ablation,ablation-pair,ablation-read,msgspec-read,duckdb,duckdb-columns,
                 duckdb-exact,polars]

Prints one table row per (size, format, tool): median seconds, CPU seconds (user + system, all
threads) and peak RSS in MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = "from ablation.cli import main_entry; main_entry()"
CATEGORIES = ("math", "code", "retrieval", "writing", "tool-use")

DUCKDB = """
import sys, duckdb
fmt, a, b = sys.argv[1:4]
read = "read_json_auto" if fmt == "jsonl" else "read_csv"
con = duckdb.connect()
print(con.execute(f"SELECT a.passed, b.passed, count(*) FROM {read}('{a}') a "
                  f"JOIN {read}('{b}') b USING (id) GROUP BY ALL").fetchall())
"""

POLARS = """
import sys, polars as pl
fmt, a, b = sys.argv[1:4]
read = pl.read_ndjson if fmt == "jsonl" else pl.read_csv
joined = read(a).join(read(b), on="id", suffix="_b")
print(joined.group_by("passed", "passed_b").len().rows())
"""

# the same read and join, fetching every column the report reads (the work of ``ablation-pair``)
DUCKDB_COLUMNS = """
import sys, duckdb
fmt, a, b = sys.argv[1:4]
read = "read_json_auto" if fmt == "jsonl" else "read_csv"
cols = ", ".join(f"{arm}.{c} AS {c}_{arm}" for arm in "ab"
                 for c in ("passed", "latency_s", "cost", "tokens", "category"))
con = duckdb.connect()
print(con.execute(f"SELECT id, {cols} FROM {read}('{a}') a JOIN {read}('{b}') b USING (id)")
      .to_arrow_table().num_rows)
"""

# DuckDB read so that no cell is cast or dropped unseen: each file's keys found by one pass
# (``json_keys``), then every key read as a ``JSON`` column (its text, to check each cell's JSON
# type); CSV: every cell as text. Read only, no checks: the floor of an exact read through DuckDB.
DUCKDB_EXACT = """
import sys, duckdb
fmt, a, b = sys.argv[1:4]
con = duckdb.connect()
rows = 0
for path in (a, b):
    if fmt == "jsonl":
        keys = [k for (k,) in con.execute(
            f"SELECT DISTINCT unnest(json_keys(json)) FROM read_ndjson_objects('{path}')").fetchall()]
        columns = "{" + ", ".join(f"'{k}': 'JSON'" for k in keys) + "}"
        query = f"SELECT * FROM read_json('{path}', format='newline_delimited', columns={columns})"
    else:
        query = f"SELECT * FROM read_csv('{path}', all_varchar=true, delim=',', quote='', header=true)"
    rows += con.execute(query).to_arrow_table().num_rows
print(rows)
"""

# the reading and pairing ``compare`` does before its statistics: DuckDB's and polars' share
PAIR = """
import sys
from ablation.analysis.pair_arms import pair_columns
from ablation.cli.tuning import CommandTuning
from ablation.process_hooks import installed
from ablation.sources.result_files import load_result_columns
fmt, a, b = sys.argv[1:4]
with installed(CommandTuning()):
    before = load_result_columns(a, arm="baseline")
    after = load_result_columns(b, arm="candidate", ids_like=before.columns.task_id)
    print(len(pair_columns(before.columns, after.columns).task_ids))
"""

# pyarrow's read of both files as the engine makes it, nothing after: the reader's floor
READ = """
import sys
from pathlib import Path
from ablation.sources.readers.engine_columns import read_table
from ablation.sources.readers.rows import ReadOptions
fmt, a, b = sys.argv[1:4]
print(sum(read_table(Path(p), fmt, ReadOptions()).num_rows for p in (a, b)))
"""

# msgspec's strict decode of both JSON-lines files, the shape given, then the columns: its floor
MSGSPEC_READ = """
import sys, msgspec, numpy as np
fmt, a, b = sys.argv[1:4]
class Row(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    passed: bool
    latency_s: float
    cost: float
    tokens: int
    category: str
    meta: msgspec.Raw
decode = msgspec.json.Decoder(list[Row]).decode
total = 0
for path in (a, b):
    with open(path, "rb") as fh:
        rows = decode(b"[" + fh.read().rstrip(b"\\n").replace(b"\\n", b",") + b"]")
    n = len(rows)
    columns = [np.array([r.id for r in rows], dtype=object),
               np.fromiter((r.passed for r in rows), bool, n),
               *(np.fromiter((getattr(r, k) for r in rows), float, n) for k in ("latency_s", "cost", "tokens")),
               np.array([r.category for r in rows], dtype=object)]
    total += sum(len(c) for c in columns)
    del rows
print(total)
"""

# tools that read one format only
ONLY = {"msgspec-read": "jsonl"}


def write_files(n: int, data: Path) -> dict[str, tuple[Path, Path]]:
    """``{format: (baseline, candidate)}`` of ``n`` rows each, written unless present."""
    data.mkdir(parents=True, exist_ok=True)
    out: dict[str, tuple[Path, Path]] = {}
    for fmt in ("jsonl", "csv"):
        pair = tuple(data / f"{arm}-{n}.{fmt}" for arm in ("baseline", "candidate"))
        out[fmt] = pair  # type: ignore[assignment]
        if all(p.exists() for p in pair):
            continue
        for arm, path in zip(("baseline", "candidate"), pair, strict=True):
            rng = random.Random(f"{arm}-{n}")
            rate = 0.72 if arm == "baseline" else 0.70
            with path.open("w") as fh:
                if fmt == "csv":
                    fh.write("id,passed,latency_s,cost,tokens,category,meta_model,meta_attempt\n")
                for i in range(n):
                    passed = rng.random() < rate
                    latency = round(rng.lognormvariate(0.3, 0.6), 3)
                    cost = round(rng.uniform(0.0001, 0.01), 5)
                    tokens = rng.randint(100, 4000)
                    category = CATEGORIES[i % len(CATEGORIES)]
                    model, attempt = f"m-{rng.randint(1, 3)}", rng.randint(1, 2)
                    if fmt == "jsonl":
                        row = {"id": f"task-{i:07d}", "passed": passed, "latency_s": latency,
                               "cost": cost, "tokens": tokens, "category": category,
                               "meta": {"model": model, "attempt": attempt}}  # fmt: skip
                        fh.write(json.dumps(row, separators=(",", ":")) + "\n")
                    else:
                        fh.write(f"task-{i:07d},{str(passed).lower()},{latency},{cost},{tokens},"
                                 f"{category},{model},{attempt}\n")  # fmt: skip
    return out


def measure(cmd: list[str]) -> tuple[float, float, float]:
    """``(seconds, CPU seconds, peak RSS in MiB)`` of one fresh process running ``cmd``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err.decode()[-500:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def command(tool: str, fmt: str, a: Path, b: Path) -> list[str]:
    if tool == "ablation":
        return [sys.executable, "-c", LAUNCH, "compare", str(a), str(b), "--format", "json",
                "--output", os.devnull]  # fmt: skip
    script = {
        "duckdb": DUCKDB,
        "duckdb-columns": DUCKDB_COLUMNS,
        "duckdb-exact": DUCKDB_EXACT,
        "polars": POLARS,
        "ablation-pair": PAIR,
        "ablation-read": READ,
        "msgspec-read": MSGSPEC_READ,
    }[tool]
    return [sys.executable, "-c", script, fmt, str(a), str(b)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--formats", default="jsonl,csv")
    ap.add_argument(
        "--tools",
        default="ablation,ablation-pair,ablation-read,msgspec-read,duckdb,duckdb-columns,duckdb-exact,polars",
    )
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--data", type=Path, default=Path("/tmp/ablation-bench-columnar"))
    args = ap.parse_args()
    print(f"{'rows':>9} {'format':6} {'tool':14} {'seconds':>8} {'cpu s':>6} {'peak MiB':>9}")
    for n in (int(s) for s in args.sizes.split(",")):
        files = write_files(n, args.data)
        for fmt in args.formats.split(","):
            for tool in args.tools.split(","):
                if ONLY.get(tool, fmt) != fmt:
                    continue
                # each child is its own process: RUSAGE_CHILDREN is the largest child so far, so
                # each figure runs in a fresh measuring process too
                runs = [json.loads(subprocess.run(
                    [sys.executable, __file__, "--child", tool, fmt, *map(str, files[fmt])],
                    capture_output=True, text=True, check=True).stdout) for _ in range(args.repeat)]  # fmt: skip
                seconds, cpu, rss = (statistics.median(r[i] for r in runs) for i in range(3))
                print(f"{n:>9} {fmt:6} {tool:14} {seconds:8.2f} {cpu:6.2f} {rss:9.0f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tool, fmt, a, b = sys.argv[2:6]
        print(json.dumps(measure(command(tool, fmt, Path(a), Path(b)))))
    else:
        main()
