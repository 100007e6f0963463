"""Run the ``ablation`` command line in a subprocess (or, :func:`run_here`, in this process) and
inspect what it leaves behind.

Used by the end-to-end tests (kill -9, Ctrl-C, resume, baseline reuse, Dask). The command line
is started as ``python -c 'from ablation.cli import main_entry; main_entry()' ARGS`` with the
current interpreter, from the repository root, so that paths such as
``tests/helpers/slow_suite.py`` resolve as they do for a user.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
SUITE = "tests/helpers/slow_suite.py"
AGENTS = "tests/helpers/slow_agents.py"
LAUNCH = "import sys; from ablation.cli import main_entry; main_entry()"

#: Report keys whose values are measured times, timestamps or ids: they legitimately differ
#: between two runs of the same campaign.
VOLATILE_KEYS = frozenset({"started_at", "finished_at", "campaign_id", "wall_s"})


def cli_env(**extra: str | os.PathLike[str] | None) -> dict[str, str]:
    """The environment of a command-line subprocess: ours, plus ``extra`` (``None`` removes)."""
    env = dict(os.environ)
    env.pop("SLOW_SUITE_CHANGE", None)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(TESTS), str(REPO), env.get("PYTHONPATH", "")) if p
    )
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = os.fspath(value)
    return env


def fresh_python(code: str, cwd: Path | None = None) -> str:
    """What ``code`` prints, run in a fresh interpreter (nothing imported by other tests)."""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True,
        env=cli_env(),
    )  # fmt: skip
    return proc.stdout


def fresh_json(code: str) -> Any:
    """The JSON that ``code`` prints on its last line, run by :func:`fresh_python`."""
    return json.loads(fresh_python(code).strip().splitlines()[-1])


def run_args(
    store: Path | None,
    *,
    candidates: Sequence[str] = ("candidate",),
    baseline: str = "baseline",
    agents: str = AGENTS,
    suite: str = SUITE,
    seed: int = 5,
    extra: Sequence[str] = (),
) -> list[str]:
    """Arguments of ``ablation run`` on the slow suite with JSON output and no progress bar."""
    args = ["run", suite, "--baseline", f"{agents}:{baseline}"]
    for name in candidates:
        args += ["--candidate", f"{agents}:{name}"]
    if store is not None:
        args += ["--store", str(store)]
    args += ["--concurrency", "8", "--no-progress", "--format", "json", "--seed", str(seed)]
    return [*args, *extra]


def start(args: Sequence[str], env: Mapping[str, str], **popen: Any) -> subprocess.Popen[str]:
    """Start ``ablation ARGS`` in the background (stdout and stderr piped, text mode)."""
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=REPO,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def run(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run ``ablation ARGS`` to completion and return the finished process."""
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=REPO,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_here(
    args: Sequence[str],
    env: Mapping[str, str | os.PathLike[str] | None] | None = None,
    *,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess[str]:
    """Run ``ablation ARGS`` in this process and return what :func:`run` would return.

    :func:`ablation.cli.main` is called with ``cwd`` as the working directory, the variables of
    ``env`` set in ``os.environ`` (``None`` removes one) and ``sys.stdout``/``sys.stderr``
    captured; all three are restored afterwards. The same command code runs as in a subprocess,
    without an interpreter start and the imports of a command (about a second each). Assumes what
    the caller checks does not depend on a fresh interpreter: start-up imports, signals sent to
    the process, hash randomisation between runs, writes to file descriptor 1 or 2 by user code,
    and the exit of :func:`ablation.cli.main_entry` are checked through :func:`run` or
    :func:`start` instead.
    """
    from ablation.cli import main

    saved_env, saved_cwd = dict(os.environ), Path.cwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        for key, value in (env or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = os.fspath(value)
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(saved_cwd)
        for key in os.environ.keys() - saved_env.keys():  # changed in place: threads that
            del os.environ[key]  # outlive the command never see an empty environment
        for key, value in saved_env.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
    return subprocess.CompletedProcess(["ablation", *args], code, out.getvalue(), err.getvalue())


def stored_trials(store: Path) -> int:
    """Trials committed to ``store`` so far (0 while the file or its tables do not exist yet)."""
    if not store.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(store, timeout=5.0)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not created yet
        return 0


def wait_until(
    predicate: Callable[[], bool],
    *,
    timeout: float,
    proc: subprocess.Popen[str] | None = None,
    interval: float = 0.01,
) -> None:
    """Poll ``predicate`` until it holds; fail if ``timeout`` passes or ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"the command line exited early ({proc.returncode}): {err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached within {timeout} s")
        time.sleep(interval)


def interrupt(
    proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGINT, *, when: Callable[[], bool] | None = None
) -> tuple[str, str]:
    """Send ``sig`` to ``proc`` (once ``when()`` holds, within 60 s) and return what it wrote; the
    process is killed and reaped if anything fails or it outlives 30 s."""
    try:
        if when is not None:
            wait_until(when, timeout=60, proc=proc)
        proc.send_signal(sig)
        return proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def kill(proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGKILL) -> None:
    """Send ``sig`` to ``proc`` (if still running) and reap it."""
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.communicate(timeout=30)


def stable(report: Any) -> Any:
    """A JSON report without measured times, timestamps and campaign ids.

    Drops every key that names a latency (``latency``, ``latency_s``, ``latency_mean_s`` ...),
    plus :data:`VOLATILE_KEYS`. What remains must be identical between two runs with the same
    suite, agents and seed (DESIGN.md section 5, determinism).
    """
    if isinstance(report, dict):
        return {
            k: stable(v) for k, v in report.items() if "latency" not in k and k not in VOLATILE_KEYS
        }
    if isinstance(report, list):
        return [stable(v) for v in report]
    return report


def trial_keys(store: Path) -> list[tuple[str, str, str, int, int]]:
    """``(campaign_id, task_id, arm, run, copies)`` of every stored trial key."""
    with contextlib.closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT campaign_id, task_id, arm, run, COUNT(*) FROM trials"
            " GROUP BY campaign_id, task_id, arm, run ORDER BY 1, 2, 3, 4"
        ).fetchall()


def campaigns(store: Path) -> list[tuple[str, str, int]]:
    """``(campaign_id, status, n_trials)`` of every stored campaign, oldest first."""
    with contextlib.closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT c.id, c.status, (SELECT COUNT(*) FROM trials t WHERE t.campaign_id = c.id)"
            " FROM campaigns c ORDER BY c.created_at, c.rowid"
        ).fetchall()
