"""``ablation plan --results BEFORE AFTER`` reads the files as ``ablation compare`` reads them, with
its reading flags (``--key``, ``--field``, ``--run-field``, ``--from``, ``--where``,
``--baseline-where``, ``--pass-values``, ``--max-input-bytes``): a file keyed by ``task_id``, or of
two filters, or that a reader's error asks to read ``--where`` or ``--run-field``, could not be
planned from, and the error named a flag ``plan`` refused. A numeric field or repeated runs, which
the exact McNemar plan of one verdict per task cannot use, are one line saying so; a reading flag
without ``--results`` is a usage error.

The reference for the counts is ``ablation compare``'s JSON report of the same files and flags.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli_shared import run_here


def _write(path: Path, rows: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _files(tmp_path: Path) -> tuple[str, str]:
    """Two files keyed by ``task_id``, verdicts in ``ok``, each row twice: split ``dev`` and ``test``."""
    def rows(flip: int) -> list[dict[str, object]]:
        return [{"task_id": f"t{i}", "ok": "yes" if (i % flip) else "no", "split": split}
                for i in range(40) for split in ("dev", "test")]  # fmt: skip
    return _write(tmp_path / "b.jsonl", rows(3)), _write(tmp_path / "a.jsonl", rows(4))


def test_plan_reads_the_files_with_compares_reading_flags(tmp_path: Path) -> None:
    before, after = _files(tmp_path)
    flags = ["--key", "task_id", "--field", "ok", "--where", "split=test", "--pass-values", "yes"]
    report_path = tmp_path / "report.json"
    run_here(["compare", before, after, *flags, "--format", "json", "-o", str(report_path)])
    report = json.loads(report_path.read_text())
    n, table = report["n_paired"], report["table"]
    done = run_here(["plan", "--results", before, after, *flags])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"observed: {n} paired tasks; discordance {(table['regressions'] + table['improvements']) / n:.4f} "
        f"({table['regressions']} regressions + {table['improvements']} improvements)"
    )
    assert n == 40


def test_plan_names_the_flag_a_readers_error_asks_for_and_takes_it(tmp_path: Path) -> None:
    before, after = _files(tmp_path)
    done = run_here(["plan", "--results", before, after, "--key", "task_id", "--field", "ok", "--pass-values", "yes"])
    assert done.returncode == 1 and "--where" in done.stderr  # two rows of t0: pick one
    base = ["plan", "--results", before, after, "--key", "task_id", "--field", "ok", "--pass-values", "yes"]
    assert run_here([*base, "--where", "split=dev"]).returncode == 0
    assert run_here([*base, "--baseline-where", "split=dev", "--where", "split=test"]).returncode == 0


def test_plan_refuses_repeated_runs_and_numbers_in_one_line(tmp_path: Path) -> None:
    runs = [{"id": f"t{i}", "run": r, "passed": (i + r) % 3 > 0} for i in range(20) for r in range(3)]
    flipped = [{**r, "passed": not r["passed"] if r["id"] in ("t1", "t2") else r["passed"]} for r in runs]
    before, after = _write(tmp_path / "b.jsonl", runs), _write(tmp_path / "a.jsonl", flipped)
    done = run_here(["plan", "--results", before, after, "--run-field", "run"])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"ablation: error: ablation plan: --results {before} {after}: 3 runs per task: plan sizes a suite "
        "for the exact McNemar test of one run per task (--where run=0 keeps one run)\n"
    )
    assert run_here(["plan", "--results", before, after, "--run-field", "run", "--where", "run=0"]).returncode == 0
    scores = [{"id": f"t{i}", "score": i / 10} for i in range(5)]
    a, b = _write(tmp_path / "s1.jsonl", scores), _write(tmp_path / "s2.jsonl", scores)
    done = run_here(["plan", "--results", a, b, "--field", "score"])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"ablation: error: ablation plan: --results: {a}:2: verdict 'score' is a number")
    assert done.stderr.endswith("plan sizes a suite for pass/fail verdicts (the exact McNemar test), not a numeric field\n")


def test_a_reading_flag_without_results_is_a_usage_error() -> None:
    done = run_here(["plan", "--discordance", "0.1", "--tasks", "100", "--where", "split=test"])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "ablation: error: ablation plan: --where says how --results files are read: give --results BEFORE AFTER\n"
