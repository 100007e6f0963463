"""The cyclic collector is paused while a report is built and left as it was found after."""

from __future__ import annotations

import gc

import pytest
from helpers.random_trials import campaign

from ablation.analysis import build
from ablation.analysis.collector import collector_paused
from ablation.config import CampaignConfig


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


def test_a_report_is_built_with_the_collector_paused_and_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []
    real = build._parts

    def spy(*args: object) -> object:
        seen.append(gc.isenabled())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_parts", spy)
    baseline, candidate = campaign(0, 200)
    build.compare_results(baseline, candidate, config=CampaignConfig(n_resamples=200))
    assert seen == [False]
    assert gc.isenabled()
