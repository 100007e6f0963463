"""``compare --field`` read column-wise: the pyarrow engine's report is the row path's, byte for byte.

A numeric field is read by :func:`~ablation.sources.result_files.load_result_columns` with
``numeric=True``; the engine (forced on every file size here, as in test_numeric_csv.py) must
vouch for plain files in that mode and give the columns the row path gives, and
:func:`~ablation.analysis.numeric.task_means` / :func:`~ablation.analysis.numeric.arm_runs` of
those columns must be what the per-result versions gave. The oracles: the report of the same
files read row by row (engine off), and the report built in this test from
:func:`~ablation.sources.result_files.load_results` (one ``TaskResult`` per row) with the
per-result means and runs written out below (``np.mean`` of a task's values in file order).

The rows carry several runs per task (``--run-field``), ids in one file only, extra fields
(category, a nested ``meta``, usage numbers, a metric) and a ``status`` / ``error`` beside the
value: a plain row has no status of its own (:mod:`~ablation.sources.readers.generic` reads
them as text columns, ignored), so such a row keeps its value, by either path.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cli_shared import run_here
from helpers.numeric_oracle import as_arm_runs, by_task
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ablation.analysis.numeric import arm_runs, compare_numeric, task_means
from ablation.columns import results_to_columns
from ablation.render.numeric_doc import numeric_output
from ablation.schema import TaskResult
from ablation.sources.readers import engine
from ablation.sources.result_files import load_expected_ids, load_results

Row = tuple[str, int, float | int]


def oracle_means(results: list[TaskResult], field: str) -> dict[str, float]:
    """Each task's ``np.mean`` of its values in file order (one value as it is), first value first."""
    values: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if field in r.quality:
            values[r.task_id].append(r.quality[field])
    return {t: float(v[0]) if len(v) == 1 else float(np.mean(v)) for t, v in values.items()}


def oracle_runs(results: list[TaskResult], field: str) -> dict[str, tuple[frozenset[int], frozenset[int]]]:
    seen: dict[str, set[int]] = defaultdict(set)
    valued: dict[str, set[int]] = defaultdict(set)
    for r in results:
        seen[r.task_id].add(r.run)
        if field in r.quality:
            valued[r.task_id].add(r.run)
    return {t: (frozenset(s), frozenset(valued.get(t, ()))) for t, s in seen.items()}


@pytest.fixture
def engine_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[bool, bool]]]:
    """The engine on for files of any size; collects ``(numeric mode, vouched)`` of its reads."""
    from ablation.sources.readers import engine_columns

    reads: list[tuple[bool, bool]] = []
    real = engine_columns.read_columns

    def read_columns(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        reads.append((args[3].numeric, read is not None))
        return read

    monkeypatch.setattr(engine_columns, "read_columns", read_columns)
    yield reads


def _cell(value: float | int, csv: bool) -> Any:
    return repr(value) if csv else value


def _write(path: Path, rows: list[Row], csv: bool) -> None:
    """Rows with the value at ``score``, a run, and the fields a real result file carries."""
    records = []
    for i, (task, run, value) in enumerate(rows):
        failed = i % 4 == 1
        records.append({
            "id": task, "run": run, "score": _cell(value, csv), "category": f"c{i % 3}",
            "status": "error" if failed else "completed", "error": "Timeout" if failed else ("" if csv else None),
            "latency_s": round(0.5 + i / 7, 3), "tokens": 100 + i, "cost": 0.001 * (i % 5), "steps": i % 6,
            **({} if csv else {"meta": {"model": "m-2", "temperature": 0.7, "tags": ["a"]}}),
        })  # fmt: skip
    if csv:
        names = list(records[0])
        lines = [",".join(names)] + [",".join(str(r[k]) for k in names) for r in records]
        path.write_text("\n".join(lines) + "\n")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records))


VALUES = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False), st.integers(-3, 3),
    st.sampled_from([0.1, 0.2, 0.3, -0.0, 0.0, 1e-300, 5e-324, 123456.789]),
)  # fmt: skip


@st.composite
def arms(draw: st.DrawFn) -> tuple[list[Row], list[Row], list[str]]:
    """Two files' rows (t00 and t01 in both; others in one, both or neither) and expected ids."""
    tasks = [f"t{i:02d}" for i in range(draw(st.integers(3, 9)))]

    def arm(first: float) -> list[Row]:
        rows: list[Row] = []
        for i, task in enumerate(tasks):
            if i < 2 or draw(st.integers(0, 3)):
                rows += [(task, run, draw(VALUES)) for run in draw(st.sampled_from([[0], [0, 1], [2, 0, 1]]))]
        rows = draw(st.permutations(rows))
        return [(rows[0][0], rows[0][1], first), *rows[1:]]  # a number that is no verdict: numeric mode

    expected = tasks[:2] + [t for t in tasks[2:] if draw(st.booleans())] + ["t99"]
    return arm(0.25), arm(draw(VALUES)), expected


def _run(folder: Path, names: tuple[str, str], fmt: str, *extra: str) -> tuple[int, str, str]:
    args = ["compare", *names, "--field", "score", "--run-field", "run", "--format", fmt, *extra]
    done = run_here(args, cwd=folder)
    return done.returncode, done.stdout, done.stderr


