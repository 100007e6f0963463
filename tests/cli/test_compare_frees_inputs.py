"""``ablation compare`` drops the result files' columns once its reports are built, and has the
command's hooks give the memory back before it serialises the reports: at 10^6 rows the JSON
(~24 MB, held twice while pydantic writes it) stacked on ~100 MB of columns nothing read any
more (benchmarks/README.md, "compare's peak").

The reference is the objects themselves: weak references to every column read the command made,
looked at when the hook runs (the cyclic collector is paused then: only reference counting can
have freed them) and when the report is rendered.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here


def _write(path: Path, flip: int) -> None:
    rows = [
        {"id": f"t{i:03d}", "passed": (i % 3 == 0) != (i < flip), "latency_s": 1 + i / 10,
         "cost": 0.01, "category": "c" if i % 2 else "d"}
        for i in range(200)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("candidates", [1, 2])
def test_compare_frees_the_files_columns_before_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, candidates: int
) -> None:
    import ablation.analysis.background as background
    import ablation.render._json as json_renderer
    import ablation.sources.result_files as result_files
    from ablation.cli.tuning import CommandTuning

    reads: list[weakref.ref[Any]] = []
    events: list[tuple[str, list[bool]]] = []
    load, freed, render = result_files.load_result_columns, CommandTuning.memory_freed, json_renderer.render_json

    def tracked_load(*args: Any, **kwargs: Any) -> Any:
        read = load(*args, **kwargs)
        reads.append(weakref.ref(read))
        return read

    def tracked_freed(self: CommandTuning) -> None:
        events.append(("freed", [r() is None for r in reads]))
        freed(self)

    def tracked_render(report: Any) -> str:
        events.append(("render", [r() is None for r in reads]))
        return render(report)

    monkeypatch.setattr(background, "LARGE", 200)  # these files' 200 rows count as large
    monkeypatch.setattr(result_files, "load_result_columns", tracked_load)
    monkeypatch.setattr(CommandTuning, "memory_freed", tracked_freed)
    monkeypatch.setattr(json_renderer, "render_json", tracked_render)
    files = [tmp_path / f"arm{i}.jsonl" for i in range(1 + candidates)]
    for i, path in enumerate(files):
        _write(path, flip=10 * i)
    out = tmp_path / "report.json"
    done = run_here(["compare", *map(str, files), "--format", "json", "--output", str(out), "--resamples", "200"])
    assert done.returncode in (0, 2), done.stderr
    assert len(reads) == 1 + candidates
    assert events[0] == ("freed", [True] * len(reads))  # every file's columns gone, before any output
    renders = events[1:]  # several candidates' JSON is one document, written without render_json
    assert renders == [("render", [True] * len(reads))] * (1 if candidates == 1 else 0)
    written = json.loads(out.read_text(encoding="utf-8"))
    reports = [written] if candidates == 1 else [c["report"] for c in written["candidates"]]
    assert [r["n_paired"] for r in reports] == [200] * candidates  # the reports lost nothing
    assert all(r["latency"] is not None and r["categories"] for r in reports)


def test_a_small_compare_gives_nothing_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the large-report size a collection and a trim would cost more than they free, and a
    small comparison's start-up counts: the hook is not called."""
    from ablation.cli.tuning import CommandTuning

    calls: list[int] = []
    monkeypatch.setattr(CommandTuning, "memory_freed", lambda self: calls.append(1))
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for i, path in enumerate(files):
        _write(path, flip=10 * i)
    done = run_here(["compare", *map(str, files), "--format", "json", "--output", str(tmp_path / "r.json")])
    assert done.returncode in (0, 2), done.stderr
    assert calls == []
