"""Command-line behaviours a user checks from outside, each through the real ``ablation`` command.

- ``compare --field`` decides between verdicts and numbers from every file, whatever their order,
  standard input and pipes included.
- ``--output`` that cannot be written is refused before anything runs (no agent call is spent),
  and an existing report is not truncated by a command that fails.
- ``compare --timestamps`` gives the comparison's wall-clock times; on a numeric field, which
  shows no time, it is refused.
- An option with no effect in the comparison's mode is a usage error naming it.
- Standard input named twice is a usage error.
- ``plan`` refuses ``--uplift`` with ``--tasks`` (two questions), and says in words that no uplift
  is detectable when none is.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.cli_shared import run_here

from ablation import stats

#: ``s`` holds verdicts written as 1/0 here, and plain numbers in the other file.
VERDICTS = [1, 0, 1]
NUMBERS = [0.4, 0.2, 0.1]


def _rows(path: Path, field: str, values: list) -> Path:
    path.write_text("".join(json.dumps({"id": f"t{i + 1}", field: v}) + "\n" for i, v in enumerate(values)))
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[Path, Path]:
    """``(verdicts, numbers)``: one field, 1/0 in the first file, fractions in the second."""
    return _rows(tmp_path / "mix3.jsonl", "s", VERDICTS), _rows(tmp_path / "mix2.jsonl", "s", NUMBERS)


def _with_stdin(args: list[str], stdin: Path) -> subprocess.CompletedProcess[str]:
    """``cat stdin | ablation ARGS``, in this process: ``sys.stdin`` is a pipe holding the bytes of
    ``stdin`` (which cannot be read twice, as a file could), restored afterwards."""
    read, write = os.pipe()
    os.write(write, stdin.read_bytes())  # a few lines: within the pipe's buffer
    os.close(write)
    saved = sys.stdin
    with open(read, "rb") as raw, io.TextIOWrapper(raw) as sys.stdin:
        try:
            return run_here(args)
        finally:
            sys.stdin = saved


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert lines, done
    return lines[-1]


# ----------------------------------------------------------------------------- the compare mode


def test_the_numeric_mode_does_not_depend_on_the_order_of_the_files(mixed: tuple[Path, Path]) -> None:
    verdicts, numbers = mixed
    for before, after, base, cand in ((numbers, verdicts, NUMBERS, VERDICTS),
                                      (verdicts, numbers, VERDICTS, NUMBERS)):  # fmt: skip
        done = run_here(["compare", str(before), str(after), "--field", "s", "--format", "json"])
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["n_pairs"] == 3
        assert result["mean_difference"] == pytest.approx(sum(cand) / 3 - sum(base) / 3)


def test_a_numeric_second_candidate_makes_every_file_numeric(mixed: tuple[Path, Path], tmp_path: Path) -> None:
    verdicts, numbers = mixed
    also = _rows(tmp_path / "also.jsonl", "s", [0, 1, 1])
    done = run_here(["compare", str(verdicts), str(also), str(numbers), "--field", "s", "--format", "json"])
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["candidates"]  # AFTER file -> its comparison
    assert list(results) == [str(also), str(numbers)]
    assert [r["mean_difference"] for r in results.values()] == pytest.approx(
        [sum(after) / 3 - sum(VERDICTS) / 3 for after in ([0, 1, 1], NUMBERS)]
    )


@pytest.mark.parametrize("numbers_on_stdin_as", ["before", "after"])
def test_standard_input_is_read_again_when_the_field_turns_out_numeric(
    mixed: tuple[Path, Path], numbers_on_stdin_as: str
) -> None:
    verdicts, numbers = mixed
    pair = ["-", str(verdicts)] if numbers_on_stdin_as == "before" else [str(verdicts), "-"]
    done = _with_stdin(["compare", *pair, "--field", "s", "--format", "json"], numbers)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_pairs"] == 3


def test_standard_input_named_twice_is_a_usage_error(tmp_path: Path) -> None:
    rows = _rows(tmp_path / "a.jsonl", "passed", [True, False, True])
    done = _with_stdin(["compare", "-", "-"], rows)
    assert done.returncode == 1 and done.stdout == ""
    line = _last_line(done)
    assert "standard input" in line and "more than once" in line


# ------------------------------------------------------------------ options with no effect here


def test_regression_delta_on_a_verdict_field_is_a_usage_error(tmp_path: Path) -> None:
    a = _rows(tmp_path / "a.jsonl", "passed", [True, False, True])
    b = _rows(tmp_path / "b.jsonl", "passed", [True, True, False])
    done = run_here(["compare", str(a), str(b), "--regression-delta", "0.1"])
    assert (done.returncode, done.stdout) == (1, "")
    assert _last_line(done) == (
        "ablation: error: argument --regression-delta: does not apply to a pass/fail --field (passed)"
    )


def test_a_futility_stop_on_compare_names_the_flag_compare_has(tmp_path: Path) -> None:
    rows = [i % 3 == 0 for i in range(40)]
    a = _rows(tmp_path / "a.jsonl", "passed", rows)
    b = _rows(tmp_path / "b.jsonl", "passed", [not r if i % 5 == 0 else r for i, r in enumerate(rows)])
    alone = run_here(["compare", str(a), str(b), "--stop-when-inconclusive-after", "5"])
    assert alone.returncode == 1 and "--sequential-replay" in _last_line(alone)
    # with the replay the stop applies: nothing is decided within 5 pairs here
    replay = run_here(["compare", str(a), str(b), "--sequential-replay", "--stop-when-inconclusive-after", "5",
                       "--format", "json"])  # fmt: skip
    sequential = json.loads(replay.stdout)["sequential"]
    assert (sequential["gate"], sequential["pairs"]) == ("futility", 5)


def test_timestamps_on_a_numeric_field_is_a_usage_error(mixed: tuple[Path, Path]) -> None:
    verdicts, numbers = mixed
    done = run_here(["compare", str(verdicts), str(numbers), "--field", "s", "--timestamps"])
    assert (done.returncode, done.stdout) == (1, "")
    assert "argument --timestamps: does not apply to a numeric --field (s)" in _last_line(done)


def test_compare_timestamps_are_the_comparisons_wall_clock(tmp_path: Path) -> None:
    a = _rows(tmp_path / "a.jsonl", "passed", [True, False, True])
    b = _rows(tmp_path / "b.jsonl", "passed", [True, True, False])
    start = datetime.now(UTC).replace(microsecond=0)
    done = run_here(["compare", str(a), str(b), "--timestamps", "--format", "json"], {"SOURCE_DATE_EPOCH": None})
    end = datetime.now(UTC)
    provenance = json.loads(done.stdout)["provenance"]
    times = [datetime.fromisoformat(provenance[k]) for k in ("started_at", "finished_at")]
    assert start <= times[0] <= times[1] <= end
    # without the flag, no wall clock: the same files give the same bytes
    plain = run_here(["compare", str(a), str(b), "--format", "json"], {"SOURCE_DATE_EPOCH": None})
    assert json.loads(plain.stdout)["provenance"]["started_at"] is None


# ----------------------------------------------------------------------------------- --output

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data={"n": i}, expected_output=2 * i) for i in range(4)]
"""
AGENTS = """\
import os


def counted(task):
    with open(os.environ["CALLS_FILE"], "a") as fh:
        fh.write("call\\n")
    return 2 * task["n"]
"""


