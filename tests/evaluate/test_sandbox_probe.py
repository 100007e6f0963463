"""bubblewrap's availability probe: run once while trials start together, bounded by the
sandbox's start-up limit, and a probe killed by a signal says so.

Each case puts a real executable named ``bwrap`` (a shell script) first on a private path and
calls the probe as the sandbox does, from several threads at once where that matters.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ablation.evaluate import sandbox_confinement as confinement


@pytest.fixture(autouse=True)
def _fresh_probe() -> Iterator[None]:
    confinement._probe_bubblewrap.cache_clear()
    yield
    confinement._probe_bubblewrap.cache_clear()


def _fake_bwrap(folder: Path, body: str) -> str:
    path = folder / "bwrap"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_trials_starting_together_share_one_probe(tmp_path: Path) -> None:
    launches = tmp_path / "launches"
    bwrap = _fake_bwrap(tmp_path, f"echo x >> {launches}; sleep 0.5; exit 0")
    answers: list[str | None] = []
    threads = [threading.Thread(target=lambda: answers.append(confinement._bubblewrap_problem(bwrap)))
               for _ in range(6)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [None] * 6
    assert launches.read_text().count("x") == 1


def test_a_probe_that_hangs_is_cut_at_the_probe_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confinement, "PROBE_LIMIT_S", 0.5)
    bwrap = _fake_bwrap(tmp_path, "exec sleep 60")
    start = time.monotonic()
    problem = confinement._bubblewrap_problem(bwrap)
    assert time.monotonic() - start < 10
    assert problem is not None and "could not start: TimeoutExpired" in problem


def test_the_probe_limit_is_the_sandbox_start_up_limit() -> None:
    from ablation.evaluate.sandbox_outcome import START_LIMIT_S

    assert confinement.PROBE_LIMIT_S == START_LIMIT_S


def test_a_probe_killed_by_a_signal_names_it(tmp_path: Path) -> None:
    bwrap = _fake_bwrap(tmp_path, "kill -KILL $$")
    problem = confinement._bubblewrap_problem(bwrap)
    assert problem is not None
    assert "(killed by SIGKILL)" in problem and "()" not in problem


def test_a_silent_failing_probe_names_its_exit_status(tmp_path: Path) -> None:
    bwrap = _fake_bwrap(tmp_path, "exit 3")
    problem = confinement._bubblewrap_problem(bwrap)
    assert problem is not None and "(exit status 3, nothing on stderr)" in problem
