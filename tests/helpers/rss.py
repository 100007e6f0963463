"""Run the command line in a fresh wrapper process and read the peak RSS of that run alone.

``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` is the largest peak of the children a process
has waited for; read in a wrapper whose only child is the ``ablation`` command, it is that
command's own peak resident set, in KiB on Linux (not mixed with earlier runs of the test worker).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from helpers.cli import LAUNCH, REPO

_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'rc': p.returncode, 'out': p.stdout, 'err': p.stderr, 'peak_kib': peak}))\n"
)


@dataclass(frozen=True)
class Measured:
    """A finished command: exit code, streams and its peak RSS in MiB."""

    returncode: int
    stdout: str
    stderr: str
    peak_mib: float


def run_measured(args: Sequence[str], env: Mapping[str, str], *, timeout: float = 120) -> Measured:
    """Run ``ablation ARGS`` from the repository root; return it with its peak RSS."""
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, sys.executable, "-c", LAUNCH, *args],
        cwd=REPO, env=dict(env), capture_output=True, text=True, timeout=timeout, check=True,
    )  # fmt: skip
    data = json.loads(proc.stdout)
    return Measured(data["rc"], data["out"], data["err"], data["peak_kib"] / 1024)