def test_an_output_that_cannot_be_written_is_refused_before_any_agent_runs(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(SUITE)
    (tmp_path / "agents.py").write_text(AGENTS)
    calls, store = tmp_path / "calls.txt", tmp_path / "runs.db"
    spec = f"{tmp_path / 'agents.py'}:counted"
    args = ["run", str(tmp_path / "suite.py"), "--baseline", spec, "--candidate", spec, "--no-progress",
            "--store", str(store)]  # fmt: skip
    env = {"CALLS_FILE": str(calls)}
    bad = tmp_path / "no-such-folder" / "x.html"
    done = run_here([*args, "--output", str(bad)], env, cwd=tmp_path)
    assert done.returncode == 1
    assert _last_line(done) == (
        f"ablation: error: argument --output: cannot write the report to {bad}: no folder {bad.parent}"
    )
    assert not calls.exists() and not store.exists()  # nothing ran, nothing was stored
    # the same command with a folder that exists runs the campaign (the check refuses nothing else)
    good = tmp_path / "report.md"  # Markdown: an HTML page would draw its plots (~1 s), not needed here
    assert run_here([*args, "--output", str(good), "--format", "markdown"], env, cwd=tmp_path).returncode == 0
    assert len(calls.read_text().splitlines()) == 8 and good.stat().st_size > 0
    for command in (["report", "--store", str(store)], ["compare", str(good), str(good)]):
        refused = run_here([*command, "--output", str(bad)], cwd=tmp_path)
        assert refused.returncode == 1 and "argument --output" in _last_line(refused), command
    refused = run_here(["report", "--store", str(store), "--output", str(tmp_path)], cwd=tmp_path)
    assert _last_line(refused).endswith(f"--output: cannot write the report to {tmp_path}: it is a folder")


def test_an_existing_report_is_kept_when_the_command_fails(tmp_path: Path) -> None:
    a = _rows(tmp_path / "a.jsonl", "passed", [True, False, True])
    report = tmp_path / "report.md"
    report.write_text("the last good report\n")
    done = run_here(["compare", str(a), str(tmp_path / "missing.jsonl"), "--output", str(report)])
    assert done.returncode == 1 and "missing.jsonl" in _last_line(done)
    assert report.read_text() == "the last good report\n"


# --------------------------------------------------------------------------------------- plan


def test_plan_refuses_uplift_with_tasks_unless_sequential() -> None:
    done = run_here(["plan", "--discordance", "0.1", "--uplift", "0.03", "--tasks", "500"])
    assert (done.returncode, done.stdout) == (1, "")
    line = _last_line(done)
    assert "--uplift" in line and "--tasks" in line and "give one" in line
    simulated = run_here(["plan", "--discordance", "0.2", "--uplift", "-0.1", "--tasks", "60", "--sequential",
                          "--simulations", "20"])  # fmt: skip
    assert simulated.returncode == 0 and "sequential campaign over 60 tasks" in simulated.stdout


def test_plan_says_in_words_that_one_task_detects_no_uplift() -> None:
    assert math.isinf(stats.minimum_detectable_effect(1, psi=0.1))  # the statistics' answer
    done = run_here(["plan", "--discordance", "0.1", "--tasks", "1"])
    assert done.returncode == 0
    assert "inf" not in done.stdout
    assert done.stdout.startswith("no uplift is detectable with 1 task: ")
    mde = stats.minimum_detectable_effect(500, psi=0.1)
    assert f"minimum detectable uplift with 500 tasks: {mde:.4f}" in run_here(
        ["plan", "--discordance", "0.1", "--tasks", "500", "--two-sided"]
    ).stdout
