"""The cyclic collector: paused while the ablation command builds a report, left alone by library calls."""

from __future__ import annotations

import contextlib
import gc

import pytest
from helpers.random_trials import campaign

from ablation.analysis import build
from ablation.cli.tuning import CommandTuning, collector_paused
from ablation.config import CampaignConfig
from ablation.process_hooks import installed


def test_the_collector_is_restored_after_the_block_even_when_it_raises() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner block must not switch it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller who disabled it keeps it disabled
    finally:
        gc.enable()


@pytest.mark.parametrize("tuned", [False, True], ids=["library call", "the command's tuning"])
def test_a_report_pauses_the_collector_only_where_the_command_tunes_its_process(
    monkeypatch: pytest.MonkeyPatch, tuned: bool
) -> None:
    # A library call leaves the host process's collector alone; the ablation command (which
    # installs CommandTuning) builds its reports with the collector paused, and restores it.
    seen: list[bool] = []
    real = build._parts

    def spy(*args: object) -> object:
        seen.append(gc.isenabled())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_parts", spy)
    baseline, candidate = campaign(0, 200)
    with installed(CommandTuning()) if tuned else contextlib.nullcontext():
        build.compare_results(baseline, candidate, config=CampaignConfig(n_resamples=200))
    assert seen == [not tuned]
    assert gc.isenabled()


def test_objects_made_in_the_pause_join_the_oldest_generation_with_no_collection() -> None:
    # Without the promotion, the first allocation after the block runs a young collection that
    # walks everything made in it (57-89 ms after a 1e6-task compare_results).
    collections: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        with collector_paused():
            made = [[i] for i in range(5000)]  # 5,001 young containers, over the threshold of 700
        after = [[i] for i in range(100)]  # allocations that would set the collection off
    finally:
        gc.callbacks.remove(record)
    assert collections == []
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made) in oldest and id(made[-1]) in oldest
    assert id(after) not in oldest


def test_a_callers_frozen_objects_stay_frozen() -> None:
    # gc.get_objects() lists the three generations, never the frozen (permanent) one; the count
    # of frozen objects is not compared, as frozen temporaries may be freed meanwhile
    anchor = [[0]]
    gc.freeze()
    try:
        assert id(anchor) not in {id(o) for o in gc.get_objects()}
        with collector_paused():
            made = [[i] for i in range(1000)]
        tracked = {id(o) for o in gc.get_objects()}
        assert id(anchor) not in tracked  # still frozen: nothing was unfrozen
        assert id(made) in tracked  # and what the block made was not frozen
        assert gc.get_freeze_count() > 0 and gc.isenabled()
    finally:
        gc.unfreeze()
