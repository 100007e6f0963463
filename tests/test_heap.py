"""The C heap (glibc): freed pages go back to the OS, and large arrays reuse freed memory."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import ablation
from ablation.cli.tuning import reuse_freed_memory

CODE = """
import os
from ablation.cli.tuning import release_freed_memory

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

keep = []
blobs = []
for i in range(200_000):  # 600-byte strings come from malloc, not from Python's small-object arenas
    blobs.append("x" * 600 + str(i))
    if i % 1000 == 0:
        keep.append(blobs[-1])  # a few survivors: the freed pages sit below them in the heap
del blobs
before = rss()
trimmed = release_freed_memory()
print(trimmed, before - rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_returns_freed_pages_below_live_ones() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    trimmed, released = out.stdout.split()
    assert trimmed == "True"
    assert int(released) > 50 * 2**20  # ~120 MB freed, held by the allocator until the trim


_MALLOC_PROBE = """
import ctypes, sys
import numpy as np
from ablation.cli.tuning import reuse_freed_memory

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
if sys.argv[1] == "reuse":
    reuse_freed_memory()
before = libc.mallinfo2().hblks
block = np.empty(1_000_000)  # 8 MB, as a million-row float column
print(libc.mallinfo2().hblks - before)
"""


@pytest.mark.parametrize("reuse", [True, False])
def test_after_reuse_freed_memory_glibc_serves_big_arrays_from_its_heap(reuse: bool) -> None:
    """In a fresh process glibc maps an 8 MB array on its own (``mallinfo2().hblks`` counts the
    mapped blocks: +1); after ``reuse_freed_memory`` it comes from the heap (+0), where freed
    arrays are used again. Elsewhere than glibc the call only has to run."""
    if platform.libc_ver()[0] != "glibc":
        reuse_freed_memory()
        return
    # a clean environment: the probe's heap must not depend on what other tests left in os.environ
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(Path(ablation.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", _MALLOC_PROBE, "reuse" if reuse else "plain"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    assert int(done.stdout) == (0 if reuse else 1)


_ARROW_POOL = """
import json, os, sys, tempfile
from ablation.cli.tuning import CommandTuning
from ablation.process_hooks import installed
from ablation.sources.readers import engine
from ablation.sources.readers.rows import ReadOptions

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

path = os.path.join(tempfile.mkdtemp(), "r.jsonl")
with open(path, "w") as fh:
    for i in range(100_000):
        fh.write(json.dumps({"id": f"t{i}", "passed": i % 2 == 0, "latency_s": i / 7, "category": "c"}) + "\\n")
engine.MIN_BYTES = 0
tuned = sys.argv[1] == "tuned"
if tuned:
    with installed(CommandTuning()):
        read = engine.engine_columns(path, ReadOptions(), None, path)
else:
    read = engine.engine_columns(path, ReadOptions(), None, path)
import pyarrow as pa
held = rss()
pa.default_memory_pool().release_unused()
print(len(read.columns.task_id), (held - rss()) >> 20)
"""


@pytest.mark.parametrize("tuned", [True, False])
def test_the_command_hands_pyarrows_parse_blocks_back_after_a_large_read(tuned: bool) -> None:
    """A read by pyarrow leaves its parsing blocks in pyarrow's pool (releasing them later frees
    ~17 MiB after 1e5 rows); under the command's hooks the read has already handed them back, so
    a later release finds (almost) nothing. A library call (no hooks) leaves the pool alone."""
    pytest.importorskip("pyarrow")
    # pyarrow's mimalloc purges freed pages on its own after a delay (10 ms), at a moment that
    # depends on the machine's load: a long delay leaves only the explicit releases measured
    env = {**os.environ, "MIMALLOC_PURGE_DELAY": "100000"}
    done = subprocess.run([sys.executable, "-c", _ARROW_POOL, "tuned" if tuned else "library"],
                          capture_output=True, text=True, check=True, env=env)  # fmt: skip
    rows, released_later = map(int, done.stdout.split())
    assert rows == 100_000
    if tuned:
        assert released_later <= 2
    else:
        assert released_later >= 8