def _oracle(folder: Path, names: tuple[str, str], expected: list[str] | None) -> str:
    """The JSON report built from one ``TaskResult`` per row (the row path's objects)."""
    b, c = (load_results(folder / n, field="score", run_field="run", numeric=True, arm=a)
            for n, a in zip(names, ("baseline", "candidate"), strict=True))  # fmt: skip
    result = compare_numeric(
        oracle_means(b, "score"), oracle_means(c, "score"), field="score", expected_ids=expected,
        runs=(as_arm_runs(oracle_runs(b, "score")), as_arm_runs(oracle_runs(c, "score"))),
    )  # fmt: skip
    return numeric_output([result], [names[1]], True) + "\n"


@pytest.mark.parametrize("csv", [False, True], ids=["jsonl", "csv"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=arms(), use_expected=st.booleans())
def test_the_engine_report_is_the_row_path_report(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
    engine_reads: list[tuple[bool, bool]], csv: bool, data: tuple[list[Row], list[Row], list[str]],
    use_expected: bool,
) -> None:  # fmt: skip
    before, after, expected = data
    engine_reads.clear()  # one example's reads (the fixture lives across examples)
    monkeypatch.setattr(engine, "MIN_BYTES", 4 << 20)
    folder = tmp_path_factory.mktemp("numeric")
    names = ("before.csv", "after.csv") if csv else ("before.jsonl", "after.jsonl")
    _write(folder / names[0], before, csv)
    _write(folder / names[1], after, csv)
    extra = ("--expected-ids", "ids.txt") if use_expected else ()
    (folder / "ids.txt").write_text("\n".join(expected) + "\n")
    rows = {fmt: _run(folder, names, fmt, *extra) for fmt in ("json", "terminal")}
    assert rows["json"][0] in (0, 2), rows["json"][2]
    assert rows["json"][1] == _oracle(folder, names, load_expected_ids(folder / "ids.txt") if use_expected else None)
    assert not engine_reads  # files this small: row by row
    monkeypatch.setattr(engine, "MIN_BYTES", 0)
    for fmt in ("json", "terminal"):
        assert _run(folder, names, fmt, *extra) == rows[fmt]
    assert engine_reads.count((True, True)) == 4, engine_reads  # both files, both formats: pyarrow


BAD = [
    ('"abc"', "abc", "verdict 'score' is not a number: 'abc'"),
    ("null", "", "verdict 'score' is not a number: "),
    ("true", "true", "verdict 'score' is not a number: "),
    ("1e999", "1e999", "quality score 'score' is not a finite number"),
]


@pytest.mark.parametrize("csv", [False, True], ids=["jsonl", "csv"])
@pytest.mark.parametrize(("json_cell", "csv_cell", "problem"), BAD)
def test_a_bad_value_gives_the_row_path_line_through_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_reads: list[tuple[bool, bool]],
    csv: bool, json_cell: str, csv_cell: str, problem: str,
) -> None:  # fmt: skip
    """The engine refuses the file and the row path names file, line and task id, in one line."""
    ext = "csv" if csv else "jsonl"
    rows = [(f"t{i}", 0, 0.25 + i / 8) for i in range(6)]
    _write(tmp_path / f"before.{ext}", rows, csv)
    _write(tmp_path / f"after.{ext}", rows, csv)
    text = (tmp_path / f"after.{ext}").read_text().splitlines()
    at = 4  # row t3 (line 4 of JSON lines, line 5 of CSV)
    if csv:
        cells = text[at].split(",")
        cells[2] = csv_cell
        text[at] = ",".join(cells)
    else:
        text[at - 1] = text[at - 1].replace('"score": 0.625', f'"score": {json_cell}')
    (tmp_path / f"after.{ext}").write_text("\n".join(text) + "\n")
    names = (f"before.{ext}", f"after.{ext}")
    row_path = _run(tmp_path, names, "json")
    monkeypatch.setattr(engine, "MIN_BYTES", 0)
    through_engine = _run(tmp_path, names, "json")
    assert through_engine == row_path
    assert (True, False) in engine_reads and (True, True) in engine_reads  # refused the bad file only
    code, out, err = through_engine
    (line,) = err.strip().splitlines()
    assert code == 1 and out == ""
    assert f"after.{ext}:{at + 1 if csv else at}: {problem}" in line and line.endswith("(task id 't3')"), line


@settings(max_examples=60, deadline=None)
@given(groups=st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20), min_size=1, max_size=8),
       big=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=120, max_size=300), seed=st.integers(0, 99))  # fmt: skip
def test_column_means_and_runs_are_the_per_result_ones(groups: list[list[float]], big: list[float], seed: int) -> None:
    """Tasks of 1 to 300 runs (numpy sums 8 and 128 values at a time: both lengths are passed),
    shuffled rows, and a trial with no value: the column versions give the per-result dicts,
    in the same order, the means equal to ``np.mean`` of the values in file order."""
    rng = np.random.default_rng(seed)
    rows = [(f"g{g}", run, v) for g, values in enumerate([*groups, big]) for run, v in enumerate(values)]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    results = [TaskResult(task_id=t, arm="baseline", run=r, quality={"s": v}) for t, r, v in rows]
    results.append(TaskResult(task_id="none", arm="baseline", run=0, status="error"))
    cols = results_to_columns(results, "baseline")
    means = task_means(cols, "s")
    assert list(means.items()) == list(oracle_means(results, "s").items())
    assert [str(v) for v in means.values()] == [str(v) for v in oracle_means(results, "s").values()]  # -0.0
    assert list(by_task(arm_runs(cols, "s")).items()) == list(oracle_runs(results, "s").items())
    assert task_means(results, "s") == means and task_means(cols, "other") == {}
