"""Cost of one code-test sandbox run, beside a bare interpreter start doing the same work.

What is measured: the wall time of ``ablation.evaluate.sandbox.run_python_tests`` on a
one-function solution and two asserts (what a codegen task's check is), per confinement that can
run here, and, side by side in the same rounds, the reference: ``subprocess.run([sys.executable,
"-c", code + tests])``, the least any out-of-process check can cost (one interpreter start, no
isolation at all). Rounds alternate the runners so that a change of machine load hits them
alike; each figure is the median over rounds of the per-run mean.

Run it from the interpreter users run (a virtualenv): ``python benchmarks/bench_sandbox.py
[--runs N] [--rounds R]``. It prints the versions, one line per runner with its median and its
ratio to the bare start, and exits 0 (no target: this is a cost to know, stated in
docs/SECURITY.md and benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from ablation.evaluate.sandbox import SandboxLimits, run_python_tests
from ablation.evaluate.sandbox_confinement import CONFINEMENTS

CODE = "def add(a, b):\n    return a + b\n"
TESTS = "assert add(1, 2) == 3\n\ndef test_add():\n    assert add(2, 2) == 4\n"
LIMITS = SandboxLimits(time_limit_s=30)


def bare() -> None:
    done = subprocess.run([sys.executable, "-c", CODE + TESTS], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr


def sandboxed(confinement: str) -> Callable[[], None]:
    def one() -> None:
        result = run_python_tests(CODE, TESTS, LIMITS, confinement=confinement)
        assert result.passed, result.reason

    return one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per round and runner")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bwrap = shutil.which("bwrap")
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip() if bwrap else "absent"
    print(f"python {platform.python_version()} ({sys.executable}); {version}; {platform.platform()}")
    runners: dict[str, Callable[[], None]] = {"bare subprocess.run": bare}
    for name, confinement in CONFINEMENTS.items():
        problem = confinement.unavailable()
        if problem is None:
            runners[f"run_python_tests({name})"] = sandboxed(name)
        else:
            print(f"{name}: not measured ({problem})")
    for run in runners.values():  # warm: imports, the seccomp filter, the bubblewrap probe
        run()
    means: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(args.rounds):
        for name, run in runners.items():
            start = time.perf_counter()
            for _ in range(args.runs):
                run()
            means[name].append((time.perf_counter() - start) / args.runs)
    reference = statistics.median(means["bare subprocess.run"])
    for name, values in means.items():
        median = statistics.median(values)
        print(
            f"{name:34s} {median * 1000:7.1f} ms per run "
            f"(rounds {min(values) * 1000:.1f}-{max(values) * 1000:.1f}), "
            f"{median / reference:4.2f}x the bare start"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
